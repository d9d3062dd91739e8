"""Tests for official.modeling.scalar_mix and the cumulative gains of official.probing.study."""

import keras
import numpy as np
import pytest

from official.modeling.scalar_mix import ScalarMix, expected_layer
from official.probing.study import cumulative_gains


def test_mix_is_gamma_times_softmax_weighted_sum():
    rng = np.random.default_rng(0)
    layers = rng.normal(size=(4, 3, 5, 8)).astype(np.float32)  # [layers, batch, seq, hidden]
    w, gamma = np.array([0.3, -1.0, 2.0, 0.5], np.float32), 1.7
    mix = ScalarMix(4)
    mix.build(layers.shape)
    mix.scalar_weights.assign(w)
    mix.gamma.assign(gamma)
    s = np.exp(w) / np.exp(w).sum()
    expected = gamma * np.einsum("l,lbsh->bsh", s, layers)
    np.testing.assert_allclose(np.asarray(mix(layers)), expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(mix.weights_softmax(), s, rtol=1e-6)
    assert expected_layer(s) == pytest.approx(float((s * np.arange(4)).sum()))
    assert expected_layer([0.5, 0.5], layers=[3, 5]) == pytest.approx(4.0)


def test_a_fresh_mix_averages_and_round_trips_its_config():
    mix = ScalarMix(3, name="m")
    x = np.stack([np.full((2, 4), v, np.float32) for v in (1.0, 2.0, 6.0)])
    np.testing.assert_allclose(np.asarray(mix(x)), np.full((2, 4), 3.0), rtol=1e-6)
    again = ScalarMix.from_config(mix.get_config())
    assert again.num_layers == 3 and again.name == "m"
    with pytest.raises(ValueError, match="mixes 3 layers, given 2"):
        ScalarMix(3)(np.zeros((2, 1, 4), np.float32))
    assert isinstance(keras.layers.deserialize(keras.layers.serialize(mix)), ScalarMix)


def test_cumulative_gains_by_hand():
    # Mixes of layers 0..l score 0.50, 0.70, 0.80, 0.80: gains 0.2, 0.1, 0.0 at layers 1, 2, 3.
    deltas, centre = cumulative_gains([0.5, 0.7, 0.8, 0.8])
    np.testing.assert_allclose(deltas, [0.2, 0.1, 0.0], atol=1e-12)
    assert centre == pytest.approx((1 * 0.2 + 2 * 0.1) / 0.3)
    assert np.isnan(cumulative_gains([0.5, 0.5])[1])
