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

The halves: data_prep/conll.py (files -> records), official/tasks/ner.py (model, loss, tags per
word, scores, prediction file), official/training/finetuning.py (the run every fine-tuning task
shares).
"""

import os
from typing import Any, NamedTuple

from absl import flags

from official.tasks.ner_metrics import CONLL2003_LABELS
from official.training.options import FinetuningOptions
from run_scripts import common_flags, entry_point

flags.DEFINE_string("data_dir", None, "The directory holding the CoNLL-2003 files.")
flags.DEFINE_string("train_file", "eng.train", "The training file, in --data_dir.")
flags.DEFINE_string("dev_file", "eng.testa", "The file --do_eval scores, in --data_dir.")
flags.DEFINE_string("test_file", "eng.testb", "The file --do_predict tags, in --data_dir.")
common_flags.define_finetuning_flags(max_seq_length=128)
flags.adopt_module_key_flags(common_flags)
FLAGS = flags.FLAGS


class Plan(NamedTuple):
    """What the flags say, checked."""
    options: FinetuningOptions
    adaptations: dict[str, Any]
    files: dict[str, str]


def prepare() -> Plan:
    """Every check that needs no TensorFlow (run_scripts/entry_point.py)."""
    options, adaptations = common_flags.prepare_finetuning()
    files = {split: os.path.join(FLAGS.data_dir, name) for split, name in
             (("train", FLAGS.train_file), ("dev", FLAGS.dev_file), ("test", FLAGS.test_file))}
    for split, wanted in (("train", options.do_train), ("dev", options.do_eval),
                          ("test", options.do_predict)):
        if wanted and not os.path.isfile(files[split]):
            raise ValueError(f"{files[split]}: no such file")
    return Plan(options, adaptations, files)


def job(plan: Plan) -> dict[str, dict[str, float]]:
    """The task and data the flags name, fine-tuned."""
    from data_prep import conll
    from official.tasks.ner import NerTask

    data = conll.ConllData(plan.files, CONLL2003_LABELS, plan.options.max_seq_length,
                           FLAGS.vocab_file, FLAGS.do_lower_case, plan.options.output_dir)
    return common_flags.finetune(plan.options, NerTask(CONLL2003_LABELS), data,
                                 plan.adaptations)


if __name__ == "__main__":
    entry_point.main("run_ner", prepare, job, required=["data_dir", "vocab_file", "output_dir"])
