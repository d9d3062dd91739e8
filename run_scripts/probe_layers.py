r"""What each layer knows: probes trained on every layer's word vectors (probing studies).

    python -m run_scripts.probe_layers \
      --init_checkpoint=$BERT_DIR --vocab_file=$BERT_DIR/vocab.txt --do_lower_case=True \
      --task=upos --train_file=en_ewt-ud-train.conllu --dev_file=en_ewt-ud-dev.conllu \
      --test_file=en_ewt-ud-test.conllu --probe=linear --control_task --mix=scalar \
      --cumulative --output_dir=/tmp/probe_upos

--task: upos, xpos, deprel (a word's relation to its head, from both words' vectors),
distance and depth (Hewitt & Manning's structural probes) read CoNLL-U treebanks; conll_ner
reads CoNLL-2003 files. Every layer's vector of every word (layer 0: the embedding layer's
output) is computed once per split and cached in --cache_dir (default output_dir/vector_cache;
the file's name covers the weights, vocab, data and settings), then a probe is trained per
layer (--layers to choose), early-stopped on dev, and scored on test at its best dev epoch.
--control_task adds Hewitt & Liang's control task and selectivity, --mix=scalar a probe of the
learned mix of all layers (Tenney et al.'s E_s), --cumulative the mixes of layers 0..l (Delta_l
and E_Delta).

Writes output_dir/probe_results.json, probe_results.txt (the table, also printed),
probe_curves.png and probes/ (each probe's weights at its best epoch, .npz files numpy reads).
--bert_config_file and --vocab_file default to the files beside --init_checkpoint.
--init_checkpoint may also be an encoder export (export_saved_model --export_type=encoder: its
newest version, or a version), read with its own vocab and casing; a SavedModel keeps no
config, so --bert_config_file is needed then. The halves:
data_prep/conllu.py and data_prep/conll.py (readers), official/probing/ (vectors, probes, the
study, the report).
"""

import os
from typing import NamedTuple

from absl import flags, logging

from official import checkpoints, command_line
from official.configs import BertConfig
from official.export.versions import is_saved_model, newest_version
from official.output_paths import check_output_dir
from official.probing import settings as probing
from official.settings_parsing import int_list
from official.text import vocab
from official.training.options import check_checkpoint_path
from run_scripts import common_flags

flags.DEFINE_enum("task", None, list(probing.TASKS), "What the probes predict of each word.")
flags.DEFINE_string("train_file", None, "The split probes train on (CoNLL-U; CoNLL-2003 for "
                    "conll_ner).")
flags.DEFINE_string("dev_file", None, "The split that picks each probe's best epoch.")
flags.DEFINE_string("test_file", None, "The split scored at that epoch.")
flags.DEFINE_string("output_dir", None, "Where to write probe_results.json/.txt and "
                    "probe_curves.png.")
flags.DEFINE_string("cache_dir", None, "Where each split's word vectors are cached. Default: "
                    "output_dir/vector_cache.")
flags.DEFINE_string("layers", None, "Comma-separated layers to probe one by one, 0 (the "
                    "embedding layer's output) to num_hidden_layers. Default: all.")
flags.DEFINE_enum("subword_pool", "first", list(probing.SUBWORD_POOLS),
                  "A word's vector: its first WordPiece's (the BERT paper's) or their mean.")
flags.DEFINE_enum("probe", "linear", list(probing.PROBES),
                  "Label probes: a linear layer, or an MLP of one ReLU layer.")
flags.DEFINE_enum("mix", "none", list(probing.MIXES),
                  "scalar: also probe the learned softmax-weighted mix of all layers.")
flags.DEFINE_bool("cumulative", False, "Also probe the mixes of layers 0..l for every l.")
flags.DEFINE_bool("control_task", False, "Also train each probe on Hewitt & Liang's control "
                  "task (a random label per word type) and report selectivity.")
flags.DEFINE_integer("probe_hidden_units", 256, "The MLP probe's hidden units.")
flags.DEFINE_integer("probe_rank", 64, "The structural probes' rank k.")
flags.DEFINE_integer("probe_epochs", 20, "At most this many epochs per probe.")
flags.DEFINE_integer("probe_patience", 3, "Stop after this many epochs without a better dev "
                     "score.")
flags.DEFINE_integer("probe_batch_size", 256, "Words per probe step (structural probes: "
                     "this // 16 sentences).")
flags.DEFINE_float("probe_learning_rate", 1e-3, "The probes' Adam learning rate.")
flags.DEFINE_integer("seed", 12345, "Seed of the probes' weights, order and control labels.")
flags.DEFINE_integer("max_train_sentences", 0, "Probe on the first N training sentences only "
                     "(0: all).")
flags.DEFINE_integer("doc_stride", 64, "A sentence longer than max_seq_length - 2 pieces is "
                     "read in windows starting every doc_stride pieces.")
flags.DEFINE_integer("batch_size", 32, "Windows per encoder call.")
common_flags.define_bert_config_flag(
    extra_help=" Default: bert_config.json beside --init_checkpoint.")
flags.DEFINE_string("init_checkpoint", None,
                    "The model's weights: a checkpoint prefix or a directory holding one (TF1, "
                    "TF2 or a training output_dir), a Hugging Face folder, a keras-hub preset, or "
                    "an encoder export (its export_dir).")
common_flags.define_tokenizer_flags()
common_flags.define_max_seq_length_flag()
flags.adopt_module_key_flags(common_flags)
FLAGS = flags.FLAGS

_SPLITS = ("train", "dev", "test")


class Plan(NamedTuple):
    """What the flags say, checked."""
    settings: probing.StudySettings
    config: BertConfig | None  # None: a folder format's own, read with the weights
    vocab_file: str
    files: dict[str, str]  # split -> its file, each checked to exist
    treebanks: dict  # split -> its sentences (CoNLL-U tasks; conll_ner's are read in `job`)
    export: str | None  # the encoder export's version, when --init_checkpoint is one


def _study_settings() -> probing.StudySettings:
    layers = None if FLAGS.layers is None else int_list(FLAGS.layers, "--layers")
    probe = probing.ProbeSettings(
        probe=FLAGS.probe, hidden_units=FLAGS.probe_hidden_units, rank=FLAGS.probe_rank,
        epochs=FLAGS.probe_epochs, patience=FLAGS.probe_patience,
        batch_size=FLAGS.probe_batch_size, learning_rate=FLAGS.probe_learning_rate,
        seed=FLAGS.seed)
    settings = probing.StudySettings(
        task=FLAGS.task, layers=layers, mix=FLAGS.mix, cumulative=FLAGS.cumulative,
        control_task=FLAGS.control_task, subword_pool=FLAGS.subword_pool, probe=probe)
    settings.check()
    return settings


def _files() -> dict[str, str]:
    files = {"train": FLAGS.train_file, "dev": FLAGS.dev_file, "test": FLAGS.test_file}
    for split, path in files.items():
        if not os.path.isfile(path):
            raise ValueError(f"--{split}_file: {path}: no such file")
    return files


def _capped(sentences: list, split: str) -> list:
    return sentences[:FLAGS.max_train_sentences] if split == "train" and \
        FLAGS.max_train_sentences > 0 else sentences


def _encoder_export(path: str) -> str | None:
    """The SavedModel version `path` names (an export_dir or a version), None for a checkpoint."""
    if not os.path.isdir(path):
        return None
    versions = [name for name in os.listdir(path) if name.isdigit()]
    if is_saved_model(path) or any(is_saved_model(os.path.join(path, v)) for v in versions):
        return newest_version(path)
    return None


def _export_vocab(export: str) -> str | None:
    """An encoder export's vocab: the one file of its assets/ (None if there are more)."""
    folder = os.path.join(export, "assets")
    names = os.listdir(folder) if os.path.isdir(folder) else []
    return os.path.join(folder, names[0]) if len(names) == 1 else None


def prepare() -> Plan:
    """Every check that needs no TensorFlow (official/command_line.py): flags, files, the
    config and its layers, the vocab, and CoNLL-U treebanks read whole."""
    from data_prep.conllu import read_conllu

    settings = _study_settings()
    if FLAGS.max_train_sentences < 0:
        raise ValueError(f"--max_train_sentences: must be 0 (all) or positive, got "
                         f"{FLAGS.max_train_sentences}")
    if FLAGS.doc_stride < 1 or FLAGS.batch_size < 1:
        raise ValueError("--doc_stride and --batch_size: must be positive")
    files = _files()
    check_output_dir(FLAGS.output_dir)
    if FLAGS.cache_dir:
        check_output_dir(FLAGS.cache_dir, "cache_dir")
    check_checkpoint_path(FLAGS.init_checkpoint)
    export = _encoder_export(FLAGS.init_checkpoint)
    if export is not None and not FLAGS.bert_config_file:
        raise ValueError(f"--init_checkpoint={FLAGS.init_checkpoint} is an encoder export, which "
                         "keeps no config: pass its --bert_config_file")
    config_file = FLAGS.bert_config_file or checkpoints.beside(FLAGS.init_checkpoint,
                                                               checkpoints.CONFIG_FILE)
    config = BertConfig.from_json_file(config_file) if config_file else None
    if config is not None:
        config.check_seq_length(FLAGS.max_seq_length, config_file)
        settings.check_layers(config.num_hidden_layers, config_file)
    vocab_file = FLAGS.vocab_file or (_export_vocab(export) if export else checkpoints.beside(
        FLAGS.init_checkpoint, checkpoints.VOCAB_FILE))
    if vocab_file is None:
        raise ValueError(f"--vocab_file: not given, and no {checkpoints.VOCAB_FILE} beside "
                         f"--init_checkpoint {FLAGS.init_checkpoint} (nor, for an export, one "
                         "file in its assets)")
    vocab.load_vocab(vocab_file)
    if config is not None:
        vocab.check_fits(vocab_file, config.vocab_size, config_file)
    treebanks = {}
    if settings.spec.source == "conllu":
        treebanks = {split: _capped(read_conllu(path), split) for split, path in files.items()}
    return Plan(settings, config, vocab_file, files, treebanks, export)


def _encoder(plan: Plan):
    """(encoder, config, tokenizer) of --init_checkpoint, weights loaded."""
    from official.checkpoints import finetuned
    from official.export.restoring import exported_encoder
    from official.modeling.encoder import build_encoder
    from official.text.tokenizer import FullTokenizer

    if plan.export is not None:
        encoder, _, lower_case = exported_encoder(plan.export, plan.config)
        logging.info("Encoder export %s: do_lower_case=%s, as it was exported", plan.export,
                     lower_case)
        return encoder, plan.config, FullTokenizer(plan.vocab_file, do_lower_case=lower_case)
    source = finetuned.resolve_source(FLAGS.init_checkpoint)
    config = plan.config
    if config is None:  # a folder format's own, which `prepare` could not check
        config = source.config
        plan.settings.check_layers(config.num_hidden_layers, FLAGS.init_checkpoint)
        config.check_seq_length(FLAGS.max_seq_length, "the config")
    encoder = build_encoder(config)
    checkpoints.load_init_checkpoint(source.weights, encoder)
    return encoder, config, FullTokenizer(plan.vocab_file, do_lower_case=FLAGS.do_lower_case)


def job(plan: Plan) -> dict:
    """The vectors cached, the probes trained, the results written; returns them."""
    from official.peft.artifact import fingerprint
    from official.probing import report, study, word_vectors

    settings = plan.settings
    if plan.treebanks:
        sentences = plan.treebanks
    else:
        from data_prep.conll import read_conll
        sentences = {split: _capped(read_conll(path), split)
                     for split, path in plan.files.items()}
    splits = {name: study.ProbingSplit.of(s, settings.spec) for name, s in sentences.items()}

    encoder, config, tokenizer = _encoder(plan)
    cache_dir = FLAGS.cache_dir or os.path.join(FLAGS.output_dir, "vector_cache")
    os.makedirs(cache_dir, exist_ok=True)
    word_vectors.remove_leftovers(cache_dir)
    weights = fingerprint(encoder)
    layers = word_vectors.layer_function(encoder)
    vectors = {}
    for name, split in splits.items():
        key = word_vectors.cache_key(weights, tokenizer, plan.files[name], len(split.words),
                                     FLAGS.max_seq_length, FLAGS.doc_stride,
                                     settings.subword_pool)
        vectors[name] = word_vectors.cached_word_vectors(
            cache_dir, key, split.words, tokenizer, layers, config.num_hidden_layers + 1,
            config.hidden_size, FLAGS.max_seq_length, FLAGS.doc_stride, FLAGS.batch_size,
            settings.subword_pool)
    weights: dict = {}
    results = study.run_study(settings, splits, vectors, config.num_hidden_layers, weights)
    results["init_checkpoint"] = FLAGS.init_checkpoint
    # The probes first: results without their probes' weights would read as a whole run.
    probes = report.write_probes(weights, FLAGS.output_dir)
    paths = dict(report.write(results, FLAGS.output_dir), probes=probes)
    print(report.table(results), flush=True)
    logging.info("Wrote %s", ", ".join(paths.values()))
    return results


if __name__ == "__main__":
    command_line.main("probe_layers", prepare, job,
                       required=["task", "train_file", "dev_file", "test_file", "init_checkpoint",
                                 "output_dir"])
