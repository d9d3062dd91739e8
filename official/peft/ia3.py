"""IA3 (Liu et al. 2022, "Few-Shot Parameter-Efficient Fine-Tuning is Better and Cheaper than
In-Context Learning"): learned vectors that rescale each layer's attention keys (l_k, [hidden]),
values (l_v, [hidden]) and feed-forward inner activation after its nonlinearity (l_ff,
[intermediate]), on a frozen encoder (official/modeling/ia3.py).

    K = l_k * (x W_k + b_k)   V = l_v * (x W_v + b_v)   FF(h) = (l_ff * act(h W_1 + b_1)) W_2 + b_2

The vectors start at ones (the base's function); they, the pooler when asked, and the head are
all that trains: 2 * hidden + intermediate per layer, 0.05% of BERT-Base. They fold into
the base's matrices (`fold_ia3`): l_k scales the key kernel's output columns and its bias, l_v
the value's, l_ff the feed-forward output kernel's input rows; so a run serves and converts as a
plain BERT at the base's speed. Hugging Face peft's IA3 on BERT by default also scales the input
of each attention output projection (its "output.dense" matches both); this is the paper's three.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import numpy as np

from official.peft.method import Flag, PeftMethod, PeftSettings

if TYPE_CHECKING:
    from official.checkpoints.tf1 import Weights


@dataclasses.dataclass(frozen=True, kw_only=True)
class Ia3Settings(PeftSettings):
    """IA3 has no size: its vectors are the keys', values' and feed-forward's width."""
    method = "ia3"

    @classmethod
    def from_flags(cls, ia3: bool, train_pooler: bool) -> Ia3Settings:
        return cls(train_pooler=train_pooler)

    def title(self) -> str:
        return "IA3 (scaled keys, values and feed-forward activations)"


def _insert(encoder, settings: Ia3Settings) -> None:
    from official.checkpoints.tf1 import QKV_NAMES
    from official.modeling import ia3

    scaled = [QKV_NAMES.index(name) for name in ("key", "value")]
    for block in encoder.transformer_layers:
        ia3.insert_on(block.attention.qkv, scaled, num_blocks=len(QKV_NAMES))
        ia3.insert_on(block.output_dense, on_input=True)


def _suffixes() -> tuple[str, str]:
    """The vectors' names after their matrix's: (output scale, input scale). Imported when
    called: the row loads without TensorFlow."""
    from official.modeling.ia3 import INPUT_SCALE, OUTPUT_SCALE
    return f"/{OUTPUT_SCALE}", f"/{INPUT_SCALE}"


def _trains(name: str, settings: Ia3Settings) -> bool:
    return name.endswith(_suffixes())


def fold_ia3(weights: Weights, settings: Ia3Settings) -> Weights:
    """`weights` with each IA3 vector folded into its matrix (as float32) and dropped: an
    output scale l into `<matrix>/kernel`'s columns and `<matrix>/bias` (W l, b l), an input
    scale into the kernel's rows (diag(l) W); an IA3-free dict comes back unchanged."""
    output_scale, input_scale = _suffixes()
    folded = {name: value for name, value in weights.items()
              if not name.endswith((output_scale, input_scale))}
    for name, value in weights.items():
        scale = value.astype(np.float32)
        if name.endswith(output_scale):
            matrix = name.removesuffix(output_scale)
            folded[matrix + "/kernel"] = weights[matrix + "/kernel"].astype(np.float32) * scale
            folded[matrix + "/bias"] = weights[matrix + "/bias"].astype(np.float32) * scale
        elif name.endswith(input_scale):
            matrix = name.removesuffix(input_scale)
            folded[matrix + "/kernel"] = (weights[matrix + "/kernel"].astype(np.float32)
                                          * scale[:, None])
    return folded


METHOD = PeftMethod(
    name=Ia3Settings.method, title="IA3", settings=Ia3Settings,
    flags=(Flag("ia3", bool, False,
                "IA3: train only vectors (starting at ones) that scale each layer's attention "
                "keys and values and its feed-forward activation, with the task head (and the "
                "pooler with --peft_train_pooler); folded into the matrices at export. "
                "output_dir keeps only those."),),
    insert=_insert, trains=_trains, fold=fold_ia3)
