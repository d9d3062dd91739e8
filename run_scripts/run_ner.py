r"""Token classification: named entities (CoNLL-2003's, or a domain's of any types; entity F1) or
a Universal Dependencies treebank's parts of speech (accuracy): fine-tune, evaluate, predict.

    python -m run_scripts.run_ner \
      --data_dir=conll2003 --vocab_file=$BERT_DIR/vocab.txt --do_lower_case=False \
      --bert_config_file=$BERT_DIR/bert_config.json --init_checkpoint=$BERT_DIR/bert_model.ckpt \
      --do_train --do_eval --do_predict --max_seq_length=128 --train_batch_size=32 \
      --learning_rate=5e-5 --num_train_epochs=3 --output_dir=/tmp/ner_output

--data_dir holds eng.train (training), eng.testa (--do_eval, after every epoch) and eng.testb
(--do_predict); --train_file, --dev_file and --test_file name others.

The tags are the training file's (data_prep/conll.py `tag_set`, one rule for every format):
the format's published set (CoNLL-2003's nine, in Hugging Face's order; PAN-X's; UD's 17 UPOS)
when it holds them all, else O and B-/I- of each entity type, types sorted. So a domain's files
in CoNLL's layout, IOB1 or IOB2, the word first and the tag last ("Naloxone<TAB>B-Chemical", as
BC5CDR, NCBI-disease and JNLPBA are distributed), train a tagger of their own types:

    python -m run_scripts.run_ner --data_dir=BC5CDR-IOB --train_file=train.tsv \
      --dev_file=devel.tsv --test_file=test.tsv --vocab_file=$BERT_DIR/vocab.txt \
      --init_checkpoint=$BERT_DIR/bert_model.ckpt --do_train --do_eval --do_predict \
      --output_dir=/tmp/bc5cdr

A dev or test tag outside the set (of a type a domain's training file lacks) is refused at its
line, before training.
Tags that are not CoNLL-2003's are recorded in output_dir/tagger.json (official/tasks/
ner_settings.py), which a rerun that only evaluates or predicts and export_saved_model
--export_type=ner read back.

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

from data_prep.code_switching import CodeSwitching, read_dictionary
from official import command_line, settings_parsing
from official.configs import BertConfig
from official.modeling.feature_layers import CHOICES
from official.peft import methods as peft_methods
from official.tasks.ner_metrics import CONLL2003_LABELS, PANX_LABELS, UPOS_LABELS
from official.tasks.ner_settings import DEFAULT_LSTM_UNITS, FeatureBasedSettings
from official.training.options import FinetuningOptions
from run_scripts import common_flags

# Each --data_format's published tag set (kept when it holds the training file's tags:
# data_prep/conll.py `tag_set`), scheme (official/tasks/ner.py) and default files.
FORMATS = {"conll2003": (CONLL2003_LABELS, "entities"), "conllu": (UPOS_LABELS, "tags"),
           "panx": (PANX_LABELS, "entities")}
DEFAULT_FILES = {"conll2003": {"train": "eng.train", "dev": "eng.testa", "test": "eng.testb"},
                 "conllu": {}, "panx": {"train": "train", "dev": "dev", "test": "test"}}

flags.DEFINE_string("data_dir", None, "The directory holding the data files.")
flags.DEFINE_enum("data_format", "conll2003", list(FORMATS),
                  "conll2003: CoNLL-2003's four columns (or a domain's word<TAB>tag: the word "
                  "first, the tag last), IOB1 or IOB2 entity tags of the training file's types, "
                  "scored by entity F1. "
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
flags.DEFINE_string("eval_languages", None,
                    "Zero-shot transfer: further labelled files of other languages, "
                    "language=file pairs, comma-separated (a file in --data_dir, or a path), "
                    "e.g. de=de_gsd/test.conllu,es=es_gsd/test.conllu. With --do_eval each is "
                    "scored by the model the run keeps (best/, chosen on --dev_file alone: no "
                    "target-language data picks the model) into eval_results_<language>.txt "
                    "and a table of every language, eval_results_by_set.md.")
flags.DEFINE_string("code_switch_dictionaries", None,
                    "Code-switching augmentation (CoSDA-ML, Qin et al. 2020): word-pair files "
                    "(word<TAB>translation a line, the word in the training language), "
                    "language=file pairs, comma-separated. Each epoch's training sentences "
                    "have their words replaced by a translation with probability "
                    "--code_switch_rate (data_prep/code_switching.py).")
flags.DEFINE_float("code_switch_rate", 0.5,
                   "With --code_switch_dictionaries: the probability that a word a dictionary "
                   "has is replaced.")
flags.DEFINE_bool("mix_layers", False,
                  "The tagger reads a learned mix of every transformer layer's output, not the "
                  "last layer's alone (fine-tuned with the encoder; layer aggregation for "
                  "cross-lingual transfer, Chen et al. 2022).")
common_flags.define_finetuning_flags(max_seq_length=128)
flags.adopt_module_key_flags(common_flags)
FLAGS = flags.FLAGS


class Plan(NamedTuple):
    """What the flags say, checked."""
    options: FinetuningOptions
    adaptations: dict[str, Any]
    files: dict[str, str]
    feature_based: FeatureBasedSettings | None
    languages: dict[str, str]
    code_switching: CodeSwitching | None


def _language_files(flag: str) -> dict[str, str]:
    """--<flag>'s language=file pairs, each file in --data_dir or a path, checked there."""
    files = {language: os.path.join(FLAGS.data_dir, name) for language, name
             in settings_parsing.named_values(FLAGS[flag].value, f"--{flag}").items()}
    for language, path in files.items():
        if not os.path.isfile(path):
            raise ValueError(f"--{flag}: {path}: no such file (language {language})")
    return files


def code_switching(options: FinetuningOptions) -> CodeSwitching | None:
    """The augmentation --code_switch_dictionaries asks for, its dictionaries read and checked.

    Raises:
      ValueError: a bad rate or dictionary (one line naming it), or the flag without training.
    """
    if FLAGS.code_switch_dictionaries is None:
        return None
    if not options.do_train:
        raise ValueError("--code_switch_dictionaries augments the training data: it needs "
                         "--do_train")
    dictionaries = {language: read_dictionary(path) for language, path
                    in _language_files("code_switch_dictionaries").items()}
    return CodeSwitching(dictionaries, FLAGS.code_switch_rate, options.seed,
                         options.num_train_epochs)


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
    languages = {}
    if FLAGS.eval_languages is not None:
        if not options.do_eval:
            raise ValueError("--eval_languages are scored with --do_eval")
        languages = _language_files("eval_languages")
    if FLAGS.mix_layers and features is not None:
        raise ValueError("--mix_layers and --feature_based: the feature-based tagger chooses "
                         "its own layers")
    switching = code_switching(options)
    common_flags.check_adaptation_checkpoints(adaptations)
    return Plan(options, adaptations, files, features, languages, switching)


def job(plan: Plan) -> dict[str, dict[str, float]]:
    """The task and data the flags name, fine-tuned."""
    from data_prep import conll
    from official import records
    from official.peft import artifact
    from official.tasks import ner_settings
    from official.tasks.ner import NerTask

    features = plan.feature_based
    if features is None and not plan.options.do_train:
        # A run that only evaluates or predicts takes a feature-based run's setting from its
        # record, as it takes the method and the base.
        record = artifact.read_record(plan.options.output_dir)
        features = ner_settings.from_spec(record.task) if record is not None else None
    published, scheme = FORMATS[FLAGS.data_format]
    tagger = None
    if not plan.options.do_train:
        # So do the tags and a tagger that mixes layers, from its tagger.json (a run made
        # before tags were recorded trained on its format's published set).
        tagger = records.read(os.path.join(plan.options.output_dir, ner_settings.TAGGER_FILE),
                              ner_settings.TaggerSettings) \
            or ner_settings.TaggerSettings(mix_layers=FLAGS.mix_layers)
    data = conll.ConllData(plan.files, tagger and tagger.tags(published),
                           plan.options.max_seq_length, FLAGS.vocab_file, FLAGS.do_lower_case,
                           plan.options.output_dir, FLAGS.data_format,
                           evaluation_sets=plan.languages, augmentation=plan.code_switching)
    if tagger is None:
        # A training run's tags are its training file's (read before any work).
        tagger = ner_settings.TaggerSettings.of(FLAGS.mix_layers,
                                                data.choose_tags(published, scheme))
    return common_flags.finetune(plan.options, NerTask(data.labels, features, scheme, tagger),
                                 data, plan.adaptations)


if __name__ == "__main__":
    command_line.main("run_ner", prepare, job, required=["data_dir", "vocab_file", "output_dir"])
