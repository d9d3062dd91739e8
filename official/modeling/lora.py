"""`LoraDense`: a dense projection to which LoRA's low-rank updates, and the layers of other
parameter-efficient methods, can be added after it is built.

LoRA (Hu et al. 2021, "LoRA: Low-Rank Adaptation of Large Language Models") freezes a pretrained
matrix W [in, out] and trains a low-rank change of it:

    y = act(x W + b + (alpha / r) x A B)        A [in, r], B [r, out], B = 0 at the start

so a fresh LoRA layer computes exactly what the pretrained one did. Every projection of the
encoder is a `LoraDense` (the fused query/key/value matrix, the attention output, the
feed-forward's two matrices, the pooler); without LoRA it is `keras.layers.Dense`, the same
variables in the same checkpoint places.

A kernel may hold several original matrices side by side: the fused QKV kernel
[hidden, 3 * hidden] is the original's query, key and value kernels as column blocks 0, 1 and 2
(official/checkpoints/tf1.py). LoRA on "query and value" must change those blocks and leave the
key's alone, so the update is per block: block j gets its own A_j [in, r] and B_j [r, out / n],
and x A_j B_j lands in block j's columns only.

The update is computed as (x A) B, never by adding A B to W: a frozen W then needs no gradient of
its own (x^T dy, as large as W and as costly as the forward matmul), which is where LoRA saves
training time (bench/finetune_peft.py measures the step).

Other methods change a projection through `insert` (official/modeling/insertion.py says what such
a layer answers): the projection's pre-activation output becomes the inserted layer's
`project(inputs, project)`, given the plain x W + b (with LoRA's update) as `project`. Every
variable on a projection is named by its own layer, relative to the original matrices of the
kernel's column blocks (`inserted_variables`): LoRA's A_j and B_j are `<matrix j>/lora_A`
[in, r] and `<matrix j>/lora_B` [r, out / n] beside the matrix they change.
"""

from __future__ import annotations

import functools
import math
from typing import Sequence

import keras
from keras import ops

from official.modeling.insertion import ProjectionInsert


@keras.saving.register_keras_serializable(package="official")
class LoraDense(keras.layers.Dense):
    """`keras.layers.Dense` plus an optional LoRA update on some column blocks of its kernel.

    Call args:
      inputs: [rows, in] (the encoder feeds its projections 2-D rows, see TransformerBlock).
    Returns:
      [rows, out]: act(x W + b), plus (alpha / r) x A_j B_j in the columns of each block j that
      has LoRA.

    Attributes (after `add_lora`; empty before):
      lora_blocks: the column blocks that have LoRA, increasing.
      lora_a, lora_b: their A [in, r] and B [r, out / num_blocks] variables, in that order.
      lora_num_blocks, lora_rank, lora_alpha.
      inserted: the layers `insert` added, in order (each wraps the projection before it).

    `.keras` configs do not carry LoRA or inserted layers: official/peft saves and restores them
    with the rest of a parameter-efficient run.
    """

    def __init__(self, units: int, **kwargs):
        super().__init__(units, **kwargs)
        self.lora_blocks: tuple[int, ...] = ()
        self.lora_a: list[keras.Variable] = []
        self.lora_b: list[keras.Variable] = []
        self.lora_num_blocks = 1
        self.lora_rank = 0
        self.lora_alpha = 0.0
        self.inserted: list[keras.layers.Layer] = []

    def add_lora(self, rank: int, alpha: float, blocks: Sequence[int] = (0,),
                 num_blocks: int = 1) -> None:
        """Adds LoRA with rank `rank` and scale alpha / rank to column `blocks` of the kernel,
        split into `num_blocks` equal blocks; freezes the kernel and bias.

        A is initialised as Hugging Face peft initialises it (Kaiming-uniform with a = sqrt(5):
        uniform in +-1/sqrt(in)), B with zeros: the layer's output is unchanged.

        Raises:
          ValueError: the layer is not built, already has LoRA, or the blocks do not fit.
        """
        if not self.built:
            raise ValueError(f"{self.name}: build the layer before adding LoRA")
        if self.lora_blocks:
            raise ValueError(f"{self.name} already has LoRA")
        fan_in, units = self.kernel.shape
        if rank < 1 or units % num_blocks or not blocks or \
                any(not 0 <= b < num_blocks for b in blocks) or len(set(blocks)) < len(blocks):
            raise ValueError(f"{self.name}: LoRA of rank {rank} on blocks {list(blocks)} of "
                             f"{num_blocks} does not fit a [{fan_in}, {units}] kernel")
        bound = 1.0 / math.sqrt(fan_in)
        self._tracker.unlock()  # a built layer's state is locked (Keras's own enable_lora, too)
        try:
            a, b = [], []
            for block in sorted(blocks):
                a.append(self.add_weight(
                    name=f"lora_a_{block}", shape=(fan_in, rank),
                    initializer=keras.initializers.RandomUniform(-bound, bound)))
                b.append(self.add_weight(name=f"lora_b_{block}",
                                         shape=(rank, units // num_blocks),
                                         initializer="zeros"))
            self.lora_a, self.lora_b = a, b
        finally:
            self._tracker.lock()
        self.lora_blocks = tuple(sorted(blocks))
        self.lora_num_blocks = num_blocks
        self.lora_rank = rank
        self.lora_alpha = float(alpha)
        self.kernel.trainable = False
        if self.bias is not None:
            self.bias.trainable = False

    def insert(self, layer: ProjectionInsert) -> None:
        """Adds a method's built `layer` (official/modeling/insertion.py's `ProjectionInsert`)
        around the projection: its output before the activation becomes
        `layer.project(inputs, project)`.

        Raises:
          ValueError: the projection is not built.
        """
        if not self.built:
            raise ValueError(f"{self.name}: build the layer before inserting into it")
        self._tracker.unlock()  # a built layer's state is locked, as in add_lora
        try:
            self.inserted = [*self.inserted, layer]
        finally:
            self._tracker.lock()

    def inserted_variables(self, matrices: Sequence[str]) -> dict[str, keras.Variable]:
        """{original name: variable} of everything added to the projection (LoRA's matrices,
        the inserted layers'), named beside `matrices`, the original names of the kernel's
        column blocks' matrices (one for a whole kernel; without "/kernel")."""
        names = {}
        for block, a, b in zip(self.lora_blocks, self.lora_a, self.lora_b):
            names[f"{matrices[block]}/lora_A"] = a
            names[f"{matrices[block]}/lora_B"] = b
        for layer in self.inserted:
            names.update(layer.original_variables(matrices))
        return names

    @property
    def lora_scale(self) -> float:
        """alpha / r, the factor of x A B."""
        return self.lora_alpha / self.lora_rank

    def call(self, inputs, training=None):
        if not (self.lora_blocks or self.inserted):
            return super().call(inputs, training=training)
        project = self._project
        for layer in self.inserted:
            project = functools.partial(layer.project, project=project)
        x = project(inputs)
        return x if self.activation is None else self.activation(x)

    def _project(self, inputs):
        """x W + b, plus LoRA's update when there is one: [rows, out]."""
        x = ops.matmul(inputs, self.kernel)
        if self.bias is not None:
            x = ops.add(x, self.bias)  # kept next to the matmul: TF fuses MatMul + BiasAdd
        return x + self._lora_update(inputs) if self.lora_blocks else x

    def get_config(self):
        # Keras's Dense would write these attributes (its own LoRA's), which are ours here.
        return {**super().get_config(), "lora_rank": None, "lora_alpha": None}

    # A `.keras` file: Dense's kernel and bias by index, then A and B of each block (the layer
    # that loads them has had `add_lora` with the same settings: official/api.py re-applies
    # the method before loading).
    def save_own_variables(self, store):
        super().save_own_variables(store)
        for i, variable in enumerate([*self.lora_a, *self.lora_b], start=self._dense_count):
            store[str(i)] = variable

    def load_own_variables(self, store):
        if not self.lora_blocks:
            return super().load_own_variables(store)
        lora = [*self.lora_a, *self.lora_b]
        if len(store.keys()) != self._dense_count + len(lora):
            raise ValueError(f"{self.name}: {len(store.keys())} saved variables, the layer with "
                             f"LoRA has {self._dense_count + len(lora)}")
        self.kernel.assign(store["0"])
        if self.bias is not None:
            self.bias.assign(store["1"])
        for i, variable in enumerate(lora, start=self._dense_count):
            variable.assign(store[str(i)])

    @property
    def _dense_count(self) -> int:
        """How many of the saved variables are Dense's own: the kernel, and the bias if any."""
        return 1 + (self.bias is not None)

    def _lora_update(self, inputs):
        """(alpha / r) x [A_j ...] [B_j placed in block j's columns ...]: [rows, out]."""
        units = self.kernel.shape[1]
        width = units // self.lora_num_blocks
        a = self.lora_a[0] if len(self.lora_a) == 1 else ops.concatenate(self.lora_a, axis=1)
        placed = [ops.pad(b, [[0, 0], [block * width, units - (block + 1) * width]])
                  for block, b in zip(self.lora_blocks, self.lora_b)]
        b = placed[0] if len(placed) == 1 else ops.concatenate(placed, axis=0)
        return ops.matmul(ops.matmul(inputs, a), b) * ops.cast(self.lora_scale, inputs.dtype)
