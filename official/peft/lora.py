"""LoRA (Hu et al. 2021, "LoRA: Low-Rank Adaptation of Large Language Models"): a trained
low-rank change (alpha / r) A B beside each targeted matrix of a frozen encoder
(official/modeling/lora.py).

The targets are a regular expression over the original kernel names (re.search), e.g.
bert/encoder/layer_0/attention/self/query/kernel; the default is every layer's query and value,
as Hu et al. and Hugging Face peft. On the fused QKV kernel only the blocks the targets name get
LoRA. Trains the LoRA matrices, the pooler when asked, and the head; folds into the base's
matrices (W + (alpha / r) A B), so an export runs at the base's speed. The settings load
without TensorFlow; inserting imports the name table (official/checkpoints/tf1.py) when called.
"""

from __future__ import annotations

import dataclasses
import re
from typing import TYPE_CHECKING

import numpy as np

from official.peft.method import Flag, PeftMethod, PeftSettings

if TYPE_CHECKING:
    import keras

    from official.checkpoints.tf1 import Weights

# BERT's names and ALBERT's (attention_1/self/..., official/checkpoints/tf1.py).
DEFAULT_LORA_TARGETS = r"attention(_1)?/self/(query|value)/kernel"
_A, _B = "/lora_A", "/lora_B"
_POOLER = "bert/pooler/"


@dataclasses.dataclass(frozen=True, kw_only=True)
class LoraSettings(PeftSettings):
    """lora_rank r; lora_alpha a (the update's scale is a / r); lora_targets, the regular
    expression that picks the matrices."""
    method = "lora"
    lora_rank: int
    lora_alpha: float
    lora_targets: str = DEFAULT_LORA_TARGETS

    def __post_init__(self):
        if self.lora_rank < 1:
            raise ValueError(f"--lora_rank must be positive, got {self.lora_rank}")
        if self.lora_alpha <= 0:
            raise ValueError(f"--lora_alpha must be positive, got {self.lora_alpha:g}")
        try:
            re.compile(self.lora_targets)
        except re.error as e:
            raise ValueError(f"--lora_targets={self.lora_targets!r} is not a regular "
                             f"expression ({e})") from None

    @classmethod
    def from_flags(cls, lora_rank: int, lora_alpha: float | None, lora_targets: str | None,
                   train_pooler: bool) -> LoraSettings:
        """alpha defaults to the rank (a scale of 1), the targets to query and value."""
        return cls(lora_rank=lora_rank,
                   lora_alpha=float(lora_rank if lora_alpha is None else lora_alpha),
                   lora_targets=DEFAULT_LORA_TARGETS if lora_targets is None else lora_targets,
                   train_pooler=train_pooler)

    @property
    def lora_scale(self) -> float:
        """alpha / r: the factor of LoRA's update x A B."""
        return self.lora_alpha / self.lora_rank

    def title(self) -> str:
        return f"LoRA rank {self.lora_rank}, alpha {self.lora_alpha:g} on {self.lora_targets}"


def lora_targets(encoder, targets: str) -> dict[str, tuple[keras.layers.Dense, int | None]]:
    """{original matrix name: (its layer, its QKV block or None)} of every projection whose
    original kernel name (`<matrix>/kernel`) the regular expression `targets` finds.

    Raises:
      ValueError: it finds none (the message shows the names it is matched against).
    """
    from official.checkpoints import tf1

    pattern = re.compile(targets)
    found = {name: place for name, place in tf1.projections(encoder).items()
             if pattern.search(f"{name}/kernel")}
    if not found:
        raise ValueError(f"--lora_targets={targets!r} finds none of the encoder's projection "
                         f"matrices (names like bert/encoder/layer_0/attention/self/query/kernel, "
                         f".../attention/output/dense/kernel, .../intermediate/dense/kernel, "
                         f".../output/dense/kernel, bert/pooler/dense/kernel)")
    return found


def _insert(encoder, settings: LoraSettings) -> None:
    from official.checkpoints import tf1

    targets = lora_targets(encoder, settings.lora_targets)
    if settings.train_pooler and any(name.startswith(_POOLER) for name in targets):
        raise ValueError(f"--lora_targets={settings.lora_targets!r} names the pooler, which "
                         "--peft_train_pooler trains whole: drop one")
    layers: dict[int, tuple[keras.layers.Dense, list[int | None]]] = {}
    for layer, part in targets.values():
        layers.setdefault(id(layer), (layer, []))[1].append(part)
    for layer, parts in layers.values():
        fused = parts[0] is not None  # blocks of the QKV kernel, or a whole kernel
        layer.add_lora(settings.lora_rank, settings.lora_alpha, parts if fused else [0],
                       num_blocks=len(tf1.QKV_NAMES) if fused else 1)


def _trains(name: str, settings: LoraSettings) -> bool:
    return "/lora_" in name


def fold_lora(weights: Weights, settings: LoraSettings) -> Weights:
    """`weights` with each `<matrix>/lora_A`, `<matrix>/lora_B` pair folded into
    `<matrix>/kernel` (as float32), W + (alpha / r) A B, and the pair dropped; a LoRA-free dict
    comes back unchanged."""
    folded = {name: value for name, value in weights.items()
              if not name.endswith((_A, _B))}
    for name in weights:
        if name.endswith(_A):
            matrix = name.removesuffix(_A)
            update = weights[name].astype(np.float32) @ weights[matrix + _B].astype(np.float32)
            folded[matrix + "/kernel"] = (weights[matrix + "/kernel"].astype(np.float32)
                                          + settings.lora_scale * update)
    return folded


METHOD = PeftMethod(
    name=LoraSettings.method, title="LoRA", settings=LoraSettings,
    flags=(Flag("lora_rank", int, 0,
                "LoRA of this rank on the --lora_targets matrices (0: off). Trains the LoRA "
                "matrices, the pooler (--peft_train_pooler) and the task head on a frozen "
                "encoder; output_dir keeps only those."),
           Flag("lora_alpha", float, None,
                "LoRA's update is scaled by lora_alpha / lora_rank (default: lora_alpha = "
                "lora_rank)."),
           Flag("lora_targets", str, None,
                "A regular expression over the original kernel names (e.g. "
                "bert/encoder/layer_0/attention/self/query/kernel): LoRA goes on every "
                f"projection it finds. Default: {DEFAULT_LORA_TARGETS} (each layer's query and "
                "value).")),
    insert=_insert, trains=_trains, fold=fold_lora)
