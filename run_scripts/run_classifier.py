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
"""

import os

from absl import app
from absl import flags
from absl import logging

from data_prep import classifier_features, glue
from official.modeling.models import BertClassifier
from official.tasks import classification, glue_metrics
from official.text.tokenizer import FullTokenizer
from official.training.finetuning import FinetuningOptions, FinetuningRun
from official.training.finetuning_input import record_dataset
from official.training.record_errors import naming_bad_records
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

TEST_RESULTS_FILE = "test_results.tsv"


def run(options: FinetuningOptions, task_name: str, data_dir: str | None,
        tfds_data_dir: str | None, vocab_file: str, do_lower_case: bool) -> dict[str, float]:
    """Trains, evaluates and predicts as the options say; returns the last eval metrics."""
    if data_dir is None and tfds_data_dir is None:
        raise ValueError("one of --data_dir or --tfds_data_dir is needed")
    processor = glue.get_processor(task_name, data_dir)
    labels = processor.get_labels()
    num_labels = 1 if labels is None else len(labels)
    # Config, vocab, output_dir and --init_checkpoint are checked before any data is read.
    job = FinetuningRun(options, lambda encoder: BertClassifier(encoder, num_labels),
                        classification.ClassificationTask(num_labels))
    tokenizer = FullTokenizer(vocab_file, do_lower_case)
    spec = classifier_features.parse_spec(options.max_seq_length, regression=labels is None)

    # Every split is read and checked before any record is written.
    wanted = [split for split, asked in (("train", options.do_train), ("dev", options.do_eval),
                                         ("test", options.do_predict)) if asked]
    examples = {split: classifier_features.read_split(processor, data_dir, split, tfds_data_dir)
                for split in wanted}
    train_source = (processor.path(data_dir, "train") if tfds_data_dir is None
                    else f"{tfds_data_dir} (glue/{processor.name} train)")
    if options.do_train:
        job.check_train_size(len(examples["train"]), train_source)

    def records(split: str) -> classifier_features.RecordFile:
        made = classifier_features.cached_tfrecord(
            processor, data_dir, split, options.max_seq_length, tokenizer, options.output_dir,
            tfds_data_dir=tfds_data_dir, examples=examples[split])
        logging.info("%s %s: %d examples (%s)", processor.name, split, made.num_examples,
                     "cached records reused" if made.reused else "records written")
        return made

    made = {split: records(split) for split in wanted}
    train, dev, test = (made.get(split) for split in ("train", "dev", "test"))

    def predict(records: classifier_features.RecordFile, batch_size: int) -> dict:
        dataset = record_dataset(records.path, spec, batch_size, is_training=False)
        return job.predict(dataset, keep=("label_ids", "is_real_example"))

    def evaluate() -> dict[str, float]:
        outputs = predict(dev, options.eval_batch_size)
        return classification.evaluation_metrics(processor.name, outputs["logits"],
                                                 outputs["label_ids"], outputs["is_real_example"])

    metrics = {}
    with naming_bad_records([r.path for r in made.values()]):
        if options.do_train:
            def dataset_fn(context, batch_size, start_step):
                return record_dataset(train.path, spec, batch_size, is_training=True,
                                      seed=options.seed + start_step, input_context=context)
            metrics = job.train(dataset_fn, train.num_examples, train_source,
                                evaluate if options.do_eval else None,
                                "eval_" + glue_metrics.score_metric(processor.name)) or {}
        if options.do_eval and not options.do_train:
            job.restore()
            metrics = job.evaluate(evaluate)
        if options.do_predict:
            job.restore()
            logits = predict(test, options.predict_batch_size)["logits"]
            if job.is_chief:
                write_test_outputs(processor, logits, options.output_dir)
    return metrics


def write_test_outputs(processor: glue.TaskProcessor, logits, output_dir: str) -> None:
    """test_results.tsv (the original's probabilities) and, for a GLUE task, its submission
    file (label strings, or scores for regression)."""
    classification.write_test_results(os.path.join(output_dir, TEST_RESULTS_FILE), logits)
    if processor.submission_name is None:
        return
    labels = processor.get_labels()
    predicted = ([str(float(score)) for score in logits[:, 0]] if labels is None
                 else [labels[i] for i in logits.argmax(axis=-1)])
    path = os.path.join(output_dir, glue.submission_file(processor.name))
    classification.write_submission(path, predicted)
    logging.info("Wrote %d test predictions to %s", len(predicted), path)


def main(argv: list[str]) -> None:
    del argv  # Unused.
    entry_point.run_job("run_classifier", lambda: run(
        common_flags.finetuning_options(), FLAGS.task_name, FLAGS.data_dir, FLAGS.tfds_data_dir,
        FLAGS.vocab_file, FLAGS.do_lower_case))


if __name__ == "__main__":
    flags.mark_flags_as_required(["task_name", "vocab_file", "bert_config_file", "output_dir"])
    app.run(main)
