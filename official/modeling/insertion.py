"""What a layer a parameter-efficient method inserts into the encoder answers, so that the
encoder, the checkpoints and the method's row (official/peft/method.py) never need to know it.

A method inserts layers at two kinds of place:

    on a projection     `LoraDense.insert(layer)` (official/modeling/lora.py): the layer wraps
                        the projection's pre-activation output, `layer.project(inputs, project)`
                        with `project(x)` = x W + b ([rows, in] -> [rows, out]): it may change
                        the input, the output, or add to it
    after a sub-layer   `TransformerBlock.insert(place, layer)` (official/modeling/transformer.py):
                        `layer(x)` on the attention's or the feed-forward's dropped-out output,
                        before its residual sum and LayerNorm

Either way the layer names its own variables in the original's name table
(official/checkpoints/tf1.py), through which every checkpoint format goes:
`original_variables(names)` gets the original names of where it sits (a projection's matrices,
one per column block of a fused kernel such as the query/key/value one; or the sub-layer's name,
e.g. bert/encoder/layer_0/attention/output) and returns {original name: variable} of its own.
A layer whose method folds (official/peft: LoRA, IA3) is folded by its method's row from those
names; one that cannot fold is kept under them by the formats that hold any name (tf1, tf2).

A variable that multiplies what it sits on and starts at one (IA3's vectors) has a name ending
in SCALE_SUFFIX: weight decay exempts it (official/training/optimization.py), as it exempts
LayerNorm's gamma, since decay would pull it towards zero, the projection switched off.
"""

from __future__ import annotations

from typing import Callable, Protocol, Sequence

import keras

SCALE_SUFFIX = "_scale"


class InsertedLayer(Protocol):
    """Any layer a method inserts: it names its variables beside the `names` of its place."""

    def original_variables(self, names: Sequence[str]) -> dict[str, keras.Variable]: ...


class ProjectionInsert(InsertedLayer, Protocol):
    """A layer inserted on a projection: its pre-activation output from the projection's."""

    def project(self, inputs, project: Callable): ...
