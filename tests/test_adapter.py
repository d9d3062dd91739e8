"""official/modeling/adapter.py and TransformerBlock.add_adapters against numpy (float64):
Houlsby's bottleneck x + gelu(x W1 + b1) W2 + b2, in adapter-bert's places of a BERT layer."""

import keras
import numpy as np
import pytest

from official.modeling.adapter import BottleneckAdapter
from official.modeling.transformer import TransformerBlock
from tests.test_encoder import attention_reference, gelu_tanh, layer_norm, randomize, weights_of


def adapter_reference(x, w):
    """adapter-bert's feedforward_adapter: x + gelu(x W1 + b1) W2 + b2 (its tanh GELU)."""
    return x + gelu_tanh(x @ w["weights1"] + w["biases1"]) @ w["weights2"] + w["biases2"]


def adapted_block_reference(x, mask, w, num_heads):
    """One post-LN BERT layer with an adapter after each sub-layer's output (adapter-bert's
    transformer_model: projection, dropout, adapter, then LayerNorm of the residual sum)."""
    sub = lambda prefix: {k.removeprefix(prefix): v for k, v in w.items()  # noqa: E731
                          if k.startswith(prefix)}
    attended, _ = attention_reference(x, mask, sub("attention/"), num_heads)
    x = layer_norm(x + adapter_reference(attended, sub("attention_adapter/")),
                   w["attention_layer_norm/gamma"], w["attention_layer_norm/beta"])
    h = gelu_tanh(x @ w["intermediate_dense/kernel"] + w["intermediate_dense/bias"])
    h = h @ w["output_dense/kernel"] + w["output_dense/bias"]
    return layer_norm(x + adapter_reference(h, sub("output_adapter/")),
                      w["output_layer_norm/gamma"], w["output_layer_norm/beta"])


def test_adapter_matches_numpy_and_has_adapter_berts_shapes():
    adapter = BottleneckAdapter(8)
    adapter.build((None, None, 16))
    randomize(adapter)
    x = np.random.default_rng(0).normal(size=(2, 5, 16)).astype(np.float32)

    np.testing.assert_allclose(adapter(x), adapter_reference(x.astype(np.float64),
                                                             weights_of(adapter)), atol=1e-5)
    assert {w.name: tuple(w.shape) for w in adapter.weights} == {
        "weights1": (16, 8), "biases1": (1, 8), "weights2": (8, 16), "biases2": (1, 16)}


def test_a_fresh_adapter_is_near_the_identity():
    """W1, W2 ~ truncated normal of stddev 1e-3, zero biases: for x of unit scale in d=128 and a
    bottleneck of 64, x W1 has stddev ~1e-2, its GELU ~5e-3, times W2 ~5e-5 (max of 512 entries
    ~1e-4); Keras's default Glorot initialisation would change x by order 1."""
    keras.utils.set_random_seed(1)
    adapter = BottleneckAdapter(64)
    x = np.random.default_rng(1).normal(size=(4, 128)).astype(np.float32)
    change = np.abs(np.asarray(adapter(x)) - x).max()
    assert 0 < change < 1e-3
    assert np.abs(adapter.weights1.numpy()).max() <= 2e-3  # truncated at two stddevs
    assert not adapter.biases1.numpy().any() and not adapter.biases2.numpy().any()


def test_block_with_adapters_matches_numpy(make_inputs):
    block = TransformerBlock(num_heads=4, intermediate_size=48)
    block.build((None, None, 32))
    block.add_adapters(6)
    randomize(block)
    x = np.random.default_rng(2).normal(size=(3, 7, 32)).astype(np.float32)
    mask = make_inputs(3, 7)["input_mask"]

    expected = adapted_block_reference(x.astype(np.float64), mask, weights_of(block), 4)
    np.testing.assert_allclose(block(x, mask), expected, atol=1e-5)
    # [CLS] alone (a classifier's last layer) goes through the same adapters.
    np.testing.assert_allclose(block(x, mask, first_token_only=True), expected[:, :1], atol=1e-5)


def test_fresh_adapters_leave_the_block_as_it_was(make_inputs):
    block = TransformerBlock(num_heads=4, intermediate_size=48)
    block.build((None, None, 32))
    x = np.random.default_rng(3).normal(size=(2, 6, 32)).astype(np.float32)
    mask = make_inputs(2, 6)["input_mask"]
    before = np.asarray(block(x, mask))

    block.add_adapters(16)

    np.testing.assert_allclose(block(x, mask), before, atol=1e-6)
    with pytest.raises(ValueError, match="already has adapters"):
        block.add_adapters(16)


def test_a_keras_file_keeps_adapters_where_earlier_versions_wrote_them(tiny_config, make_inputs,
                                                                      tmp_path):
    """A `.keras` file addresses weights by attribute path: adapters have always been the
    block's `attention_adapter` and `output_adapter`, so files saved before and after read the
    same (the layer of any method inserted at a place is its block's attribute, by its name)."""
    import zipfile

    import h5py

    from official.modeling.encoder import build_encoder
    from official.modeling.models import BertClassifier

    model = BertClassifier(build_encoder(tiny_config), num_labels=2)
    for block in model.encoder.transformer_layers:
        block.add_adapters(4)
    randomize(model)
    model.save(tmp_path / "adapted.keras")
    with zipfile.ZipFile(tmp_path / "adapted.keras") as archive:
        archive.extract("model.weights.h5", tmp_path)
    paths = []
    with h5py.File(tmp_path / "model.weights.h5") as weights:
        weights.visit(paths.append)
    for name in ("attention_adapter", "output_adapter"):
        held = [p for p in paths if p.split("/")[-2:-1] == ["vars"] and f"/{name}/" in p]
        assert len(held) == 4 * tiny_config.num_hidden_layers, (name, held)

    # A model with adapters inserted reads them back (its config does not carry them).
    fresh = BertClassifier(build_encoder(tiny_config), num_labels=2)
    for block in fresh.encoder.transformer_layers:
        block.add_adapters(4)
    fresh.load_weights(tmp_path / "model.weights.h5")
    inputs = make_inputs(2, 8)
    np.testing.assert_allclose(fresh(inputs), model(inputs), atol=1e-6)
