r"""SQuAD v1.1 and v2.0 fine-tuning: the original's run_squad.py command line, in TF2.

    python -m run_scripts.run_squad \
      --vocab_file=$BERT_BASE_DIR/vocab.txt --bert_config_file=$BERT_BASE_DIR/bert_config.json \
      --init_checkpoint=$BERT_BASE_DIR/bert_model.ckpt --do_train=True \
      --train_file=$SQUAD_DIR/train-v1.1.json --do_predict=True \
      --predict_file=$SQUAD_DIR/dev-v1.1.json --train_batch_size=12 --learning_rate=3e-5 \
      --num_train_epochs=2.0 --max_seq_length=384 --doc_stride=128 --output_dir=/tmp/squad_base/

SQuAD 2.0: add --version_2_with_negative=True (and --null_score_diff_threshold, chosen on dev:
the best_f1_thresh this script reports).

Outputs in --output_dir: the TFRecords of each JSON file (cached: reused by the next run with the
same settings), checkpoints, predictions.json, nbest_predictions.json and, for 2.0,
null_odds.json (the original's files). When --predict_file has gold answers, --do_predict also
scores its predictions with the official evaluation (EM and F1; for 2.0 the HasAns / NoAns
breakdown and the best threshold): printed as JSON on stdout, as the official scripts print it,
and written to predict_results.txt. --do_eval evaluates on --predict_file after every training
epoch (eval_results.txt) and keeps the best checkpoint by F1 in output_dir/best/, which
--do_predict then uses. A run with only --do_predict uses the checkpoint a finished run left.

Every input is read and checked before anything is written: a missing file, a file that is not
SQuAD JSON, a training answer outside its context stop the run with a one-line error naming the
file. A training answer whose text is not at its answer_start is skipped with a warning, as the
original skips it (SQuAD's own train set has a few).
"""

from __future__ import annotations

import dataclasses
import os

from absl import app
from absl import flags

from data_prep.squad import SquadData
from official.export.squad import SquadSettings
from official.tasks.squad import SquadTask
from official.training import finetuning
from official.training.finetuning import FinetuningOptions
from run_scripts import common_flags, entry_point


@dataclasses.dataclass(frozen=True)
class SquadOptions:
    """The flags of run_squad beyond the shared fine-tuning ones (the original's defaults)."""

    vocab_file: str
    train_file: str | None = None
    predict_file: str | None = None
    do_lower_case: bool = True
    # Those that shape features and decoding: the export's (official/export/squad.py) defaults.
    doc_stride: int = SquadSettings.doc_stride
    max_query_length: int = SquadSettings.max_query_length
    n_best_size: int = SquadSettings.n_best_size
    max_answer_length: int = SquadSettings.max_answer_length
    version_2_with_negative: bool = SquadSettings.version_2_with_negative
    null_score_diff_threshold: float = SquadSettings.null_score_diff_threshold


_D = SquadOptions
flags.DEFINE_string("train_file", None, "SQuAD json for training. E.g., train-v1.1.json")
flags.DEFINE_string(
    "predict_file", None,
    "SQuAD json for predictions. E.g., dev-v1.1.json or test-v1.1.json (also the evaluation "
    "data of --do_eval, which needs its answers).")
flags.DEFINE_integer(
    "doc_stride", _D.doc_stride,
    "When splitting up a long document into chunks, how much stride to take between chunks.")
flags.DEFINE_integer(
    "max_query_length", _D.max_query_length,
    "The maximum number of tokens for the question. Questions longer than this will be "
    "truncated to this length.")
flags.DEFINE_integer(
    "n_best_size", _D.n_best_size,
    "The total number of n-best predictions to generate in the nbest_predictions.json output "
    "file.")
flags.DEFINE_integer(
    "max_answer_length", _D.max_answer_length,
    "The maximum length of an answer that can be generated. This is needed because the start "
    "and end predictions are not conditioned on one another.")
flags.DEFINE_bool(
    "verbose_logging", False,
    "If true, all of the warnings related to data processing will be printed." +
    common_flags.IGNORED_HELP + " The data warnings (skipped questions) are always logged.")
flags.DEFINE_bool(
    "version_2_with_negative", _D.version_2_with_negative,
    "If true, the SQuAD examples contain some that do not have an answer.")
flags.DEFINE_float(
    "null_score_diff_threshold", _D.null_score_diff_threshold,
    "If null_score - best_non_null is greater than the threshold predict null.")
common_flags.define_finetuning_flags(max_seq_length=384)
flags.adopt_module_key_flags(common_flags)
FLAGS = flags.FLAGS


def check_options(options: FinetuningOptions, squad_options: SquadOptions) -> None:
    """The original's validate_flags_or_throw, as one-line ValueErrors."""
    if options.do_train and not squad_options.train_file:
        raise ValueError("--do_train needs --train_file")
    if (options.do_eval or options.do_predict) and not squad_options.predict_file:
        raise ValueError("--do_eval and --do_predict need --predict_file")
    for path in (squad_options.train_file if options.do_train else None,
                 squad_options.predict_file if options.do_eval or options.do_predict else None):
        if path and not os.path.isfile(path):
            raise ValueError(f"{path}: no such file")
    if options.max_seq_length <= squad_options.max_query_length + 3:
        raise ValueError(f"max_seq_length ({options.max_seq_length}) must be greater than "
                         f"max_query_length ({squad_options.max_query_length}) + 3")
    for name in ("doc_stride", "n_best_size", "max_answer_length"):
        if getattr(squad_options, name) < 1:
            raise ValueError(f"{name} must be at least 1, got {getattr(squad_options, name)}")


def run() -> dict[str, dict[str, float]]:
    options, s = common_flags.finetuning_options(), squad_options_from_flags()
    check_options(options, s)
    settings = SquadSettings(max_seq_length=options.max_seq_length, doc_stride=s.doc_stride,
                             max_query_length=s.max_query_length, n_best_size=s.n_best_size,
                             max_answer_length=s.max_answer_length,
                             version_2_with_negative=s.version_2_with_negative,
                             null_score_diff_threshold=s.null_score_diff_threshold)
    data = SquadData(s.train_file, s.predict_file, settings, s.vocab_file, s.do_lower_case,
                     options.output_dir)
    return finetuning.run(options, SquadTask(settings, s.do_lower_case), data)


def squad_options_from_flags() -> SquadOptions:
    return SquadOptions(
        vocab_file=FLAGS.vocab_file, train_file=FLAGS.train_file,
        predict_file=FLAGS.predict_file, do_lower_case=FLAGS.do_lower_case,
        doc_stride=FLAGS.doc_stride, max_query_length=FLAGS.max_query_length,
        n_best_size=FLAGS.n_best_size, max_answer_length=FLAGS.max_answer_length,
        version_2_with_negative=FLAGS.version_2_with_negative,
        null_score_diff_threshold=FLAGS.null_score_diff_threshold)


def main(argv: list[str]) -> None:
    del argv  # Unused.
    entry_point.run_job("run_squad", run)


if __name__ == "__main__":
    flags.mark_flags_as_required(["vocab_file", "bert_config_file", "output_dir"])
    app.run(main)
