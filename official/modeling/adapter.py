"""`BottleneckAdapter`: the adapter of Houlsby et al. 2019 ("Parameter-Efficient Transfer Learning
for NLP"), as google-research/adapter-bert computes it.

    adapter(x) = x + gelu(x W1 + b1) W2 + b2        W1 [hidden, size], W2 [size, hidden]

A bottleneck of `size` units with a skip connection around it. W1 and W2 start from a truncated
normal of stddev 1e-3 and the biases from zeros, so the adapter starts as (nearly) the identity
and an adapted BERT computes what the pretrained one did: training begins where pretraining ended
(the paper found training unstable when the initialisation strays far from the identity).
`TransformerBlock.add_adapters` places two in every layer.

The variables have adapter-bert's names and shapes (`original_variables`, the checkpoints' name
table): beside the sub-layer they follow, `<sub-layer>/adapters/weights1` [hidden, size],
`biases1` [1, size], `weights2` [size, hidden], `biases2` [1, hidden], e.g.
bert/encoder/layer_0/attention/output/adapters/weights1; the GELU is the original's tanh form,
adapter-bert's. An adapter cannot fold into the base's matrices (a GELU sits between its two).
"""

from __future__ import annotations

from typing import Sequence

import keras
from keras import ops

from official.modeling import activations, initializers

# adapter-bert's init_scale: the stddev of W1 and W2's truncated normal.
INIT_STDDEV = 1e-3


@keras.saving.register_keras_serializable(package="official")
class BottleneckAdapter(keras.layers.Layer):
    """x + gelu(x W1 + b1) W2 + b2.

    Call args:
      x: [..., hidden].
    Returns:
      the same shape and dtype.
    """

    def __init__(self, size: int, init_stddev: float = INIT_STDDEV, **kwargs):
        super().__init__(**kwargs)
        if size < 1:
            raise ValueError(f"an adapter needs a positive size, got {size}")
        self.size = size
        self.init_stddev = init_stddev

    def build(self, x_shape):
        hidden = x_shape[-1]
        init = initializers.truncated_normal(self.init_stddev)
        self.weights1 = self.add_weight(name="weights1", shape=(hidden, self.size),
                                        initializer=init)
        self.biases1 = self.add_weight(name="biases1", shape=(1, self.size), initializer="zeros")
        self.weights2 = self.add_weight(name="weights2", shape=(self.size, hidden),
                                        initializer=init)
        self.biases2 = self.add_weight(name="biases2", shape=(1, hidden), initializer="zeros")

    def call(self, x):
        # On [rows, hidden], as the block's own projections run (see TransformerBlock.call).
        rows = ops.reshape(x, (-1, x.shape[-1]))
        h = activations.gelu_tanh(ops.matmul(rows, self.weights1) + self.biases1)
        return x + ops.reshape(ops.matmul(h, self.weights2) + self.biases2, ops.shape(x))

    def original_variables(self, names: Sequence[str]) -> dict[str, keras.Variable]:
        """adapter-bert's names beside the sub-layer `names[0]` (official/modeling/insertion.py)."""
        return {f"{names[0]}/adapters/{name}": getattr(self, name)
                for name in ("weights1", "biases1", "weights2", "biases2")}

    def compute_output_shape(self, x_shape):
        return x_shape

    def get_config(self):
        config = super().get_config()
        config.update(size=self.size, init_stddev=self.init_stddev)
        return config
