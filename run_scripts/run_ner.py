r"""CoNLL-2003 named-entity recognition: fine-tune, evaluate (entity F1), predict.

    python -m run_scripts.run_ner \
      --data_dir=conll2003 --vocab_file=$BERT_DIR/vocab.txt --do_lower_case=False \
      --bert_config_file=$BERT_DIR/bert_config.json --init_checkpoint=$BERT_DIR/bert_model.ckpt \
      --do_train --do_eval --do_predict --max_seq_length=128 --train_batch_size=32 \
      --learning_rate=5e-5 --num_train_epochs=3 --output_dir=/tmp/ner_output

--data_dir holds eng.train (training), eng.testa (--do_eval, after every epoch) and eng.testb
(--do_predict); --train_file, --dev_file and --test_file name others. The files are read
(IOB1 tags become IOB2) and converted to TFRecords cached in output_dir (data_prep/conll.py):
a word's first piece is labelled, its other pieces weigh nothing in the loss, and a sentence
longer than a window is split between words.

Writes to output_dir: checkpoints (the best by dev entity F1 in output_dir/best when
--do_eval runs while training), eval_results.txt (dev: conlleval's precision, recall and F1,
overall and per type), test_predictions.txt ("word gold predicted" lines, conlleval's input)
and test_results.txt (the test file's scores, since CoNLL test files carry gold tags).
Rerunning a finished output_dir with only --do_predict predicts from its checkpoint.

The library halves: data_prep/conll.py (files, records, prediction file), official/tasks/ner.py
(loss, tags per word, scores), official/training/finetuning.py (training and checkpoints).
"""

import os
from typing import Sequence

from absl import app
from absl import flags
from absl import logging

from data_prep import conll
from official.modeling.models import BertTokenClassifier
from official.tasks import ner
from official.text.tokenizer import FullTokenizer
from official.training.finetuning import FinetuningOptions, FinetuningRun
from official.training.finetuning_input import record_dataset
from official.training.record_errors import naming_bad_records
from official.training.trainer import write_eval_results
from run_scripts import common_flags, entry_point

TEST_PREDICTIONS_FILE = "test_predictions.txt"
TEST_RESULTS_FILE = "test_results.txt"

flags.DEFINE_string("data_dir", None, "The directory holding the CoNLL-2003 files.")
flags.DEFINE_string("train_file", "eng.train", "The training file, in --data_dir.")
flags.DEFINE_string("dev_file", "eng.testa", "The file --do_eval scores, in --data_dir.")
flags.DEFINE_string("test_file", "eng.testb", "The file --do_predict tags, in --data_dir.")
common_flags.define_finetuning_flags(max_seq_length=128)
flags.adopt_module_key_flags(common_flags)
FLAGS = flags.FLAGS


def run(options: FinetuningOptions, data_files: dict[str, str], tokenizer: FullTokenizer,
        labels: Sequence[str] = conll.LABELS) -> dict[str, dict[str, float]]:
    """Trains, evaluates and predicts as `options` says.

    Args:
      data_files: {"train", "dev", "test": path}; only those the options use are read.
    Returns:
      {"dev": the last dev scores, "test": the test scores}, for the parts that ran.
    """
    needed = {"train": options.do_train, "dev": options.do_eval, "test": options.do_predict}
    paths = {part: data_files[part] for part, wanted in needed.items() if wanted}
    # Config, vocab, output_dir and --init_checkpoint are checked before any data is read.
    job = FinetuningRun(options, lambda encoder: BertTokenClassifier(encoder, len(labels)),
                        ner.NerTask())
    # Every file is read before anything is written, so a bad line in the test file stops the
    # run before training rather than after it. (cached_tfrecord reads a file again only when
    # its records are not cached yet.)
    sentences = {part: conll.read_conll(path, labels) for part, path in paths.items()}
    records = {part: conll.cached_tfrecord(path, options.max_seq_length, tokenizer,
                                           options.output_dir, labels)
               for part, path in paths.items()}
    for part, record_file in records.items():
        logging.info("%s: %s, %d sentences in %d windows (%s)", part, paths[part],
                     record_file.num_sentences, record_file.num_features,
                     "cached" if record_file.reused else "converted")
    spec = conll.parse_spec(options.max_seq_length)

    def predict(part: str, batch_size: int) -> tuple[dict[str, float], list[list[str]]]:
        outputs = job.predict(record_dataset(records[part].path, spec, batch_size,
                                             is_training=False),
                              keep=ner.PREDICT_FEATURES)
        return ner.evaluate(outputs, [s.tags for s in sentences[part]], labels)

    def evaluate_dev() -> dict[str, float]:
        return predict("dev", options.eval_batch_size)[0]

    results = {}
    with naming_bad_records([r.path for r in records.values()]):
        if options.do_train:
            def train_dataset(context, batch_size, start_step):
                return record_dataset(records["train"].path, spec, batch_size, is_training=True,
                                      seed=options.seed + start_step, input_context=context)

            dev = job.train(train_dataset, records["train"].num_features, paths["train"],
                            evaluate_dev if options.do_eval else None,
                            metric="f1" if options.do_eval else None)
            if dev is not None:
                results["dev"] = dev
        elif options.do_eval:
            job.restore()
            results["dev"] = job.evaluate(evaluate_dev)

        if options.do_predict:
            job.restore()
            scores, tags = predict("test", options.predict_batch_size)
            if job.is_chief:
                conll.write_predictions(sentences["test"], tags,
                                        os.path.join(options.output_dir, TEST_PREDICTIONS_FILE))
                write_eval_results(os.path.join(options.output_dir, TEST_RESULTS_FILE), scores,
                                   job.step)
            logging.info("test %s: precision %.4f  recall %.4f  f1 %.4f", paths["test"],
                         scores["precision"], scores["recall"], scores["f1"])
            results["test"] = scores
    return results


def main(argv: list[str]) -> None:
    del argv  # Unused.
    data_files = {part: os.path.join(FLAGS.data_dir, name) for part, name in
                  (("train", FLAGS.train_file), ("dev", FLAGS.dev_file),
                   ("test", FLAGS.test_file))}
    entry_point.run_job("run_ner", lambda: run(
        common_flags.finetuning_options(), data_files,
        FullTokenizer(FLAGS.vocab_file, FLAGS.do_lower_case)))


if __name__ == "__main__":
    flags.mark_flags_as_required(["data_dir", "vocab_file", "bert_config_file", "output_dir"])
    app.run(main)
