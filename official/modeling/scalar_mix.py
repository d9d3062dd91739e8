"""A learned weighted sum of layers (ELMo's scalar mix; Tenney, Das & Pavlick 2019's probe input).

    mix(h_0 .. h_L) = gamma * sum_l s_l h_l,   s = softmax(w)

w (one scalar per layer, zeros at first: an even average) and gamma (one, 1.0 at first) train
with whatever reads the mix. Two users: the paper's feature-based NER ("weighted sum of the last
four hidden" and "of all layers", Table 7; official/modeling/feature_tagger.py), and layer-wise
probing, where the learned s tells which layers a task draws on: Tenney et al. report the
expected layer E_s[l] = sum_l l * s_l (`expected_layer`), with l the layer's number (0 the
embedding layer's output).

Example (two layers of one 2-d vector; the weights set by hand to s = (0.25, 0.75)):
    >>> import numpy as np
    >>> mix = ScalarMix(2)
    >>> layers = np.array([[[1.0, 0.0]], [[0.0, 1.0]]], np.float32)  # [layers, batch, hidden]
    >>> mix.build(layers.shape)
    >>> _ = mix.scalar_weights.assign(np.log([0.25, 0.75]).astype(np.float32))
    >>> _ = mix.gamma.assign(2.0)
    >>> np.round(np.asarray(mix(layers)), 4).tolist()
    [[0.5, 1.5]]
    >>> np.round(mix.weights_softmax(), 4).tolist(), round(expected_layer(mix.weights_softmax()), 4)
    ([0.25, 0.75], 0.75)
"""

from __future__ import annotations

from typing import Sequence

import keras
import numpy as np
from keras import ops


@keras.saving.register_keras_serializable(package="official")
class ScalarMix(keras.layers.Layer):
    """gamma * sum_l softmax(w)_l * layers[l].

    Args:
      num_layers: how many layers are mixed.

    Call args:
      layers: [num_layers, ...] the layers stacked on the first axis (any shape after it).
    Returns:
      [...] their mix, in the input's dtype.
    """

    def __init__(self, num_layers: int, **kwargs):
        super().__init__(**kwargs)
        if num_layers < 1:
            raise ValueError(f"num_layers: must be positive, got {num_layers}")
        self.num_layers = num_layers

    def build(self, layers_shape):
        if layers_shape[0] is not None and layers_shape[0] != self.num_layers:
            raise ValueError(f"{self.name}: mixes {self.num_layers} layers, "
                             f"given {layers_shape[0]}")
        # Mixing weights stay float32 under a half-precision policy: a softmax of few scalars.
        self.scalar_weights = self.add_weight(name="scalar_weights", shape=(self.num_layers,),
                                              initializer="zeros", autocast=False)
        self.gamma = self.add_weight(name="gamma", shape=(), initializer="ones", autocast=False)

    def call(self, layers):
        weights = ops.softmax(self.scalar_weights) * self.gamma
        shape = (self.num_layers,) + (1,) * (len(layers.shape) - 1)
        return ops.sum(ops.cast(ops.reshape(weights, shape), layers.dtype) * layers, axis=0)

    def weights_softmax(self) -> np.ndarray:
        """s = softmax(w), float64 [num_layers]."""
        w = np.asarray(keras.ops.convert_to_numpy(self.scalar_weights), np.float64)
        e = np.exp(w - w.max())
        return e / e.sum()

    def get_config(self):
        return {**super().get_config(), "num_layers": self.num_layers}


def expected_layer(weights: Sequence[float], layers: Sequence[int] | None = None) -> float:
    """Tenney et al.'s E_s[l] = sum_l l * s_l: the mix's centre of gravity, in layer numbers
    (`layers`, default 0..len(weights)-1). `weights` must sum to 1."""
    weights = np.asarray(weights, np.float64)
    layers = np.arange(len(weights)) if layers is None else np.asarray(layers, np.float64)
    return float(np.sum(weights * layers))
