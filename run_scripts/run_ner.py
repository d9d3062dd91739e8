r"""Token classification: CoNLL-2003 named entities (entity F1) or a Universal Dependencies
treebank's parts of speech (accuracy): fine-tune, evaluate, predict.

    python -m run_scripts.run_ner \
      --data_dir=conll2003 --vocab_file=$BERT_DIR/vocab.txt --do_lower_case=False \
      --bert_config_file=$BERT_DIR/bert_config.json --init_checkpoint=$BERT_DIR/bert_model.ckpt \
      --do_train --do_eval --do_predict --max_seq_length=128 --train_batch_size=32 \
      --learning_rate=5e-5 --num_train_epochs=3 --output_dir=/tmp/ner_output

--data_dir holds eng.train (training), eng.testa (--do_eval, after every epoch) and eng.testb
(--do_predict); --train_file, --dev_file and --test_file name others.

--data_format=conllu tags words with their universal part of speech (UD's 17 UPOS tags) from
CoNLL-U files of any language (--train_file, --dev_file, --test_file name them in --data_dir):
each syntactic word is a word (a multiword token's surface form, "don't" over "do" and "n't",
is skipped; data_prep/conllu.py), and the scores are the accuracy over words, best/ kept by it:

    python -m run_scripts.run_ner --data_format=conllu --data_dir=ud_english_ewt \
      --train_file=en_ewt-ud-train.conllu --dev_file=en_ewt-ud-dev.conllu \
      --test_file=en_ewt-ud-test.conllu --vocab_file=... --init_checkpoint=... \
      --do_train --do_eval --output_dir=/tmp/upos

--data_format=panx tags persons, organisations and locations (IOB2, scored by entity F1) in
WikiANN as XTREME gives it (PAN-X): a folder per language holding train, dev and test (its
<lang>.tar.gz unpacked; other names by --train_file, ...), "<lang>:<word><TAB><tag>" lines
whose language prefix is dropped. With mBERT (multi_cased_L-12_H-768_A-12, cased):

    python -m run_scripts.run_ner --data_format=panx --data_dir=panx/de \
      --vocab_file=$MBERT_DIR/vocab.txt --do_lower_case=False \
      --init_checkpoint=$MBERT_DIR/bert_model.ckpt --do_train --do_eval --do_predict \
      --output_dir=/tmp/panx_de

The files are read (IOB1 tags become IOB2) and converted to TFRecords cached in output_dir
(data_prep/conll.py): a word's first piece is labelled, its other pieces weigh nothing in the
loss, and a sentence longer than a window is split between words.

Writes to output_dir: checkpoints (the best by dev entity F1 in output_dir/best when
--do_eval runs while training), eval_results.txt (dev: conlleval's precision, recall and F1,
overall and per type), test_predictions.txt ("word gold predicted" lines, conlleval's input)
and test_results.txt (the test file's scores, since CoNLL test files carry gold tags).
Rerunning a finished output_dir with only --do_predict predicts from its checkpoint (a
feature-based run's setting and base read from its record).

--feature_based=concat_last_4 (or weighted_sum_last_4, weighted_sum_all, second_to_last, last,
embeddings) is the BERT paper's feature-based approach (its Table 7): the encoder frozen
(--freeze_encoder, official/peft/frozen.py), the layers named fed to a two-layer BiLSTM of
--feature_lstm_units per direction (default 768, the paper's; fewer on a CPU) and a tag
classifier (official/modeling/feature_tagger.py). Its output_dir is a parameter-efficient run's:
checkpoints of the head alone, and peft_config.json naming the base (--init_checkpoint) and the
setting; a rerun with another setting is refused, and an export serves encoder and head.
bench/feature_based_ner.py compares the choices with fine-tuning.

The halves: data_prep/conll.py (files -> records), official/tasks/ner.py (model, loss, tags per
word, scores, prediction file; official/tasks/ner_settings.py the feature-based setting),
official/training/finetuning.py (the run every fine-tuning task shares).
"""

import os
from typing import Any, NamedTuple

from absl import flags

from official import command_line
from official.configs import BertConfig
from official.modeling.feature_layers import CHOICES
from official.peft import methods as peft_methods
from official.tasks.ner_metrics import CONLL2003_LABELS, PANX_LABELS, UPOS_LABELS
from official.tasks.ner_settings import DEFAULT_LSTM_UNITS, FeatureBasedSettings
from official.training.options import FinetuningOptions
from run_scripts import common_flags

# Each --data_format's tag set, scheme (official/tasks/ner.py) and default files.
FORMATS = {"conll2003": (CONLL2003_LABELS, "entities"), "conllu": (UPOS_LABELS, "tags"),
           "panx": (PANX_LABELS, "entities")}
DEFAULT_FILES = {"conll2003": {"train": "eng.train", "dev": "eng.testa", "test": "eng.testb"},
                 "conllu": {}, "panx": {"train": "train", "dev": "dev", "test": "test"}}

flags.DEFINE_string("data_dir", None, "The directory holding the data files.")
flags.DEFINE_enum("data_format", "conll2003", list(FORMATS),
                  "conll2003: CoNLL-2003's four columns, IOB entity tags, scored by entity F1. "
                  "conllu: a Universal Dependencies treebank, each word tagged with its "
                  "universal part of speech, scored by accuracy. panx: WikiANN as XTREME's "
                  "PAN-X gives it, '<lang>:<word><TAB><tag>' lines, IOB2 PER/ORG/LOC tags, "
                  "scored by entity F1 (default files: train, dev, test).")
flags.DEFINE_string("train_file", None, "The training file, in --data_dir (conll2003's "
                    "default: eng.train).")
flags.DEFINE_string("dev_file", None, "The file --do_eval scores, in --data_dir (conll2003's "
                    "default: eng.testa).")
flags.DEFINE_string("test_file", None, "The file --do_predict tags, in --data_dir "
                    "(conll2003's default: eng.testb).")
flags.DEFINE_enum("feature_based", None, list(CHOICES),
                  "The BERT paper's feature-based approach (Table 7): the encoder frozen, these "
                  "layers (concatenated, a learned weighted sum, or one) fed to a two-layer "
                  "BiLSTM and a tag classifier. Needs --init_checkpoint; implies "
                  "--freeze_encoder.")
flags.DEFINE_integer("feature_lstm_units", None,
                     "With --feature_based: units of each LSTM direction (default "
                     f"{DEFAULT_LSTM_UNITS}, the paper's BERT-Base runs; fewer on a CPU).")
common_flags.define_finetuning_flags(max_seq_length=128)
flags.adopt_module_key_flags(common_flags)
FLAGS = flags.FLAGS


class Plan(NamedTuple):
    """What the flags say, checked."""
    options: FinetuningOptions
    adaptations: dict[str, Any]
    files: dict[str, str]
    feature_based: FeatureBasedSettings | None


def feature_based(options: FinetuningOptions,
                  adaptations: dict[str, Any]) -> FeatureBasedSettings | None:
    """The feature-based setting the flags ask for (None: fine-tuning), its encoder frozen in
    `adaptations` (official/peft/frozen.py); its depth checked against --bert_config_file when
    given (else the model checks it once built, before any data is written).

    Raises:
      ValueError: --feature_lstm_units alone, another adaptation besides it, a model too
        shallow for the layers named.
    """
    settings = FeatureBasedSettings.from_flags(FLAGS.feature_based, FLAGS.feature_lstm_units)
    if settings is None:
        return None
    if adaptations["distillation"] is not None:
        raise ValueError("--feature_based and --teacher_checkpoint: the feature-based approach "
                         "trains no student, only a head on the frozen encoder")
    peft = adaptations["peft"]
    frozen = peft_methods.from_flags(freeze_encoder=True)
    if peft is not None and peft.method != frozen.method:
        raise ValueError(f"--feature_based and --{peft_methods.method_of(peft).flags[0].name}: "
                         "the feature-based approach freezes the whole encoder")
    adaptations["peft"] = peft or frozen
    if options.bert_config_file:
        settings.check_depth(BertConfig.from_json_file(options.bert_config_file)
                             .num_hidden_layers)
    return settings


def prepare() -> Plan:
    """Every check that needs no TensorFlow (official/command_line.py)."""
    options, adaptations = common_flags.prepare_finetuning()
    features = feature_based(options, adaptations)
    defaults = DEFAULT_FILES[FLAGS.data_format]
    names = {split: FLAGS[f"{split}_file"].value or defaults.get(split)
             for split in ("train", "dev", "test")}
    files = {split: os.path.join(FLAGS.data_dir, name) for split, name in names.items() if name}
    for split, wanted in (("train", options.do_train), ("dev", options.do_eval),
                          ("test", options.do_predict)):
        if wanted and split not in files:
            raise ValueError(f"--{split}_file is needed with --data_format={FLAGS.data_format} "
                             "(the file's name in --data_dir)")
        if wanted and not os.path.isfile(files[split]):
            raise ValueError(f"{files[split]}: no such file")
    common_flags.check_adaptation_checkpoints(adaptations)
    return Plan(options, adaptations, files, features)


def job(plan: Plan) -> dict[str, dict[str, float]]:
    """The task and data the flags name, fine-tuned."""
    from data_prep import conll
    from official.peft import artifact
    from official.tasks import ner_settings
    from official.tasks.ner import NerTask

    features = plan.feature_based
    if features is None and not plan.options.do_train:
        # A run that only evaluates or predicts takes a feature-based run's setting from its
        # record, as it takes the method and the base.
        record = artifact.read_record(plan.options.output_dir)
        features = ner_settings.from_spec(record.task) if record is not None else None
    labels, scheme = FORMATS[FLAGS.data_format]
    data = conll.ConllData(plan.files, labels, plan.options.max_seq_length, FLAGS.vocab_file,
                           FLAGS.do_lower_case, plan.options.output_dir, FLAGS.data_format)
    return common_flags.finetune(plan.options, NerTask(labels, features, scheme), data,
                                 plan.adaptations)


if __name__ == "__main__":
    command_line.main("run_ner", prepare, job, required=["data_dir", "vocab_file", "output_dir"])
