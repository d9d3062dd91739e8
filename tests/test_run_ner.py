"""run_ner end to end, as a user runs it: train with per-epoch entity F1, predict, rerun, bad input.

Each run is a subprocess (the entry point turns on TensorFlow's op determinism for the whole
process). The data is a learnable toy CoNLL-2003 set made here: names from fixed lists are
PER, LOC or ORG whatever their context, in the files' layout (-DOCSTART- lines, 4 columns,
IOB1 tags), with a tiny BERT and a small cased vocab ("Stockholm" is two pieces).
"""

import json
import os
import random
import re
import shutil

import numpy as np
import pytest

from official import checkpoints
from official.configs import BertConfig
from official.tasks.ner_metrics import entity_scores
from tests.cli import failed, run_module, run_modules, succeeded

FIRST_NAMES = ["Alice", "Bob", "Carol", "David", "Emma", "Frank", "Grace", "Henry"]
SURNAMES = ["Smith", "Jones", "Brown", "Taylor"]
PLACES = [["Paris"], ["London"], ["Berlin"], ["Rome"], ["Stockholm"], ["New", "York"]]
ORGANISATIONS = [["Reuters"], ["Acme", "Corp"], ["United", "Nations"]]
OTHER_WORDS = ["the", "a", "visited", "met", "in", "with", "said", "on", "Monday", "yesterday",
               "lives", "works", "for", "and", "today", ".", ","]
# Another language's words for three of them: the code-switching dictionary's.
TRANSLATIONS = {"visited": "besuchte", "met": "traf", "the": "der"}
VOCAB = (["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "Stock", "##holm"] + FIRST_NAMES
         + SURNAMES + [w for name in PLACES + ORGANISATIONS for w in name if w != "Stockholm"]
         + OTHER_WORDS + list(TRANSLATIONS.values()))
# 56 words, 60 pieces: at max_seq_length 32 (30 pieces a window) two windows of 28 words.
LONG_SENTENCE = [
    ("Alice", "B-PER"), ("Smith", "I-PER"), ("visited", "O"), ("New", "B-LOC"),
    ("York", "I-LOC"), ("with", "O"), ("Bob", "B-PER"), ("and", "O"), ("the", "O"),
    ("Acme", "B-ORG"), ("Corp", "I-ORG"), ("in", "O"), ("Stockholm", "B-LOC"), (".", "O"),
] * 4
MAX_SEQ_LENGTH = 32
TRAIN_STEPS = 30  # 240 sentences / batch 16 * 2 epochs


def toy_sentence(rng):
    """[(word, IOB2 tag)]: other words, and entities never next to each other."""
    rows, after_entity, length = [], True, rng.randint(3, 12)
    while len(rows) < length:
        if not after_entity and rng.random() < 0.35:
            kind = rng.choice(["PER", "LOC", "ORG"])
            if kind == "PER":
                words = [rng.choice(FIRST_NAMES)]
                if rng.random() < 0.5:
                    words.append(rng.choice(SURNAMES))
            else:
                words = rng.choice(PLACES if kind == "LOC" else ORGANISATIONS)
            rows += [(w, ("B-" if i == 0 else "I-") + kind) for i, w in enumerate(words)]
            after_entity = True
        else:
            rows.append((rng.choice(OTHER_WORDS), "O"))
            after_entity = False
    return rows


def write_conll(path, sentences):
    """The CoNLL-2003 layout: a -DOCSTART- every 10 sentences; IOB1, where an entity starts
    with I- unless it follows one of its type (never, here)."""
    lines = []
    for i, rows in enumerate(sentences):
        if i % 10 == 0:
            lines += ["-DOCSTART- -X- -X- O", ""]
        lines += [f"{word} NNP I-NP {'I' + tag[1:] if tag != 'O' else tag}" for word, tag in rows]
        lines.append("")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


# Each toy word's universal part of speech, for the same sentences as CoNLL-U (--data_format).
UPOS = {**{w: "PROPN" for w in FIRST_NAMES + SURNAMES + [w for name in PLACES + ORGANISATIONS
                                                         for w in name]},
        "the": "DET", "a": "DET", "visited": "VERB", "met": "VERB", "said": "VERB",
        "lives": "VERB", "works": "VERB", "in": "ADP", "with": "ADP", "on": "ADP",
        "for": "ADP", "and": "CCONJ", "Monday": "PROPN", "yesterday": "NOUN", "today": "NOUN",
        ".": "PUNCT", ",": "PUNCT"}


def write_conllu(path, sentences):
    """The sentences as CoNLL-U, each word's UPOS from UPOS (heads a chain to the first word),
    every third sentence starting with a multiword token line over its first two words."""
    lines = []
    for n, sentence in enumerate(sentences):
        words = [word for word, _ in sentence]
        lines.append(f"# sent_id = {n}")
        if n % 3 == 0 and len(words) > 1:
            lines.append(f"1-2\t{words[0]}{words[1]}\t_\t_\t_\t_\t_\t_\t_\t_")
        lines += [f"{i}\t{w}\t{w}\t{UPOS[w]}\t_\t_\t{i - 1}\t{'root' if i == 1 else 'dep'}"
                  "\t_\t_" for i, w in enumerate(words, start=1)]
        lines.append("")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    root = tmp_path_factory.mktemp("run_ner")
    data = root / "conll"
    data.mkdir()
    rng = random.Random(0)
    parts = {"eng.train": [toy_sentence(rng) for _ in range(240)],
             "eng.testa": [toy_sentence(rng) for _ in range(30)],
             "eng.testb": [toy_sentence(rng) for _ in range(30)]}
    parts["eng.testb"].insert(3, LONG_SENTENCE)
    for name, sentences in parts.items():
        write_conll(data / name, sentences)
        write_conllu(data / f"{name}.conllu", sentences)
    (root / "vocab.txt").write_text("\n".join(VOCAB) + "\n", encoding="utf-8")
    (data / "en-xx.txt").write_text("".join(f"{w}\t{t}\n" for w, t in TRANSLATIONS.items()),
                                    encoding="utf-8")
    BertConfig(vocab_size=len(VOCAB), hidden_size=32, num_hidden_layers=2,
               num_attention_heads=2, intermediate_size=64,
               max_position_embeddings=64).to_json_file(str(root / "bert_config.json"))
    return {"root": root, "data_dir": data, "test": parts["eng.testb"]}


def command(toy, output_dir, *flags, data_dir=None):
    """run_ner's module and flags for the toy (`run_module`'s arguments)."""
    return [
        "run_scripts.run_ner", f"--data_dir={data_dir or toy['data_dir']}",
        f"--vocab_file={toy['root'] / 'vocab.txt'}", "--do_lower_case=False",
        f"--bert_config_file={toy['root'] / 'bert_config.json'}", f"--output_dir={output_dir}",
        f"--max_seq_length={MAX_SEQ_LENGTH}", "--train_batch_size=16", "--eval_batch_size=16",
        "--predict_batch_size=16", "--learning_rate=5e-3", "--num_train_epochs=2",
        "--log_steps=5", "--iterations_per_loop=5", *flags]


def run(toy, output_dir, *flags, data_dir=None):
    return run_module(*command(toy, output_dir, *flags, data_dir=data_dir))


def results(path):
    return {k: float(v) for k, v in (line.split(" = ") for line in path.read_text().splitlines())}


def read_predictions(path):
    """[[(word, gold, predicted)]] per sentence; every line must have the three columns."""
    sentences = []
    for block in path.read_text(encoding="utf-8").split("\n\n"):
        if block.strip():
            rows = [tuple(line.split(" ")) for line in block.splitlines()]
            assert all(len(row) == 3 for row in rows), block
            sentences.append(rows)
    return sentences


@pytest.fixture(scope="module")
def runs(toy):
    """The fine-tuning run and the feature-based run (FEATURE_FLAGS, on a random base: its
    frozen features still tell the planted names apart, so the BiLSTM learns them), side by
    side: {"trained": (output_dir, stderr), "features": (output_dir, stderr, base)}."""
    from tests.peft_helpers import write_base

    base = write_base(BertConfig.from_json_file(str(toy["root"] / "bert_config.json")),
                      toy["root"] / "base")
    out, features = toy["root"] / "out", toy["root"] / "features"
    upos = toy["root"] / "upos"
    trained, feature_based, tagged = run_modules(
        command(toy, out, "--do_train", "--do_eval", "--do_predict"),
        command(toy, features, "--do_train", "--do_eval", "--do_predict",
                f"--init_checkpoint={base}", *FEATURE_FLAGS),
        command(toy, upos, "--do_train", "--do_eval", "--do_predict", *UPOS_FLAGS))
    return {"trained": (out, succeeded(trained).stderr),
            "features": (features, succeeded(feature_based).stderr, base),
            "upos": (upos, succeeded(tagged).stderr)}


# The treebank run also scores a further set zero-shot (the test file again, as language "xx"),
# switches code while training and mixes the layers under its tagger.
UPOS_FLAGS = ("--data_format=conllu", "--train_file=eng.train.conllu",
              "--dev_file=eng.testa.conllu", "--test_file=eng.testb.conllu",
              "--eval_languages=xx=eng.testb.conllu", "--code_switch_dictionaries=xx=en-xx.txt",
              "--code_switch_rate=0.5", "--mix_layers")


def test_a_treebank_is_tagged_with_parts_of_speech_and_scored_by_accuracy(toy, runs):
    out, log = runs["upos"]
    predicted = read_predictions(out / "test_predictions.txt")
    # The syntactic words, one line each (the multiword tokens' surface forms are not words).
    assert [[w for w, _, _ in sentence] for sentence in predicted] == \
        [[w for w, _ in sentence] for sentence in toy["test"]]
    assert all(gold == UPOS[word] for sentence in predicted for word, gold, _ in sentence)
    right = sum(gold == tag for sentence in predicted for _, gold, tag in sentence)
    accuracy = right / sum(len(sentence) for sentence in predicted)
    assert results(out / "test_results.txt")["accuracy"] == pytest.approx(accuracy)
    assert accuracy > 0.9  # every word has one tag: learnt in two epochs
    assert "f1" not in results(out / "eval_results.txt")
    assert "best accuracy" in log
    assert json.loads((out / "best" / "best_metric.json").read_text())["metric"] == "accuracy"


def test_a_further_set_is_scored_by_the_kept_model_and_training_switched_code(toy, runs):
    """The set scored zero-shot is the test file: its accuracy is the test predictions' (by
    hand); the training records hold two switched copies (two epochs), a word of the
    dictionary replaced at the rate, the steps those of one copy; the tagger mixes layers."""
    import tensorflow as tf

    from data_prep.conll import parse_spec

    out, log = runs["upos"]
    predicted = read_predictions(out / "test_predictions.txt")
    right = sum(gold == tag for sentence in predicted for _, gold, tag in sentence)
    accuracy = right / sum(len(sentence) for sentence in predicted)
    assert results(out / "eval_results_xx.txt")["accuracy"] == pytest.approx(accuracy)
    table = (out / "eval_results_by_set.md").read_text().splitlines()
    assert [row.split(" | ")[0] for row in table[2:]] == ["| dev", "| xx"]
    assert f"step {TRAIN_STEPS}/{TRAIN_STEPS}" in log

    facts = json.loads((out / "eng.train.conllu.tf_record.json").read_text())
    assert facts["copies"] == 2 and facts["num_sentences"] == 240
    ids = {word: VOCAB.index(word) for word in [*TRANSLATIONS, *TRANSLATIONS.values()]}
    counts = dict.fromkeys(ids, 0)
    for batch in tf.data.TFRecordDataset(str(out / "eng.train.conllu.tf_record")).batch(64):
        tokens = tf.io.parse_example(batch, parse_spec(MAX_SEQ_LENGTH))["input_ids"].numpy()
        for word, token in ids.items():
            counts[word] += int((tokens == token).sum())
    for word, translation in TRANSLATIONS.items():
        total = counts[word] + counts[translation]
        spread = 5 * (total * 0.25) ** 0.5
        assert abs(counts[translation] - total / 2) < spread, (word, counts)
    # The tags are UD's 17, not CoNLL-2003's: recorded beside the mix.
    from official.tasks.ner_metrics import UPOS_LABELS
    assert json.loads((out / "tagger.json").read_text()) == {"labels": list(UPOS_LABELS),
                                                             "mix_layers": True}
    heads = {name for name, _ in tf.train.list_variables(str(out / "best"))}
    assert any("scalar_mix" in name for name in heads)
    # Its export rebuilds the tagger that mixes layers, of those tags, from tagger.json.
    from types import SimpleNamespace

    from official.export import ner_kind
    spec = ner_kind.KIND.spec(SimpleNamespace(labels=None, peft_checkpoint=None,
                                              init_checkpoint=str(out)))
    assert spec["mix_layers"] is True and ner_kind.KIND.task(spec).tagger.mix_layers
    assert spec["labels"] == list(UPOS_LABELS)
    # A rerun that only evaluates takes the mix and the tags from tagger.json: the same scores.
    again = toy["root"] / "upos_again"
    again.mkdir()
    for name in os.listdir(out):
        if not name.endswith(".tf_record") and not name.endswith(".tf_record.json") and \
                os.path.isfile(out / name):
            (again / name).write_bytes((out / name).read_bytes())
    shutil.copytree(out / "best", again / "best")
    succeeded(run(toy, again, "--do_eval", "--data_format=conllu",
                  "--dev_file=eng.testa.conllu", "--eval_languages=xx=eng.testb.conllu"))
    assert results(again / "eval_results_xx.txt")["accuracy"] == pytest.approx(accuracy)


@pytest.fixture(scope="module")
def trained(runs):
    out, log = runs["trained"]
    return {"out": out, "log": log,
            "predictions": (out / "test_predictions.txt").read_bytes(),
            "checkpoints": {n: os.stat(out / n).st_mtime_ns for n in os.listdir(out)
                            if n.startswith("model.ckpt")}}


def test_train_eval_predict_learns_the_entities(toy, trained):
    out, log = trained["out"], trained["log"]
    assert f"step {TRAIN_STEPS}/{TRAIN_STEPS}" in log
    assert {"bert_config.json", "eval_results.txt", "test_results.txt", "test_predictions.txt",
            "best", "eng.train.tf_record", "eng.testa.tf_record", "eng.testb.tf_record",
            f"model.ckpt-{TRAIN_STEPS}.index"} <= set(os.listdir(out))
    assert not [n for n in os.listdir(out) if n.endswith(".tmp")]
    # Its tags are CoNLL-2003's, in their order (its types are a part of CoNLL's): it records
    # none, as no run did before tags were recorded, and its export reads them as CoNLL's.
    from types import SimpleNamespace

    from official.export import ner_kind
    from official.tasks.ner_metrics import CONLL2003_LABELS
    assert "tagger.json" not in os.listdir(out)
    assert ner_kind.KIND.spec(SimpleNamespace(labels=None, peft_checkpoint=None,
                                              init_checkpoint=str(out))) == {
        "labels": list(CONLL2003_LABELS)}

    # Entity F1 on held-out sentences, against 0 for tagging everything O; evaluated after
    # each of the 2 epochs, the best kept.
    dev = results(out / "eval_results.txt")
    assert dev["global_step"] == TRAIN_STEPS
    assert dev["f1"] > 0.6, dev
    assert {"precision", "recall", "PER_f1", "LOC_f1", "ORG_f1", "loss"} <= dev.keys()
    assert len(re.findall(r"eval at step \d+", log)) == 2
    assert results(out / "best" / "eval_results.txt")["f1"] >= dev["f1"]
    test = results(out / "test_results.txt")
    assert test["f1"] > 0.6, test

    # The prediction file: every test sentence and word, with its gold tag in IOB2.
    predicted = read_predictions(out / "test_predictions.txt")
    assert [[(w, g) for w, g, _ in s] for s in predicted] == toy["test"]
    gold = [[g for _, g, _ in s] for s in predicted]
    tags = [[p for _, _, p in s] for s in predicted]
    assert entity_scores(gold, tags).overall.f1 == pytest.approx(test["f1"], abs=1e-6)

    # The long sentence was split into windows, and each window's words were predicted.
    long = predicted[3]
    assert len(long) == len(LONG_SENTENCE)
    records = json.loads((out / "eng.testb.tf_record.json").read_text())
    assert records["num_features"] == len(toy["test"]) + 1
    for window in (long[:28], long[28:]):
        window_gold, window_tags = [g for _, g, _ in window], [p for _, _, p in window]
        assert entity_scores([window_gold], [window_tags]).overall.f1 > 0.5, window


def test_a_finished_run_predicts_again_from_its_checkpoint(toy, trained):
    out = trained["out"]
    log = succeeded(run(toy, out, "--do_predict")).stderr
    assert re.search(r"Restored \S*best/model.ckpt-\d+", log), log[-2000:]
    assert not re.search(r"step \d+/\d+", log)  # no training
    assert (out / "test_predictions.txt").read_bytes() == trained["predictions"]
    assert {n: os.stat(out / n).st_mtime_ns for n in os.listdir(out)
            if n.startswith("model.ckpt")} == trained["checkpoints"]


def test_same_seed_same_weights_with_or_without_evaluation(toy, trained, tmp_path):
    """Deterministic on CPU: the same flags train the same weights again, and the per-epoch
    evaluations (predictions on the dev file) do not disturb training."""
    out = tmp_path / "out"
    succeeded(run(toy, out, "--do_train"))
    again = checkpoints.read_weights(str(out / f"model.ckpt-{TRAIN_STEPS}"))
    first = checkpoints.read_weights(str(trained["out"] / f"model.ckpt-{TRAIN_STEPS}"))
    assert again.keys() == first.keys()
    for name in first:
        np.testing.assert_array_equal(again[name], first[name], err_msg=name)


def test_bad_input_is_one_line_and_writes_nothing(toy, tmp_path):
    data = tmp_path / "conll"
    data.mkdir()
    for name in ("eng.train", "eng.testa"):
        (data / name).write_bytes((toy["data_dir"] / name).read_bytes())
    lines = (toy["data_dir"] / "eng.testb").read_text().splitlines()
    bad = next(i for i, line in enumerate(lines) if i > 5 and line and line[0] != "-")
    lines[bad] = "Mars NNP I-NP I-PLANET"
    (data / "eng.testb").write_text("\n".join(lines) + "\n")

    # A missing file, in a copy without eng.train.
    no_train = tmp_path / "no_train"
    no_train.mkdir()
    for name in ("eng.testa", "eng.testb"):
        (no_train / name).write_bytes((data / name).read_bytes())

    # A treebank with a tag that is no universal part of speech, and one named by no flag.
    treebank = (toy["data_dir"] / "eng.testa.conllu").read_text().replace("\tADP\t", "\tPREP\t",
                                                                          1)
    (data / "bad.conllu").write_text(treebank)
    bad_line = next(n for n, line in enumerate(treebank.splitlines(), start=1)
                    if "\tPREP\t" in line)

    # A word list with a line without its tab, and a language's file that is not there.
    (data / "en-de.txt").write_text("dog\tHund\ncat Katze\n", encoding="utf-8")

    # A domain's dev file with an entity type its training file lacks.
    (data / "train.tsv").write_text("Naloxone\tB-Chemical\nreverses\tO\n\nSevere\t"
                                    "B-Disease\nhypotension\tI-Disease\n", encoding="utf-8")
    (data / "devel.tsv").write_text("Aspirin\tB-Chemical\n\nBRCA1\tB-Gene\n",
                                    encoding="utf-8")

    # Side by side, each refused before writing.
    out = tmp_path / "out"
    bad_tag, missing, bad_upos, unnamed, no_tab, no_language, unseen = run_modules(
        command(toy, out, "--do_train", "--do_eval", "--do_predict", data_dir=data),
        command(toy, out, "--do_train", data_dir=no_train),
        command(toy, out, "--do_train", "--data_format=conllu", "--train_file=bad.conllu",
                data_dir=data),
        command(toy, out, "--do_train", "--data_format=conllu", data_dir=data),
        command(toy, out, "--do_train", "--code_switch_dictionaries=de=en-de.txt",
                data_dir=data),
        command(toy, out, "--do_train", "--do_eval", "--eval_languages=de=de.conllu",
                data_dir=data),
        command(toy, out, "--do_train", "--do_eval", "--train_file=train.tsv",
                "--dev_file=devel.tsv", data_dir=data))
    # A tag outside the label set in the test file: found before any training.
    last = failed(bad_tag)
    assert last.startswith(f"run_ner: {data / 'eng.testb'}:{bad + 1}: tag 'I-PLANET'"), last
    last = failed(missing)
    assert last == f"run_ner: {no_train / 'eng.train'}: no such file", last
    last = failed(bad_upos)
    assert f"{data / 'bad.conllu'}:3: UPOS 'PREP' is not one of UD's 17" in last
    sentence_line = int(last.split(f"{data / 'bad.conllu'}:")[1].split(":")[0])
    assert sentence_line <= bad_line  # the sentence's first word; the word is named by number
    last = failed(unnamed)
    assert last == "run_ner: --train_file is needed with --data_format=conllu (the file's " \
                   "name in --data_dir)", last
    assert failed(no_tab) == f"run_ner: {data / 'en-de.txt'}:2: 0 tabs, expected one " \
                             "(word<TAB>translation)"
    assert failed(no_language) == f"run_ner: --eval_languages: {data / 'de.conllu'}: no such " \
                                  "file (language de)"
    assert failed(unseen) == f"run_ner: {data / 'devel.tsv'}:3: tag 'B-Gene' is not one of " \
                             "O, B-Chemical, I-Chemical, B-Disease, I-Disease"
    assert not out.exists() or not os.listdir(out)


# ---- the feature-based approach (--feature_based): a BiLSTM on a frozen encoder ----------------

FEATURE_FLAGS = ("--feature_based=weighted_sum_all", "--feature_lstm_units=32",
                 "--learning_rate=1e-2", "--num_train_epochs=6", "--train_batch_size=8")
FEATURE_STEPS = 180  # 240 sentences / batch 8 * 6 epochs


@pytest.fixture(scope="module")
def feature_run(runs):
    """The feature-based run (run beside the fine-tuning one: `runs`)."""
    out, log, base = runs["features"]
    return {"out": out, "log": log, "base": base}


def test_feature_based_learns_on_the_frozen_encoder_and_keeps_only_its_head(toy, feature_run):
    import tensorflow as tf

    from official.checkpoints import tf1
    from official.modeling.encoder import build_encoder
    from official.peft import artifact
    from official.tasks.ner import NerTask
    from official.tasks.ner_metrics import CONLL2003_LABELS
    from official.tasks.ner_settings import FeatureBasedSettings

    out, base = feature_run["out"], feature_run["base"]
    f1 = [float(m) for m in re.findall(r"eval at step \d+: precision \S+  recall \S+  f1 (\S+)",
                                       feature_run["log"])]
    assert len(f1) == 6 and f1[-1] > 0.7 and f1[-1] > f1[0] + 0.2, f1
    assert f"step {FEATURE_STEPS}/{FEATURE_STEPS}" in feature_run["log"]

    # The record names the base and the setting.
    record = json.loads((out / "best" / "peft_config.json").read_text())
    assert record["method"] == "frozen" and record["base_checkpoint"] == str(base)
    assert record["task"]["feature_based"] == {"layers": "weighted_sum_all", "lstm_units": 32}

    # The checkpoint holds the head alone: by hand, a ScalarMix over 3 layers (3 weights and
    # gamma), two BiLSTMs (per direction 4 gates of input x units, units x units and units)
    # and the classifier.
    saved = dict(tf.train.list_variables(tf.train.latest_checkpoint(str(out / "best"))))
    heads = {name: shape for name, shape in saved.items() if name.startswith("heads/")}
    assert {name.split("/")[1] for name in heads} == {"scalar_mix", "bilstm_0", "bilstm_1",
                                                      "classifier"}
    assert not [name for name in saved if name.startswith("encoder")]
    units, hidden, labels = 32, 32, len(CONLL2003_LABELS)

    def bilstm(inputs):
        return 2 * 4 * (inputs * units + units * units + units)

    assert sum(int(np.prod(shape)) for shape in heads.values()) == \
        4 + bilstm(hidden) + bilstm(2 * units) + 2 * units * labels + labels

    # Restored on its base, the encoder is the base's bit for bit.
    config = BertConfig.from_json_file(str(toy["root"] / "bert_config.json"))
    model = NerTask(CONLL2003_LABELS, FeatureBasedSettings("weighted_sum_all", 32)).build_model(
        build_encoder(config))
    artifact.restore(model, str(out))
    base_weights = tf1.read(os.path.join(base, "bert_model.ckpt"))
    for name, value in tf1.weights_of(model).items():
        np.testing.assert_array_equal(value, base_weights[name], err_msg=name)


def test_a_feature_based_run_predicts_again_and_refuses_another_choice(toy, feature_run,
                                                                        tmp_path):
    from tests.cli import refused, snapshot

    out = feature_run["out"]
    predictions = (out / "test_predictions.txt").read_bytes()
    before = snapshot(out)
    last = refused(run(toy, out, "--do_train", "--feature_based=last",
                       "--feature_lstm_units=32"),
                   "peft_config.json", "the task's feature_based")
    assert "'layers': 'weighted_sum_all'" in last and "'layers': 'last'" in last, last
    assert snapshot(out) == before

    # Predicting again needs none of the run's flags: its record holds the setting and base.
    log = succeeded(run(toy, out, "--do_predict")).stderr
    assert re.search(r"Restored \S*best/model.ckpt-\d+", log), log[-2000:]
    assert (out / "test_predictions.txt").read_bytes() == predictions


def write_panx(path, sentences, languages):
    """WikiANN's layout (XTREME's PAN-X): "<language>:<word><TAB><tag>", IOB2, a blank line
    after each sentence; sentence i in languages[i % len(languages)]."""
    lines = []
    for i, rows in enumerate(sentences):
        lines += [f"{languages[i % len(languages)]}:{word}\t{tag}" for word, tag in rows]
        lines.append("")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_wikiann_files_are_read_without_their_language_prefixes_and_scored_by_entity(toy,
                                                                                     tmp_path):
    from official.tasks.ner_metrics import PANX_LABELS

    rng = random.Random(1)
    data, bad = tmp_path / "panx", tmp_path / "bad"
    data.mkdir()
    bad.mkdir()
    test = [toy_sentence(rng) for _ in range(8)]
    # Words of other scripts, [UNK] in the toy vocab, are predicted all the same.
    test.insert(2, [("北京", "B-LOC"), ("и", "O"), ("مصر", "B-LOC"), ("Reuters", "B-ORG")])
    write_panx(data / "train", [toy_sentence(rng) for _ in range(48)], ["en", "de", "sv"])
    write_panx(data / "test", test, ["en", "zh-min-nan", "simple"])
    (bad / "train").write_text("en:Alice\tB-PER\nParis\tB-LOC\n", encoding="utf-8")

    out = tmp_path / "out"
    ran, refused = run_modules(
        command(toy, out, "--do_train", "--do_predict", "--data_format=panx",
                "--num_train_epochs=1", data_dir=data),
        command(toy, tmp_path / "refused", "--do_train", "--data_format=panx", data_dir=bad))
    succeeded(ran)
    predicted = read_predictions(out / "test_predictions.txt")
    assert [[(w, g) for w, g, _ in s] for s in predicted] == test
    assert {p for s in predicted for _, _, p in s} <= set(PANX_LABELS)
    scores = results(out / "test_results.txt")
    gold = [[g for _, g, _ in s] for s in predicted]
    tags = [[p for _, _, p in s] for s in predicted]
    assert scores["f1"] == pytest.approx(entity_scores(gold, tags).overall.f1, abs=1e-6)
    assert {"PER_f1", "ORG_f1", "LOC_f1"} <= scores.keys() and "MISC_f1" not in scores

    last = failed(refused)
    assert last == f"run_ner: {bad / 'train'}:2: 'Paris' does not start with a language code " \
                   "and ':' (as in en:Paris)", last
    assert not (tmp_path / "refused").exists() or not os.listdir(tmp_path / "refused")
