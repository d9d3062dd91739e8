"""`Ia3Scale`: IA3's learned vector on a projection (Liu et al. 2022, "Few-Shot
Parameter-Efficient Fine-Tuning is Better and Cheaper than In-Context Learning", section 3.3).

IA3 rescales activations elementwise by trained vectors that start at ones:

    on the output of some column blocks    y_j = l_j * (x W_j + b_j)     the keys' l_k, values' l_v
    on the input                            y   = (l * x) W + b           the feed-forward's l_ff

The paper scales the feed-forward's inner activation after its nonlinearity, which is the input
of the feed-forward's output matrix: l_ff sits there ([intermediate]). On the fused QKV kernel
the key's and value's column blocks get their own vector ([hidden] each) and the query's none.
A fresh layer (all ones) leaves the projection as it was. `insert_on(projection, ...)` builds one
and inserts it (`LoraDense.insert`, official/modeling/insertion.py).

Names in the checkpoints' table, beside the matrix they scale: `<matrix>/ia3_scale` (output
columns, e.g. bert/encoder/layer_0/attention/self/key/ia3_scale) and `<matrix>/ia3_input_scale`
(input rows, e.g. bert/encoder/layer_0/output/dense/ia3_input_scale). Both fold into the matrix
(official/peft/ia3.py): an output scale into the kernel's columns and the bias, an input scale
into the kernel's rows.
"""

from __future__ import annotations

from typing import Callable, Sequence

import keras
from keras import ops

from official.modeling.insertion import SCALE_SUFFIX

OUTPUT_SCALE, INPUT_SCALE = "ia3" + SCALE_SUFFIX, "ia3_input" + SCALE_SUFFIX


@keras.saving.register_keras_serializable(package="official")
class Ia3Scale(keras.layers.Layer):
    """IA3's vectors on one projection with a kernel [in, out] split into `num_blocks` column
    blocks: one vector [out / num_blocks] per block of `blocks`, or with `on_input` one vector
    [in] on its input. Not called as a layer: its projection calls `project`."""

    def __init__(self, blocks: Sequence[int] = (0,), num_blocks: int = 1,
                 on_input: bool = False, **kwargs):
        super().__init__(**kwargs)
        if not blocks or any(not 0 <= b < num_blocks for b in blocks) or \
                len(set(blocks)) < len(blocks) or (on_input and list(blocks) != [0]):
            raise ValueError(f"IA3 on blocks {list(blocks)} of {num_blocks}"
                             f"{' (on the input)' if on_input else ''} does not fit")
        self.blocks = tuple(sorted(blocks))
        self.num_blocks = num_blocks
        self.on_input = on_input
        self.scales: list[keras.Variable] = []

    def build(self, kernel_shape):
        """`kernel_shape`: the projection's kernel's, [in, out]."""
        fan_in, units = kernel_shape
        if units % self.num_blocks:
            raise ValueError(f"{self.name}: {units} columns are not {self.num_blocks} blocks")
        width = fan_in if self.on_input else units // self.num_blocks
        self.width = width
        self.scales = [self.add_weight(name=f"scale_{block}", shape=(width,), initializer="ones")
                       for block in self.blocks]

    def project(self, inputs, project: Callable):
        """The projection's pre-activation output, scaled: [rows, out]."""
        if self.on_input:
            return project(inputs * ops.cast(self.scales[0], inputs.dtype))
        outputs = project(inputs)
        scale = dict(zip(self.blocks, self.scales))
        parts = [ops.cast(scale[block], outputs.dtype) if block in scale
                 else ops.ones((self.width,), outputs.dtype) for block in range(self.num_blocks)]
        return outputs * (parts[0] if len(parts) == 1 else ops.concatenate(parts, axis=0))

    def original_variables(self, names: Sequence[str]) -> dict[str, keras.Variable]:
        """Beside the matrix each vector scales (`names`: one per column block)."""
        if self.on_input:
            return {f"{names[0]}/{INPUT_SCALE}": self.scales[0]}
        return {f"{names[block]}/{OUTPUT_SCALE}": variable
                for block, variable in zip(self.blocks, self.scales)}

    def get_config(self):
        config = super().get_config()
        config.update(blocks=list(self.blocks), num_blocks=self.num_blocks,
                      on_input=self.on_input)
        return config


def insert_on(projection, blocks: Sequence[int] = (0,), num_blocks: int = 1,
              on_input: bool = False) -> Ia3Scale:
    """An `Ia3Scale` built for `projection` (a built `LoraDense`) and inserted into it."""
    layer = Ia3Scale(blocks, num_blocks, on_input, dtype=projection.dtype_policy,
                     name=f"{projection.name}_ia3")
    layer.build(tuple(projection.kernel.shape))
    projection.insert(layer)
    return layer
