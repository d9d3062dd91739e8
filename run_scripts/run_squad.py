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
import json
import os

from absl import app
from absl import flags
from absl import logging

from data_prep import squad as squad_data
from official.modeling.models import BertSpanLabeler
from official.tasks import squad, squad_decoding
from official.tasks.squad_settings import SquadSettings
from official.text.tokenizer import FullTokenizer
from official.training.finetuning import FinetuningOptions, FinetuningRun
from official.training.finetuning_input import record_dataset
from official.training.record_errors import naming_bad_records
from official.training.trainer import write_eval_results
from run_scripts import common_flags, entry_point

PREDICT_RESULTS_FILE = "predict_results.txt"


@dataclasses.dataclass(frozen=True)
class SquadOptions:
    """The flags of run_squad beyond the shared fine-tuning ones (the original's defaults)."""

    vocab_file: str
    train_file: str | None = None
    predict_file: str | None = None
    do_lower_case: bool = True
    # Those that shape features and decoding: SquadSettings' (official/tasks/squad_settings.py).
    doc_stride: int = SquadSettings.doc_stride
    max_query_length: int = SquadSettings.max_query_length
    n_best_size: int = SquadSettings.n_best_size
    max_answer_length: int = SquadSettings.max_answer_length
    version_2_with_negative: bool = SquadSettings.version_2_with_negative
    null_score_diff_threshold: float = SquadSettings.null_score_diff_threshold

    def settings(self, max_seq_length: int) -> SquadSettings:
        """Those settings with `max_seq_length`, checked (`SquadSettings.validate`)."""
        return SquadSettings(
            max_seq_length=max_seq_length, doc_stride=self.doc_stride,
            max_query_length=self.max_query_length, n_best_size=self.n_best_size,
            max_answer_length=self.max_answer_length,
            version_2_with_negative=self.version_2_with_negative,
            null_score_diff_threshold=self.null_score_diff_threshold)


flags.DEFINE_string("train_file", None, "SQuAD json for training. E.g., train-v1.1.json")
flags.DEFINE_string(
    "predict_file", None,
    "SQuAD json for predictions. E.g., dev-v1.1.json or test-v1.1.json (also the evaluation "
    "data of --do_eval, which needs its answers).")
flags.DEFINE_bool(
    "verbose_logging", False,
    "If true, all of the warnings related to data processing will be printed." +
    common_flags.IGNORED_HELP + " The data warnings (skipped questions) are always logged.")
common_flags.define_squad_flags()
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
    squad_options.settings(options.max_seq_length)  # raises for a bad setting


def run(options: FinetuningOptions, squad_options: SquadOptions) -> dict[str, float]:
    """Trains, evaluates and predicts as the options say; returns the last figures (the
    prediction's EM / F1 when it has answers, else the last evaluation's)."""
    check_options(options, squad_options)
    s = squad_options
    v2 = s.version_2_with_negative
    # Config, vocab, output_dir and --init_checkpoint are checked before any data is read.
    job = FinetuningRun(options, BertSpanLabeler, squad.SquadTask())
    tokenizer = FullTokenizer(s.vocab_file, s.do_lower_case)
    convert_settings = dict(max_seq_length=options.max_seq_length, doc_stride=s.doc_stride,
                            max_query_length=s.max_query_length)

    # Every input is read and checked before output_dir is touched.
    train_examples = None
    if options.do_train:
        train_examples = squad_data.read_squad_examples(s.train_file, True, v2)
        if not train_examples:
            raise ValueError(f"{s.train_file}: no question to train on")
        # The original counts training steps in questions, not in windows (features).
        job.check_train_size(len(train_examples), s.train_file)
    if options.do_eval or options.do_predict:
        predict_examples = squad_data.read_squad_examples(s.predict_file, False, v2)
        with open(s.predict_file, encoding="utf-8") as f:
            gold = json.load(f)
        try:
            squad.check_answers(gold, s.predict_file, v2)
            labelled = True
        except ValueError:
            if options.do_eval:
                raise
            labelled = False
        predict_features = list(squad_data.convert_examples_to_features(
            predict_examples, tokenizer, is_training=False, **convert_settings))

    def records(path, examples, is_training, features=None) -> squad_data.RecordFile:
        made = squad_data.cached_tfrecord(
            path, examples, tokenizer, options.output_dir, is_training=is_training,
            version_2_with_negative=v2, features=features, **convert_settings)
        logging.info("%s: %d questions, %d features (%s)", path, made.num_examples,
                     made.num_features, "cached records reused" if made.reused else
                     f"records written to {made.path}")
        return made

    def predict(batch_size: int) -> squad_decoding.SquadPredictions:
        dataset = record_dataset(predict_records.path, squad_data.parse_spec(
            options.max_seq_length, is_training=False), batch_size, is_training=False)
        outputs = job.predict(dataset, keep=("unique_ids",))
        return squad_decoding.decode_predictions(
            predict_examples, predict_features, squad.raw_results(outputs),
            n_best_size=s.n_best_size, max_answer_length=s.max_answer_length,
            do_lower_case=s.do_lower_case, version_2_with_negative=v2,
            null_score_diff_threshold=s.null_score_diff_threshold)

    def evaluate() -> dict[str, float]:
        return squad.evaluate(gold, predict(options.eval_batch_size), s.null_score_diff_threshold)

    record_files = []
    if options.do_eval or options.do_predict:
        predict_records = records(s.predict_file, predict_examples, False, predict_features)
        record_files.append(predict_records.path)
    if options.do_train:
        train_records = records(s.train_file, train_examples, True)
        record_files.append(train_records.path)
    metrics: dict[str, float] = {}
    with naming_bad_records(record_files):
        if options.do_train:
            spec = squad_data.parse_spec(options.max_seq_length, is_training=True)

            def dataset_fn(context, batch_size, start_step):
                return record_dataset(train_records.path, spec, batch_size, is_training=True,
                                      seed=options.seed + start_step, input_context=context)

            metrics = job.train(dataset_fn, len(train_examples), s.train_file,
                                evaluate if options.do_eval else None, squad.BEST_METRIC) or {}
        if options.do_eval and not options.do_train:
            job.restore()
            metrics = job.evaluate(evaluate)
        if options.do_predict:
            job.restore()
            predictions = predict(options.predict_batch_size)
            if labelled:
                metrics = squad.evaluate(gold, predictions, s.null_score_diff_threshold)
            if job.is_chief:  # under multi_worker_mirrored every worker predicts; one writes
                for path in squad_decoding.write_prediction_files(predictions,
                                                                  options.output_dir):
                    logging.info("Wrote %s", path)
                if labelled:
                    write_eval_results(os.path.join(options.output_dir, PREDICT_RESULTS_FILE),
                                       metrics, job.step)
                    logging.info("%s: %s", s.predict_file,
                                 "  ".join(f"{k} {v:.4f}" for k, v in metrics.items()))
                    print(json.dumps(metrics), flush=True)
    return metrics


def squad_options_from_flags() -> SquadOptions:
    return SquadOptions(
        vocab_file=FLAGS.vocab_file, train_file=FLAGS.train_file,
        predict_file=FLAGS.predict_file, do_lower_case=FLAGS.do_lower_case,
        **common_flags.squad_flag_values())


def main(argv: list[str]) -> None:
    del argv  # Unused.
    entry_point.run_job(
        "run_squad", lambda: run(common_flags.finetuning_options(), squad_options_from_flags()))


if __name__ == "__main__":
    flags.mark_flags_as_required(["vocab_file", "bert_config_file", "output_dir"])
    app.run(main)
