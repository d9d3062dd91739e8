"""official/modeling/lora.py against numpy: LoRA on chosen column blocks of a fused kernel, the
layer unchanged when fresh, and training that moves A and B only."""

import numpy as np
import pytest
import tensorflow as tf

from official.modeling.lora import LoraDense


def built(units, fan_in=12, **kwargs):
    layer = LoraDense(units, **kwargs)
    layer.build((None, fan_in))
    return layer


def test_lora_on_the_query_and_value_blocks_of_a_fused_kernel_matches_numpy():
    """A [in, 3h] QKV kernel with LoRA on blocks 0 and 2: the key's columns get nothing."""
    hidden, rank, alpha = 8, 3, 6.0
    layer = built(3 * hidden)
    layer.add_lora(rank, alpha, blocks=(2, 0), num_blocks=3)
    rng = np.random.default_rng(0)
    for variable in (*layer.lora_a, *layer.lora_b):
        variable.assign(rng.normal(size=variable.shape).astype(np.float32))
    x = rng.normal(size=(5, 12)).astype(np.float32)

    w, b = layer.kernel.numpy().astype(np.float64), layer.bias.numpy().astype(np.float64)
    (a_q, a_v), (b_q, b_v) = ([v.numpy().astype(np.float64) for v in vs]
                              for vs in (layer.lora_a, layer.lora_b))
    delta = np.zeros_like(w)
    delta[:, :hidden] = a_q @ b_q
    delta[:, 2 * hidden:] = a_v @ b_v
    expected = x @ (w + alpha / rank * delta) + b

    assert layer.lora_blocks == (0, 2)
    np.testing.assert_allclose(layer(x), expected, atol=1e-5)
    assert [tuple(v.shape) for v in layer.lora_a] == [(12, rank)] * 2
    assert [tuple(v.shape) for v in layer.lora_b] == [(rank, hidden)] * 2


def test_the_activation_applies_after_the_update():
    layer = built(6, activation="tanh")
    layer.add_lora(2, 2.0)
    rng = np.random.default_rng(1)
    layer.lora_b[0].assign(rng.normal(size=(2, 6)).astype(np.float32))
    x = rng.normal(size=(3, 12)).astype(np.float32)
    w = layer.kernel.numpy() + layer.lora_a[0].numpy() @ layer.lora_b[0].numpy()
    np.testing.assert_allclose(layer(x), np.tanh(x @ w + layer.bias.numpy()), atol=1e-5)


def test_a_fresh_lora_layer_computes_what_it_did_and_freezes_the_kernel():
    layer = built(9)
    x = np.random.default_rng(2).normal(size=(4, 12)).astype(np.float32)
    before = np.asarray(layer(x))
    layer.add_lora(4, 8.0, blocks=(1,), num_blocks=3)
    np.testing.assert_array_equal(layer(x), before)  # B starts at zero
    assert {v.name for v in layer.trainable_variables} == {"lora_a_1", "lora_b_1"}
    bound = 1 / np.sqrt(12)  # peft's Kaiming-uniform (a = sqrt(5)) for A
    assert np.abs(layer.lora_a[0].numpy()).max() <= bound


def test_training_moves_only_a_and_b():
    layer = built(6)
    layer.add_lora(2, 2.0)
    kernel, bias = layer.kernel.numpy(), layer.bias.numpy()
    x = tf.constant(np.random.default_rng(3).normal(size=(8, 12)), tf.float32)
    optimizer = tf.keras.optimizers.SGD(0.1)
    for _ in range(3):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(layer(x) ** 2)
        grads = tape.gradient(loss, layer.trainable_variables)
        optimizer.apply(grads, layer.trainable_variables)
    np.testing.assert_array_equal(layer.kernel.numpy(), kernel)
    np.testing.assert_array_equal(layer.bias.numpy(), bias)
    assert layer.lora_b[0].numpy().any()


@pytest.mark.parametrize("rank, blocks, num_blocks", [(0, (0,), 1), (2, (3,), 3), (2, (), 1),
                                                      (2, (0, 0), 3), (2, (0,), 4)])
def test_lora_that_does_not_fit_is_refused(rank, blocks, num_blocks):
    with pytest.raises(ValueError, match="does not fit"):
        built(9).add_lora(rank, 1.0, blocks, num_blocks)


def test_lora_needs_a_built_layer_and_comes_once():
    with pytest.raises(ValueError, match="build the layer"):
        LoraDense(4).add_lora(2, 2.0)
    layer = built(4)
    layer.add_lora(2, 2.0)
    with pytest.raises(ValueError, match="already has LoRA"):
        layer.add_lora(2, 2.0)
