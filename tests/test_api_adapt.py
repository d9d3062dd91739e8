"""official/api.py's adapted text models: `.adapt` after Keras has traced a step, and
`save_checkpoint` of an adapted model.

- `.adapt` after `predict` (or `evaluate`) runs the method: the next predict is what a model
  adapted before its first predict gives on the same weights, and evaluate's loss is numpy's mean
  square of those outputs; each differs from the outputs before the method (its vectors set away
  from their identity start), so the comparison can fail. After `fit`, fitting again without
  compiling is refused by Keras and changes nothing (a step traced before the method trained the
  frozen encoder).
- `save_checkpoint` of a LoRA or IA3 model writes plain BERT (tf1, and hf, which has no place for
  a method's variables) that `load_encoder` reads back computing what the adapted encoder does;
  an adapted task model needs its settings. Adapters round-trip through tf1 under their own names
  (read back into an encoder with adapters inserted) and are refused by hf and keras-hub, as
  convert_checkpoint --peft_checkpoint refuses them, nothing written.
"""

import keras
import numpy as np
import pytest
import tensorflow as tf

import official
from official import api
from official.checkpoints import converter, tf1
from official.checkpoints.errors import CheckpointError
from official.peft import methods

SEQ = 16
TEXTS = ["The cat sat on the mat.", "Zoë lives in Zürich, near the lake.", "a", ""]
SETTINGS = {"ia3": methods.from_flags(ia3=True), "lora": methods.from_flags(lora_rank=2),
            "adapters": methods.from_flags(adapter_size=4)}
# The variables of each method that start at identity (IA3's ones, LoRA's B at zeros, adapters'
# near-zero matrices), by the end of their original names.
MOVED = {"ia3": ("ia3_scale", "ia3_input_scale"), "lora": ("/lora_B",),
         "adapters": ("/weights1", "/weights2")}


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    return api.example_checkpoint(str(tmp_path_factory.mktemp("release")))


def _encoder_model(release):
    """Text -> its tokens' mean vector: the encoder's own outputs, of size about 1."""
    return official.BertTextSentenceEncoder.from_checkpoint(release, seq_length=SEQ)


def _move(model, method, seed=0):
    """Sets the method's variables that start at identity to random values."""
    rng = np.random.default_rng(seed)
    moved = [variable for name, variable in tf1.original_names(model.encoder).items()
             if name.endswith(MOVED[method])]
    assert moved
    for variable in moved:
        variable.assign(rng.uniform(0.5, 1.5, variable.shape).astype(np.float32))


@pytest.fixture(scope="module")
def adapted_first(release):
    """`adapted_first(method)`: a sentence encoder adapted by the method before its first step,
    made once a method (each test sets its weights before it predicts)."""
    made = {}

    def make(method):
        if method not in made:
            made[method] = _encoder_model(release).adapt(SETTINGS[method])
        return made[method]

    return make


@pytest.mark.parametrize("method", ["ia3", "lora"])
@pytest.mark.parametrize("step", ["predict", "evaluate"])
def test_adapt_after_a_traced_step_runs_the_method(release, adapted_first, method, step):
    model = _encoder_model(release)
    model.compile(loss="mse")
    zeros = np.zeros((len(TEXTS), model.encoder.config.hidden_size), np.float32)
    before = model.predict(np.array(TEXTS), verbose=0)
    if step == "evaluate":
        model.evaluate(np.array(TEXTS), zeros, verbose=0)
    model.adapt(SETTINGS[method])
    _move(model, method)
    fresh = adapted_first(method)  # adapted before its first step
    fresh.set_weights(model.get_weights())
    expected = fresh.predict(np.array(TEXTS), verbose=0)
    assert np.abs(expected - before).max() > 1e-2  # the method changes the outputs
    if step == "predict":
        np.testing.assert_allclose(model.predict(np.array(TEXTS), verbose=0), expected,
                                   atol=1e-5)
    else:
        np.testing.assert_allclose(model.evaluate(np.array(TEXTS), zeros, verbose=0),
                                   np.mean(expected.astype(np.float64) ** 2), rtol=1e-5)


def test_fit_again_after_adapt_is_refused_and_trains_nothing(release):
    model = _encoder_model(release)
    model.compile(optimizer=keras.optimizers.Adam(1e-2), loss="mse")
    targets = np.ones((len(TEXTS), model.encoder.config.hidden_size), np.float32)
    model.fit(np.array(TEXTS), targets, verbose=0)
    model.adapt(SETTINGS["lora"])
    values = [variable.numpy() for variable in model.variables]
    with pytest.raises(ValueError, match="new optimizer"):
        model.fit(np.array(TEXTS), targets, verbose=0)
    for variable, value in zip(model.variables, values):
        np.testing.assert_array_equal(variable.numpy(), value, err_msg=variable.path)


@pytest.fixture(scope="module")
def folded(release):
    """`folded(method)`: a two-class text classifier adapted by the method with its variables
    moved, its preprocessed TEXTS, and its encoder's and the release's sequence outputs for them;
    made once a method for the tests that save it (saving changes nothing of it)."""
    made = {}

    def make(method):
        if method not in made:
            model = official.BertTextClassifier.from_checkpoint(release, num_classes=2,
                                                                seq_length=SEQ)
            model.adapt(SETTINGS[method])
            _move(model, method)
            inputs = model.preprocessor(tf.constant(TEXTS))
            made[method] = (model, inputs, model.encoder(inputs)["sequence_output"])
        return made[method]

    return make


@pytest.fixture(scope="module")
def release_outputs(release):
    """The release's own encoder's sequence output for TEXTS (preprocessed as the classifiers
    made from it preprocess them)."""
    inputs = official.load_preprocessor(release, seq_length=SEQ)(tf.constant(TEXTS))
    return official.load_encoder(release)(inputs)["sequence_output"]


@pytest.mark.parametrize("method", ["lora", "ia3"])
@pytest.mark.parametrize("format", ["tf1", "hf"])
def test_a_folding_method_is_saved_as_plain_bert(folded, release_outputs, tmp_path, method,
                                                 format):
    model, inputs, expected = folded(method)
    official.save_checkpoint(model, str(tmp_path / format), format=format)
    assert np.abs(expected - release_outputs).max() > 1e-2  # the method changes the outputs
    read = official.load_encoder(str(tmp_path / format))(inputs)["sequence_output"]
    np.testing.assert_allclose(read, expected, atol=1e-5)


def test_an_adapted_task_model_is_saved_with_its_settings(folded, tmp_path):
    model, inputs, _ = folded("ia3")
    with pytest.raises(ValueError, match="adapted by ia3: pass peft="):
        official.save_checkpoint(model.model, str(tmp_path / "refused"))
    assert not (tmp_path / "refused").exists()
    official.save_checkpoint(model.model, str(tmp_path / "out"), peft=SETTINGS["ia3"])
    read = official.load_encoder(str(tmp_path / "out"))(inputs)
    np.testing.assert_allclose(read["pooled_output"], model.encoder(inputs)["pooled_output"],
                               atol=1e-5)


def test_adapters_round_trip_through_tf1_and_are_refused_elsewhere(release, release_outputs,
                                                                     tmp_path):
    model = official.BertTextClassifier.from_checkpoint(release, num_classes=2, seq_length=SEQ)
    model.adapt(SETTINGS["adapters"])
    _move(model, "adapters")
    official.save_checkpoint(model, str(tmp_path / "tf1"))
    back = converter.read("tf1", str(tmp_path / "tf1"))
    assert "bert/encoder/layer_1/output/adapters/weights2" in back.weights  # adapter-bert's names
    adapters = methods.method_of(SETTINGS["adapters"])
    back.inserted = converter.Inserted(  # the names alone do not say which method made them
        "adapters", lambda fresh: adapters.insert(fresh, SETTINGS["adapters"]))
    encoder = converter.build_model(back, "written")
    inputs = model.preprocessor(tf.constant(TEXTS))
    expected = model.encoder(inputs)["sequence_output"]
    assert np.abs(expected - release_outputs).max() > 1e-2
    np.testing.assert_allclose(encoder(inputs)["sequence_output"], expected, atol=1e-5)
    for format in ("hf", "keras_hub"):
        with pytest.raises(CheckpointError, match="has adapters, and .* has no place for them"):
            official.save_checkpoint(model, str(tmp_path / format), format=format)
        assert not (tmp_path / format).exists()
