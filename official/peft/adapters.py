"""Houlsby adapters (Houlsby et al. 2019, "Parameter-Efficient Transfer Learning for NLP"): two
bottleneck adapters in each layer, after the attention's and the feed-forward's output dropout
(official/modeling/adapter.py), on a frozen encoder.

Trains the adapters and every LayerNorm (adapter-bert's choice: the adapters change each layer's
output distribution, and the LayerNorms follow it), the pooler when asked, and the head. Adapters
cannot be folded into the base's matrices (a GELU sits between their two): a run is served with
them in the graph, and written only to checkpoint formats that have names for them.
"""

from __future__ import annotations

import dataclasses

from official.peft.method import Flag, PeftMethod, PeftSettings

_LAYER_NORM = "/LayerNorm/"


@dataclasses.dataclass(frozen=True, kw_only=True)
class AdapterSettings(PeftSettings):
    """adapter_size: the bottleneck's units."""
    method = "adapters"
    adapter_size: int

    def __post_init__(self):
        if self.adapter_size < 1:
            raise ValueError(f"--adapter_size must be positive, got {self.adapter_size}")

    @classmethod
    def from_flags(cls, adapter_size: int, train_pooler: bool) -> AdapterSettings:
        return cls(adapter_size=adapter_size, train_pooler=train_pooler)

    def title(self) -> str:
        return f"adapters of {self.adapter_size} units"


def _insert(encoder, settings: AdapterSettings) -> None:
    for block in encoder.transformer_layers:
        block.add_adapters(settings.adapter_size)


def _trains(name: str, settings: AdapterSettings) -> bool:
    return "/adapters/" in name or _LAYER_NORM in name


METHOD = PeftMethod(
    name=AdapterSettings.method, title="adapter", settings=AdapterSettings,
    flags=(Flag("adapter_size", int, 0,
                "Houlsby adapters of this many units after the attention and feed-forward "
                "outputs of every layer (0: off). Trains the adapters, every LayerNorm, the "
                "pooler (--peft_train_pooler) and the task head on a frozen encoder; output_dir "
                "keeps only those."),),
    insert=_insert, trains=_trains, fold=None)
