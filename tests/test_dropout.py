"""official.modeling.dropout.Dropout: the drop rate, the scale, its seed, plain and XLA graphs.

The references are binomial statistics: with n independent elements kept with probability p,
the kept fraction has standard deviation sqrt(p (1 - p) / n); the bounds below are 6 of those.
"""

import math

import keras
import numpy as np
import pytest
import tensorflow as tf

from official.modeling.dropout import Dropout, xla_random_bits

RATE = 0.1
ROUNDED_RATE = 6554 / 65536  # round(0.1 * 2^16) / 2^16


def _bound(n: int, p: float = ROUNDED_RATE) -> float:
    return 6 * math.sqrt(p * (1 - p) / n)


@pytest.mark.parametrize("shape", [(64, 8, 128, 128), (4096, 257)], ids=["paired", "odd-last"])
def test_drop_rate_and_scale(shape):
    x = tf.ones(shape)
    y = Dropout(RATE, seed=1)(x, training=True).numpy()
    n = y.size
    dropped = y == 0
    assert abs(dropped.mean() - ROUNDED_RATE) < _bound(n)
    np.testing.assert_array_equal(y[~dropped], np.float32(1 / (1 - ROUNDED_RATE)))
    # Each half of the last axis takes one half of a random word: both drop at the rate, and
    # independently of each other (P(both dropped) = rate^2).
    half = shape[-1] // 2
    low, high = dropped[..., :half], dropped[..., half:2 * half]
    for part in (low, high):
        assert abs(part.mean() - ROUNDED_RATE) < _bound(part.size)
    both = (low & high).mean()
    assert abs(both - ROUNDED_RATE ** 2) < _bound(low.size, ROUNDED_RATE ** 2)


def test_masks_are_independent_along_each_axis():
    y = Dropout(RATE, seed=2)(tf.ones((512, 64, 64)), training=True).numpy() == 0
    # Neighbours along every axis are dropped together at rate^2, as independent draws are.
    for a, b in [(y[1:], y[:-1]), (y[:, 1:], y[:, :-1]), (y[..., 1:], y[..., :-1])]:
        together = (a & b).mean()
        assert abs(together - ROUNDED_RATE ** 2) < _bound(a.size, ROUNDED_RATE ** 2)


def test_identity_at_inference_and_at_rate_zero_all_zeros_at_rate_one():
    x = tf.random.stateless_normal((8, 16), [1, 2])
    np.testing.assert_array_equal(Dropout(RATE, seed=3)(x, training=False), x)
    np.testing.assert_array_equal(Dropout(RATE, seed=3)(x), x)
    np.testing.assert_array_equal(Dropout(0.0)(x, training=True), x)
    np.testing.assert_array_equal(Dropout(1.0)(x, training=True), np.zeros((8, 16)))


def test_seeded_layers_repeat_and_successive_calls_differ():
    x = tf.ones((32, 64))
    first, second = Dropout(RATE, seed=4), Dropout(RATE, seed=4)
    a1, a2 = first(x, training=True).numpy(), first(x, training=True).numpy()
    b1 = second(x, training=True).numpy()
    np.testing.assert_array_equal(a1, b1)
    assert (a1 != a2).any()


def test_xla_draws_the_same_mask_as_the_plain_graph():
    x = tf.random.stateless_normal((16, 4, 32, 32), [5, 6])
    masks = []
    for jit in (False, True):
        layer = Dropout(RATE, seed=7)
        masks.append(tf.function(lambda t, layer=layer: layer(t, training=True),
                                 jit_compile=jit)(x).numpy())
    np.testing.assert_array_equal(masks[0], masks[1])


def test_xla_random_bits_draws_another_mask_at_the_same_rate():
    x = tf.ones((64, 8, 128, 128))
    philox_layer, threefry_layer = Dropout(RATE, seed=11), Dropout(RATE, seed=11)
    plain = tf.function(lambda t: philox_layer(t, training=True), jit_compile=True)(x).numpy()

    @tf.function(jit_compile=True)
    def threefry(t):
        with xla_random_bits():
            return threefry_layer(t, training=True)

    y = threefry(x).numpy()
    assert abs((y == 0).mean() - ROUNDED_RATE) < _bound(y.size)
    assert ((y == 0) != (plain == 0)).mean() > 0.1  # another algorithm, other bits


def test_keeps_the_dtype_and_the_gradient_is_the_mask_times_the_scale():
    layer = Dropout(RATE, seed=8, dtype="mixed_bfloat16")
    x = tf.ones((64, 32), tf.bfloat16)
    assert layer(x, training=True).dtype == tf.bfloat16
    layer = Dropout(RATE, seed=9)
    x = tf.random.stateless_normal((64, 32), [1, 1])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = layer(x, training=True)
        total = tf.reduce_sum(y)
    grad = tape.gradient(total, x).numpy()
    kept = y.numpy() != 0
    np.testing.assert_allclose(grad, kept / (1 - ROUNDED_RATE), rtol=1e-6)


def test_config_round_trip_and_no_noise_shape():
    layer = Dropout(RATE, seed=10, name="d")
    restored = keras.saving.deserialize_keras_object(keras.saving.serialize_keras_object(layer))
    assert type(restored) is Dropout
    assert (restored.rate, restored.seed, restored.name) == (RATE, 10, "d")
    with pytest.raises(ValueError, match="noise_shape"):
        Dropout(RATE, noise_shape=(1, 4))
