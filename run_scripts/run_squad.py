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

import os
from typing import Any, NamedTuple

from absl import flags

from official import command_line
from official.tasks.squad_settings import SquadSettings
from official.training.options import FinetuningOptions
from run_scripts import common_flags

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


def check_files(options: FinetuningOptions) -> None:
    """The original's validate_flags_or_throw for the files, as one-line ValueErrors (the
    settings are checked by SquadSettings)."""
    if options.do_train and not FLAGS.train_file:
        raise ValueError("--do_train needs --train_file")
    if (options.do_eval or options.do_predict) and not FLAGS.predict_file:
        raise ValueError("--do_eval and --do_predict need --predict_file")
    for path in (FLAGS.train_file if options.do_train else None,
                 FLAGS.predict_file if options.do_eval or options.do_predict else None):
        if path and not os.path.isfile(path):
            raise ValueError(f"{path}: no such file")


class Plan(NamedTuple):
    """What the flags say, checked."""
    options: FinetuningOptions
    adaptations: dict[str, Any]
    settings: SquadSettings


def prepare() -> Plan:
    """Every check that needs no TensorFlow (official/command_line.py)."""
    options, adaptations = common_flags.prepare_finetuning()
    check_files(options)
    common_flags.check_adaptation_checkpoints(adaptations)
    return Plan(options, adaptations,
                common_flags.squad_settings_from_flags(options.max_seq_length))


def job(plan: Plan) -> dict[str, dict[str, float]]:
    """The task and data the flags name, fine-tuned."""
    from data_prep.squad import SquadData
    from official.tasks.squad import SquadTask

    data = SquadData(FLAGS.train_file, FLAGS.predict_file, plan.settings, FLAGS.vocab_file,
                     FLAGS.do_lower_case, plan.options.output_dir)
    return common_flags.finetune(plan.options, SquadTask(plan.settings, FLAGS.do_lower_case),
                                 data, plan.adaptations)


if __name__ == "__main__":
    command_line.main("run_squad", prepare, job, required=["vocab_file", "output_dir"])
