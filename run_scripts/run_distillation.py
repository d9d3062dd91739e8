r"""Knowledge distillation: a smaller, faster student taught by a fine-tuned teacher.

    # A 3-layer student made of the teacher's layers 0, 2 and 4 (DistilBERT's initialisation),
    # trained on the teacher's soft targets and SST-2's labels, plus unlabelled sentences the
    # teacher labels (Turc et al. 2019):
    python -m run_scripts.run_distillation --task=classifier \
      --task_name=SST-2 --data_dir=$GLUE_DIR/SST-2 --vocab_file=$BERT_DIR/vocab.txt \
      --teacher_checkpoint=/tmp/sst2_teacher --student_layers=0,2,4 \
      --transfer_data=unlabelled_sentences.txt \
      --do_train --do_eval --num_train_epochs=3 --output_dir=/tmp/sst2_student

    # A student of its own size, initialised from a pretrained compact BERT, with the hidden
    # states matched through a learned projection (TinyBERT):
    python -m run_scripts.run_distillation --task=squad --train_file=... --predict_file=... \
      --teacher_checkpoint=/tmp/squad_teacher --student_bert_config_file=small/bert_config.json \
      --init_checkpoint=small/bert_model.ckpt --alpha_hidden=1 ...

    # General distillation (DistilBERT's losses) on pretraining TFRecords, from a teacher with
    # a masked-LM head (run_pretraining's output_dir, the original's bert_model.ckpt):
    python -m run_scripts.run_distillation --objective=pretraining \
      --input_file='records/*.tfrecord' --teacher_checkpoint=$BERT_DIR \
      --student_layers=0,2,4,6,8,10 --alpha_ce=5 --alpha_mlm=2 --alpha_cos=1 --do_train \
      --num_train_steps=100000 --max_predictions_per_seq=20 --output_dir=/tmp/distilled_bert

--task picks the fine-tuning whose data flags this run takes: classifier (run_classifier's
--task_name, --data_dir, --tfds_data_dir), squad (run_squad's), ner (run_ner's);
--objective=pretraining takes run_pretraining's flags instead. Every other flag means what it
means there (schedule, strategy, dtype, --jit_compile, seed). The losses and the student:
official/distillation/settings.py.

--output_dir is a fine-tuning output_dir of the student: best/ by the task's metric,
eval_results.txt, TensorBoard, resumable after a kill (the teacher is reloaded), and accepted as
it is by export_saved_model, convert_checkpoint and run_classifier / run_squad / run_ner
--do_predict; after --objective=pretraining, a pretraining output_dir, an --init_checkpoint for
any fine-tuning. Its bert_config.json is the student's.
"""

import dataclasses
import sys

from absl import app
from absl import flags

from official.distillation.model import teacher_config
from official.distillation.settings import DistillationSettings
from official.distillation.task import DistillationTask
from official.training import finetuning
from official.training import pretraining as pretraining_job
from run_scripts import common_flags, entry_point

# The entry point whose data flags each --task value (and --objective=pretraining) takes.
TASKS = {"classifier": "run_scripts.run_classifier", "squad": "run_scripts.run_squad",
         "ner": "run_scripts.run_ner"}
PRETRAINING = "run_scripts.run_pretraining"


def _flag_in(argv: list[str], name: str, default: str) -> str:
    """A flag's value on the command line, read before the flags are defined: --task and
    --objective say which module defines the data flags the rest of the command line uses."""
    for i, arg in enumerate(argv):
        if arg.startswith(f"--{name}="):
            return arg.split("=", 1)[1]
        if arg == f"--{name}" and i + 1 < len(argv):
            return argv[i + 1]
    return default


_TASK = _flag_in(sys.argv[1:], "task", "classifier")
_OBJECTIVE = _flag_in(sys.argv[1:], "objective", "finetuning")
data_module = __import__(PRETRAINING if _OBJECTIVE == "pretraining"
                         else TASKS.get(_TASK, TASKS["classifier"]), fromlist=["FLAGS"])

flags.DEFINE_enum("objective", "finetuning", ["finetuning", "pretraining"],
                  "finetuning: task-specific distillation (--task's data); pretraining: general "
                  "distillation on pretraining TFRecords (run_pretraining's flags), DistilBERT's "
                  "losses (--alpha_ce, --alpha_mlm, --alpha_cos).")
flags.DEFINE_enum("task", "classifier", list(TASKS),
                  "The fine-tuning whose data flags this run takes: classifier (run_classifier), "
                  "squad (run_squad) or ner (run_ner).")
flags.DEFINE_string("teacher_checkpoint", None,
                    "The fine-tuned teacher: a fine-tuning output_dir of this task (its best/ "
                    "when kept), or a checkpoint in one.")
flags.DEFINE_string("student_bert_config_file", None,
                    "The student's bert_config.json (any size; the teacher's vocabulary). It "
                    "starts from --init_checkpoint, or at random.")
flags.DEFINE_string("student_layers", None,
                    "Instead: the student is these teacher layers (e.g. 0,2,4), with the "
                    "teacher's embeddings, pooler and head.")
flags.DEFINE_float("temperature", DistillationSettings.temperature,
                   "The softmax temperature of the soft targets.")
flags.DEFINE_float("alpha_soft", DistillationSettings.alpha_soft,
                   "Weight of the soft loss: cross-entropy against the teacher's probabilities "
                   "at --temperature, times its square (squared error to its score for "
                   "regression).")
flags.DEFINE_float("alpha_hard", DistillationSettings.alpha_hard,
                   "Weight of the task's own loss on the labels.")
flags.DEFINE_float("alpha_hidden", DistillationSettings.alpha_hidden,
                   "Weight of the MSE between student layers and their teacher layers (real "
                   "tokens; a learned projection when the widths differ).")
flags.DEFINE_float("alpha_attention", DistillationSettings.alpha_attention,
                   "Weight of the KL divergence between teacher and student attention of "
                   "mapped layers (real tokens; the same number of heads).")
flags.DEFINE_float("alpha_cos", DistillationSettings.alpha_cosine,
                   "Weight of 1 - the cosine of the student's and teacher's last layers per "
                   "real token (DistilBERT; a learned projection when the widths differ).")
flags.DEFINE_float("alpha_ce", 5.0,
                   "--objective=pretraining: the weight of the soft masked-LM targets "
                   "(DistilBERT's default).")
flags.DEFINE_float("alpha_mlm", 2.0,
                   "--objective=pretraining: the weight of the masked-LM loss on the data's "
                   "labels (DistilBERT's default).")
flags.DEFINE_string("transfer_data", None,
                    "--task=classifier: unlabelled texts the teacher labels, one per line (a "
                    "pair task's two texts separated by a tab), trained on beside the labelled "
                    "data.")
FLAGS = flags.FLAGS


def run() -> dict[str, dict[str, float]]:
    if FLAGS.bert_config_file:
        raise ValueError("--bert_config_file: a distillation's model is the student; give "
                         "--student_bert_config_file, or --student_layers (the teacher's "
                         "config is read from --teacher_checkpoint)")
    pretraining = FLAGS.objective == "pretraining"
    names = ("alpha_ce", "alpha_mlm") if pretraining else ("alpha_soft", "alpha_hard")
    other = [f"--{name}" for name in ("alpha_soft", "alpha_hard", "alpha_ce", "alpha_mlm")
             if name not in names and FLAGS[name].present]
    if other:
        raise ValueError(f"{', '.join(other)}: not a weight of --objective={FLAGS.objective}, "
                         f"whose soft and hard weights are --{names[0]} and --{names[1]}")
    soft, hard = (FLAGS[name].value for name in names)
    settings = DistillationSettings.from_flags(
        FLAGS.teacher_checkpoint, FLAGS.student_layers, temperature=FLAGS.temperature,
        alpha_soft=soft, alpha_hard=hard, alpha_hidden=FLAGS.alpha_hidden,
        alpha_attention=FLAGS.alpha_attention, alpha_cosine=FLAGS.alpha_cos)
    if (FLAGS.student_bert_config_file is None) == (settings.student_layers is None):
        raise ValueError("give one of --student_bert_config_file or --student_layers: the "
                         "student's size")
    if settings.student_layers is not None and FLAGS.init_checkpoint:
        raise ValueError("--init_checkpoint with --student_layers: the student's weights "
                         "are the teacher's layers")
    if FLAGS.transfer_data and (pretraining or FLAGS.task != "classifier"):
        raise ValueError("--transfer_data is for --task=classifier's fine-tuning distillation")
    teacher_file, teacher = teacher_config(settings.teacher_checkpoint, pretraining)
    config_file = FLAGS.student_bert_config_file or teacher_file
    config = None if settings.student_layers is None else settings.student_config(teacher)
    if pretraining:
        options = dataclasses.replace(data_module.options_from_flags(),
                                      bert_config_file=config_file)
        return pretraining_job.run(options, lambda task: DistillationTask(task, settings),
                                   config)
    if not FLAGS.vocab_file:
        raise ValueError("--vocab_file is needed: the tokenizer of the task's data")
    options = common_flags.finetuning_options(bert_config_file=config_file)
    if options.peft is not None:
        raise ValueError("--adapter_size and --lora_rank do not combine with distillation: "
                         "the student trains whole")
    extra = {"transfer_file": FLAGS.transfer_data} if FLAGS.task == "classifier" else {}
    task, data = data_module.task_and_data(options, **extra)
    return finetuning.run(options, DistillationTask(task, settings), data, config=config)


def main(argv: list[str]) -> None:
    del argv  # Unused.
    if (FLAGS.task, FLAGS.objective) != (_TASK, _OBJECTIVE):  # given twice
        raise app.UsageError("give --task and --objective once each")
    entry_point.run_job("run_distillation", run)


if __name__ == "__main__":
    flags.mark_flags_as_required(["output_dir", "teacher_checkpoint"])
    app.run(main)
