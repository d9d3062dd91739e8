"""official/api.py: BERT from Python, each checked against an independent path.

- `load_encoder` on each format (an original TF1 release, and it converted to TF2, Hugging Face
  and keras-hub) gives what `python -m run_scripts.extract_features` writes of the release for
  the same text (the command-line path, run as a user runs it) to 1e-6.
- `fit` on raw strings learns a toy task, and its first step's loss is the numpy cross-entropy
  of the model's logits on that batch, and the loss the Trainer takes of them (dropout off, so
  both see the same function).
- Every text model, a LoRA-adapted one and the bare encoder round-trip through `.keras` files
  (outputs equal to 1e-6, the vocab carried inside); `export` is what export_saved_model makes
  of the same weights;
  `save_checkpoint` writes every format and `load_encoder` reads each back.
- A bad path, and a vocab bigger than the config's, are one line naming them; a path that is no
  checkpoint (a SavedModel export, a .keras file, an empty folder, another file) is named for
  what it is, in Python's words (`config=`, not a flag).
- `fit` refuses labels that are not class ids, naming the first and its index.
- A `.keras` file loads after `import keras, official` alone; one whose encoder config has a key
  this version lacks, or shapes its weights do not have, is one line naming the key or weight.
- The README's "From Python" examples run as written (its module docstring's example runs in
  tests/test_docstrings.py, with every module's).
"""

import json
import os
import shutil
import subprocess
import sys
import zipfile

import keras
import numpy as np
import pytest
import tensorflow as tf

import official
from official import api
from official.checkpoints import converter, training
from official.checkpoints.errors import CheckpointError
from official.configs import BertConfig
from official.export import jobs
from official.peft import methods
from official.tasks.classification import example_losses
from official.text.tokenizer import FullTokenizer
from official.text.vocab import VocabError
from tests.cli import ENV, PATIENCE, REPO, run_module, succeeded

SEQ = 16
TEXTS = ["The cat sat on the mat.", "Zoë lives in Zürich, near the lake.", "a", ""]
FORMATS = ("tf1", "tf2", "hf", "keras_hub")


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    return api.example_checkpoint(str(tmp_path_factory.mktemp("release")))


@pytest.fixture(scope="module")
def formats(release, tmp_path_factory):
    """{format: a folder of the release in that format}."""
    root = tmp_path_factory.mktemp("formats")
    paths = {"tf1": release}
    for name in FORMATS[1:]:
        converter.convert("tf1", release, str(root / name), output_format=name)
        paths[name] = str(root / name)
    return paths


def _features(path):
    with open(path, encoding="utf-8") as f:
        return [[token["layers"][0]["values"] for token in json.loads(line)["features"]]
                for line in f]


def test_load_encoder_on_each_format_gives_what_extract_features_writes(formats, tmp_path):
    """The command-line path on the release; each format holds the same weights."""
    text = tmp_path / "input.txt"
    text.write_text("\n".join(TEXTS[:3]) + "\n")
    release = formats["tf1"]
    succeeded(run_module("run_scripts.extract_features", f"--input_file={text}",
                         f"--output_file={tmp_path / 'features.jsonl'}",
                         f"--vocab_file={release}/vocab.txt", f"--init_checkpoint={release}",
                         f"--bert_config_file={release}/bert_config.json", "--layers=-1",
                         f"--max_seq_length={SEQ}"))
    written = _features(tmp_path / "features.jsonl")
    inputs = api.load_preprocessor(release, SEQ)(tf.constant(TEXTS[:3]))
    lengths = inputs["input_mask"].numpy().sum(1)
    assert [len(row) for row in written] == lengths.tolist()
    for name, path in formats.items():
        sequence = api.load_encoder(path)(inputs)["sequence_output"].numpy()
        for row, values in enumerate(written):
            np.testing.assert_allclose(sequence[row, :lengths[row]], values, atol=1e-6,
                                       err_msg=name)


def test_fit_learns_and_its_first_loss_is_the_cross_entropy_of_the_logits(tmp_path):
    path = api.example_checkpoint(str(tmp_path / "no_dropout"), dropout=0.0)
    classifier = official.BertTextClassifier.from_checkpoint(path, num_classes=2, seq_length=SEQ)
    texts = ["a good film", "a bad film", "good", "bad", "very good", "very bad"] * 4
    labels = np.array([1, 0] * 12)
    classifier.compile(optimizer=official.optimizer(classifier, 1e-3, 60, 6),
                       loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                       metrics=["accuracy"])
    logits = classifier.predict(texts[:8], verbose=0).astype(np.float64)
    shifted = logits - logits.max(-1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))
    expected = -log_probs[np.arange(8), labels[:8]].mean()
    first = classifier.train_on_batch(tf.constant(texts[:8]), labels[:8], return_dict=True)
    assert first["loss"] == pytest.approx(expected, rel=1e-5)
    # ... and the loss the Trainer takes of a classification batch (run_classifier's).
    trainer_loss = float(tf.reduce_mean(example_losses(tf.constant(logits, tf.float32),
                                                       tf.constant(labels[:8]), False)))
    assert first["loss"] == pytest.approx(trainer_loss, rel=1e-5)
    dataset = tf.data.Dataset.from_tensor_slices((texts, labels)).shuffle(24, seed=1).batch(8)
    history = classifier.fit(dataset, epochs=15, verbose=0)
    assert history.history["loss"][-1] < 0.5 * history.history["loss"][0]
    assert classifier.evaluate(np.array(texts), labels, verbose=0, return_dict=True)[
        "accuracy"] == 1.0


def _outputs(model, inputs):
    """The model's outputs on `inputs` (texts, or a pair of text arrays), called eagerly: a
    `predict` would trace a function for each model."""
    return [np.asarray(x) for x in
            tf.nest.flatten(model(tf.nest.map_structure(tf.constant, inputs)))]


@pytest.mark.parametrize("kind", ["classifier", "pair classifier", "token classifier",
                                  "span labeler", "sentence encoder", "lora classifier"])
def test_each_text_model_round_trips_through_a_keras_file(release, tmp_path, kind):
    build = {
        "classifier": lambda: official.BertTextClassifier.from_checkpoint(
            release, num_classes=3, seq_length=SEQ),
        "pair classifier": lambda: official.BertTextClassifier.from_checkpoint(
            release, num_classes=2, seq_length=SEQ, pair=True),
        "token classifier": lambda: official.BertTextTokenClassifier.from_checkpoint(
            release, num_classes=5, seq_length=SEQ),
        "span labeler": lambda: official.BertTextSpanLabeler.from_checkpoint(
            release, seq_length=SEQ),
        "sentence encoder": lambda: official.BertTextSentenceEncoder.from_checkpoint(
            release, pooling="mean", normalize=True, seq_length=SEQ),
        "lora classifier": lambda: official.BertTextClassifier.from_checkpoint(
            release, num_classes=2, seq_length=SEQ).adapt(methods.from_flags(lora_rank=2)),
    }[kind]
    model = build()
    pair = kind in ("pair classifier", "span labeler")
    inputs = (np.array(TEXTS), np.array(TEXTS[::-1])) if pair else np.array(TEXTS)
    if kind == "lora classifier":  # LoRA's B starts at 0: move it, so the file must carry it
        for variable in model.trainable_variables:
            variable.assign(np.full(variable.shape, 0.01, np.float32))
    saved = str(tmp_path / "model.keras")
    model.save(saved)
    loaded = keras.models.load_model(saved)
    assert type(loaded) is type(model)
    for a, b in zip(_outputs(model, inputs), _outputs(loaded, inputs)):
        np.testing.assert_allclose(b, a, atol=1e-6)
    assert len(loaded.trainable_variables) == len(model.trainable_variables)


def test_the_encoder_round_trips_through_a_keras_file(release, tmp_path):
    encoder = official.load_encoder(release)
    inputs = official.load_preprocessor(release, SEQ)(tf.constant(TEXTS))
    encoder.save(str(tmp_path / "encoder.keras"))
    loaded = keras.models.load_model(str(tmp_path / "encoder.keras"))
    np.testing.assert_allclose(loaded(inputs)["pooled_output"], encoder(inputs)["pooled_output"],
                               atol=1e-6)


def test_the_vocab_travels_inside_the_keras_file(tmp_path):
    path = api.example_checkpoint(str(tmp_path / "release"))
    model = official.BertTextClassifier.from_checkpoint(path, num_classes=2, seq_length=SEQ)
    expected = _outputs(model, np.array(TEXTS))
    model.save(str(tmp_path / "model.keras"))
    os.remove(os.path.join(path, "vocab.txt"))
    loaded = keras.models.load_model(str(tmp_path / "model.keras"))
    np.testing.assert_allclose(_outputs(loaded, np.array(TEXTS)), expected, atol=1e-6)


def test_export_is_what_export_saved_model_makes_of_the_same_weights(release, tmp_path):
    model = official.BertTextClassifier.from_checkpoint(release, num_classes=2, seq_length=SEQ,
                                                        pair=True)
    for variable in model.trainable_variables:  # a head that is not zero, as after training
        variable.assign(variable + 0.01)
    path = model.export(str(tmp_path / "serving"), labels=["neg", "pos"])
    # The same weights as a fine-tuning output_dir, exported by the command's library half.
    run = tmp_path / "run"
    run.mkdir()
    tf.train.Checkpoint(**training.model_roots(model.model)).write(str(run / "model.ckpt-1"))
    (run / "checkpoint").write_text('model_checkpoint_path: "model.ckpt-1"\n')
    model.encoder.config.to_json_file(str(run / "bert_config.json"))
    reference = jobs.export(jobs.ExportOptions(
        export_type="classifier", export_dir=str(tmp_path / "reference"), max_seq_length=SEQ,
        vocab_file=model.preprocessor.vocab_file, init_checkpoint=str(run),
        labels=["neg", "pos"], pair=True))
    pairs = {"text_a": tf.constant(TEXTS), "text_b": tf.constant(TEXTS[::-1])}
    served, expected = (tf.saved_model.load(p).signatures["serving_default"](**pairs)
                        for p in (path, reference))
    np.testing.assert_allclose(served["probabilities"], expected["probabilities"], atol=1e-6)
    assert served["label"].numpy().tolist() == expected["label"].numpy().tolist()
    np.testing.assert_allclose(served["probabilities"], tf.nn.softmax(
        _outputs(model, (np.array(TEXTS), np.array(TEXTS[::-1])))[0]), atol=1e-6)


@pytest.mark.parametrize("format", FORMATS)
def test_save_checkpoint_writes_each_format_load_encoder_reads_back(release, tmp_path, format):
    model = official.BertTextClassifier.from_checkpoint(release, num_classes=2, seq_length=SEQ)
    for variable in model.encoder.trainable_variables:  # not the release's weights any more
        variable.assign(variable * 1.5)
    official.save_checkpoint(model, str(tmp_path / format), format=format)
    inputs = model.preprocessor(tf.constant(TEXTS))
    expected = model.encoder(inputs)["sequence_output"]
    read = official.load_encoder(str(tmp_path / format))(inputs)["sequence_output"]
    np.testing.assert_allclose(read, expected, atol=1e-5)


def test_a_bad_path_is_one_line(tmp_path):
    with pytest.raises(CheckpointError) as error:
        official.load_encoder(str(tmp_path / "absent"))
    assert str(error.value) == f"{tmp_path / 'absent'}: no such file or folder"


@pytest.mark.parametrize("kind", ["export_dir", "export version", "keras file", "empty folder",
                                  "vocab file", "index file", "checkpoint without config"])
def test_a_path_that_is_no_checkpoint_is_named_for_what_it_is(release, tmp_path, kind):
    """One line naming the path, what it is and what to pass instead, in Python's words (the
    command line's message names --bert_config_file: tests/test_convert_checkpoint.py)."""
    (tmp_path / "exports" / "17").mkdir(parents=True)
    (tmp_path / "exports" / "17" / "saved_model.pb").write_bytes(b"")
    (tmp_path / "empty").mkdir()
    (tmp_path / "no_config").mkdir()
    for name in os.listdir(release):
        if name.startswith("bert_model.ckpt"):
            shutil.copy(os.path.join(release, name), tmp_path / "no_config")
    version = str(tmp_path / "exports" / "17")
    path, expected = {
        "export_dir": (str(tmp_path / "exports"),
                       f"a SavedModel export, not a checkpoint: load it with "
                       f"tf.saved_model.load({version!r}), or pass the checkpoint it was "
                       "exported from"),
        "export version": (version, f"a SavedModel export, not a checkpoint: load it with "
                                    f"tf.saved_model.load({version!r})"),
        "keras file": (str(tmp_path / "model.keras"),
                       "a .keras file, not a checkpoint: load it with keras.models.load_model("),
        "empty folder": (str(tmp_path / "empty"), "an empty folder, no checkpoint in it"),
        "vocab file": (os.path.join(release, "vocab.txt"),
                       "a file, not a checkpoint: pass a checkpoint's folder or its prefix"),
        "index file": (os.path.join(release, "bert_model.ckpt.index"),
                       "a file, not a checkpoint: pass a checkpoint's folder or its prefix"),
        "checkpoint without config": (str(tmp_path / "no_config"),
                                      "no bert_config.json beside the checkpoint (in "
                                      f"{tmp_path / 'no_config'}); pass config= (a BertConfig "
                                      "or its bert_config.json)"),
    }[kind]
    if kind == "keras file":
        (tmp_path / "model.keras").write_bytes(b"PK")
    with pytest.raises(CheckpointError) as error:
        official.load_encoder(path)
    message = str(error.value)
    assert message.startswith(f"{path}: {expected}") and "\n" not in message
    assert "--" not in message


def test_a_checkpoint_folder_that_holds_exports_too_is_a_checkpoint_folder(release, tmp_path):
    shutil.copytree(release, tmp_path / "run")
    (tmp_path / "run" / "17").mkdir()
    (tmp_path / "run" / "17" / "saved_model.pb").write_bytes(b"")
    assert official.load_encoder(str(tmp_path / "run")).config.hidden_size == 32


def test_config_is_the_bert_config_file_of_python(release, tmp_path):
    """A checkpoint without its config, the release's or a training loop's (read through a
    model of the config), loads with `config=` (a file or a BertConfig) as the release does with
    the one beside it."""
    for name in os.listdir(release):
        if name.startswith("bert_model.ckpt"):
            shutil.copy(os.path.join(release, name), tmp_path)
    config_file = os.path.join(release, "bert_config.json")
    inputs = official.load_preprocessor(release, SEQ)(tf.constant(TEXTS))
    released = official.load_encoder(release)
    expected = released(inputs)["pooled_output"]
    run = tmp_path / "run"
    tf.train.Checkpoint(**training.model_roots(released)).write(str(run / "model.ckpt-1"))
    (run / "checkpoint").write_text('model_checkpoint_path: "model.ckpt-1"\n')
    for path in (str(tmp_path / "bert_model.ckpt"), str(run)):
        for config in (config_file, BertConfig.from_json_file(config_file)):
            encoder = official.load_encoder(path, config=config)
            np.testing.assert_allclose(encoder(inputs)["pooled_output"], expected, atol=1e-6)
    classifier = official.BertTextClassifier.from_checkpoint(
        str(tmp_path), num_classes=2, seq_length=SEQ, config=config_file,
        vocab_file=os.path.join(release, "vocab.txt"))
    assert classifier.encoder.config == BertConfig.from_json_file(config_file)


@pytest.fixture(scope="module")
def classifier(release):
    return official.BertTextClassifier.from_checkpoint(release, num_classes=2, seq_length=SEQ)


@pytest.mark.parametrize("labels, expected", [
    (["pos", "neg", "pos", "neg"], "y: 'pos' at index 0"),
    ([1.0, 0.0, float("nan"), 0.0], "y: nan at index 2"),
    ([1, 0, 1, 2], "y: 2 at index 3"),
    (np.array([1, -1, 0, 0]), "y: -1 at index 1"),
    ([1, 0, 0.5, 1], "y: 0.5 at index 2"),
    ([1, "a", 0, None], "y: 'a' at index 1"),  # as given: numpy would make the 1 a string too
    ([1, 0, None, 1], "y: None at index 2"),
])
def test_fit_refuses_labels_that_are_not_class_ids(classifier, labels, expected):
    """Before Keras sees them (a string deep in its adapter: 'Invalid dtype: str96'; NaN cast
    to an integer: 'label value of -9223372036854775808')."""
    texts = ["a gripping, funny film", "dull and far too long", "a delight", "a mess"]
    for run in (classifier.fit, classifier.evaluate):
        with pytest.raises(ValueError) as error:
            run(texts, labels, batch_size=4, verbose=0)
        assert str(error.value) == (f"{expected} is not a valid label: labels must be class "
                                    "ids 0..1 (num_classes=2)")


def test_the_other_models_labels_are_checked_as_theirs(release):
    """A token classifier's labels are ids per position (the index names both); a one-output
    classifier's are scores, any finite number."""
    tagger = official.BertTextTokenClassifier.from_checkpoint(release, num_classes=3,
                                                              seq_length=SEQ)
    tags = np.zeros((2, SEQ), np.int64)
    tags[1, 5] = 3
    with pytest.raises(ValueError, match=r"^y: 3 at index \(1, 5\) is not a valid label: "
                                         r"labels must be class ids 0..2 \(num_classes=3\)$"):
        tagger.fit(["a text", "another"], tags, verbose=0)
    regressor = official.BertTextClassifier.from_checkpoint(release, num_classes=1,
                                                            seq_length=SEQ)
    with pytest.raises(ValueError, match=r"^y: inf at index 1 is not a valid label: labels of "
                                         r"num_classes=1 \(a regression\) must be finite"):
        regressor.fit(["a text", "another"], [4.2, float("inf")], verbose=0)


def _edited(saved, edited, **encoder_config):
    """A copy of the .keras file `saved` whose encoder config has `encoder_config` set."""
    with zipfile.ZipFile(saved) as source, zipfile.ZipFile(edited, "w") as target:
        for item in source.infolist():
            data = source.read(item.filename)
            if item.filename == "config.json":
                config = json.loads(data)
                config["config"]["model"]["config"]["encoder"]["config"].update(encoder_config)
                data = json.dumps(config).encode()
            target.writestr(item, data)
    return str(edited)


@pytest.fixture(scope="module")
def saved_classifier(classifier, tmp_path_factory):
    path = str(tmp_path_factory.mktemp("saved") / "classifier.keras")
    classifier.predict(TEXTS, verbose=0)  # built, as a user's model is when saved
    classifier.save(path)
    return path


@pytest.mark.parametrize("setting, expected", [
    ({"rotary_embeddings": True}, "the .keras file's encoder config: unknown key "
                                  "rotary_embeddings; a newer version's setting would not apply "
                                  "here"),
    ({"num_hidden_layer": 2}, "the .keras file's encoder config: unknown key num_hidden_layer "
                              "(did you mean num_hidden_layers?); a newer version's setting "
                              "would not apply here"),
    ({"hidden_size": 64}, "the .keras file's config builds embeddings/word_embeddings as "
                          "[30522, 64], a shape none of its saved weights has (first left over: "
                          "[30522, 32]): the config does not fit the weights"),
])
def test_a_keras_file_whose_config_this_version_cannot_honour_is_one_line(
        saved_classifier, tmp_path, setting, expected):
    """Unknown keys would be dropped in silence, and Keras names no shape for a config that does
    not fit the weights ('17 objects could not be loaded ... expected 3 variables, but received
    0')."""
    with pytest.raises(ValueError) as error:
        keras.models.load_model(_edited(saved_classifier, tmp_path / "edited.keras", **setting))
    assert str(error.value) == expected


def test_a_keras_file_loads_after_import_keras_official(saved_classifier):
    """In a fresh process that imported nothing else: Keras finds the classes (official's import
    runs official/api.py once Keras is loaded); `import official` alone still loads no
    TensorFlow."""
    def python(code):
        return subprocess.run([sys.executable, "-c", code, saved_classifier], cwd=REPO, env=ENV,
                              capture_output=True, text=True, timeout=PATIENCE)
    alone = python("import sys, official; print('tensorflow' in sys.modules)")
    assert alone.returncode == 0 and alone.stdout.strip() == "False", alone.stderr[-2000:]
    loaded = python("import sys, keras, official; "
                    "print(type(keras.models.load_model(sys.argv[1])).__name__)")
    assert loaded.returncode == 0, loaded.stderr[-2000:]
    assert loaded.stdout.strip() == "BertTextClassifier"


def test_a_vocab_the_config_cannot_hold_names_both(release, tmp_path):
    vocab_file = tmp_path / "big_vocab.txt"
    with open(os.path.join(release, "vocab.txt"), encoding="utf-8") as f:
        vocab_file.write_text(f.read() + "extra1\nextra2\n")
    with pytest.raises(VocabError) as error:
        official.BertTextClassifier.from_checkpoint(release, num_classes=2,
                                                    vocab_file=str(vocab_file))
    assert str(vocab_file) in str(error.value) and release in str(error.value)
    assert "\n" not in str(error.value)


def _readme_blocks() -> list[str]:
    """The ```python blocks of the README's "From Python" section, in order."""
    with open(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                           "README.md"), encoding="utf-8") as f:
        section = f.read().split("## From Python", 1)[1].split("\n## ", 1)[0]
    return [block.split("```", 1)[0] for block in section.split("```python\n")[1:]]


def test_the_readme_examples_run(release, tmp_path, monkeypatch):
    """Each block runs as written, one after another in one namespace, on the tiny release
    (its folder for BERT's name), in an empty folder."""
    blocks = _readme_blocks()
    assert len(blocks) == 4
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    for block in blocks:
        exec(compile(block.replace('"uncased_L-12_H-768_A-12"', repr(release)), "README.md",
                     "exec"), namespace)
    assert namespace["vectors"].shape == (2, 32)
    assert namespace["pooled"].shape == (1, 32)
    assert [v.path for v in namespace["tuned"].trainable_variables if "lora" in v.path]
    assert os.path.isfile("classifier.keras") and os.path.isdir(namespace["serving_path"])
    assert os.path.isfile(os.path.join("classifier_hf", "config.json"))
    texts = ["a delight", "a mess"]
    np.testing.assert_allclose(namespace["reloaded"].predict(texts, verbose=0),
                               namespace["classifier"].predict(texts, verbose=0), atol=1e-6)


def test_the_preprocessor_serves_inside_a_savedmodel(release, tmp_path):
    """The layer in a tf.function saved as a SavedModel: the same ids once loaded back, as the
    preprocessor export's (official/export/preprocessing.py) on the same texts."""
    preprocessor = official.load_preprocessor(release, seq_length=SEQ, pair=True)
    module = tf.Module()
    module.preprocessor = preprocessor
    module.serve = tf.function(lambda a, b: preprocessor((a, b)), input_signature=[
        tf.TensorSpec([None], tf.string), tf.TensorSpec([None], tf.string)])
    tf.saved_model.save(module, str(tmp_path / "preprocessor"))
    loaded = tf.saved_model.load(str(tmp_path / "preprocessor"))
    ids = loaded.serve(tf.constant(TEXTS), tf.constant(TEXTS[::-1]))
    export = jobs.serving_module(jobs.ExportOptions(
        export_type="preprocessor", export_dir="", max_seq_length=SEQ,
        vocab_file=preprocessor.vocab_file), FullTokenizer(preprocessor.vocab_file))
    expected = export.bert_pack_inputs([export.tokenize(tf.constant(TEXTS)),
                                        export.tokenize(tf.constant(TEXTS[::-1]))], SEQ)
    for name in ("input_word_ids", "input_mask", "input_type_ids"):
        np.testing.assert_array_equal(ids[name], expected[name])
