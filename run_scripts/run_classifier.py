r"""GLUE and XNLI fine-tuning: the original's run_classifier.py command line, in TF2.

    python -m run_scripts.run_classifier \
      --task_name=MRPC --do_train=true --do_eval=true --data_dir=$GLUE_DIR/MRPC \
      --vocab_file=$BERT_BASE_DIR/vocab.txt --bert_config_file=$BERT_BASE_DIR/bert_config.json \
      --init_checkpoint=$BERT_BASE_DIR/bert_model.ckpt --max_seq_length=128 \
      --train_batch_size=32 --learning_rate=2e-5 --num_train_epochs=3.0 \
      --output_dir=/tmp/mrpc_output/

Tasks: cola, sst-2, mrpc, sts-b (regression), qqp, mnli, mnli-mm, qnli, rte, wnli, ax, xnli
(xnli-<language> for another language); see data_prep/glue.py for the files each reads. Task tsv
is one's own classification data: --data_dir holds labels.txt and train/dev/test.tsv with a
header (sentence, label; or sentence1, sentence2, label), as data/gutenberg/authorship does.
`--tfds_data_dir` reads TensorFlow Datasets' prepared glue/* data instead of `--data_dir`.

Outputs in --output_dir: the split's TFRecords (cached: reused by the next run with the same
settings), checkpoints, eval_results.txt (after every epoch when training: the original's keys
plus the task's GLUE metrics), best/ (the checkpoint with the best GLUE score so far),
test_results.tsv (class probabilities, the original's file) and <TASK>.tsv (GLUE's submission
file). A run with only --do_predict (or --do_eval) uses the checkpoint a finished run left.

The halves: data_prep/glue.py and classifier_features.py (files -> records),
official/tasks/classification.py (model, loss, metrics, test files), and
official/training/finetuning.py (the run every fine-tuning task shares).
"""

from absl import app
from absl import flags

from data_prep import glue
from data_prep.classifier_features import ClassifierData
from official.tasks.classification import ClassificationTask
from official.training import finetuning
from run_scripts import common_flags, entry_point

flags.DEFINE_string("data_dir", None,
                    "The input data dir. Should contain the .tsv files (or other data files) "
                    "for the task.")
flags.DEFINE_string("task_name", None, "The name of the task to train.")
flags.DEFINE_string("tfds_data_dir", None,
                    "Read the task from TensorFlow Datasets' prepared glue/<task> data in this "
                    "directory instead of --data_dir (never downloads).")
common_flags.define_finetuning_flags()
flags.adopt_module_key_flags(common_flags)
FLAGS = flags.FLAGS


def task_and_data(options: finetuning.FinetuningOptions, transfer_file: str | None = None
                  ) -> tuple[ClassificationTask, ClassifierData]:
    """The task and data the flags name (run_distillation's too, with its transfer data)."""
    if FLAGS.data_dir is None and FLAGS.tfds_data_dir is None:
        raise ValueError("one of --data_dir or --tfds_data_dir is needed")
    processor = glue.get_processor(FLAGS.task_name, FLAGS.data_dir)
    task = ClassificationTask(processor.name, processor.get_labels(),
                              glue.submission_file(processor.name)
                              if processor.submission_name else None, processor.is_pair)
    data = ClassifierData(processor, FLAGS.data_dir, FLAGS.tfds_data_dir, options.max_seq_length,
                          FLAGS.vocab_file, FLAGS.do_lower_case, options.output_dir,
                          transfer_file)
    return task, data


def run() -> dict[str, dict[str, float]]:
    options = common_flags.finetuning_options()
    return finetuning.run(options, *task_and_data(options))


def main(argv: list[str]) -> None:
    del argv  # Unused.
    entry_point.run_job("run_classifier", run)


if __name__ == "__main__":
    flags.mark_flags_as_required(["task_name", "vocab_file", "bert_config_file", "output_dir"])
    app.run(main)
