"""`PeftSettings`: which parameter-efficient method a fine-tuning uses, as its flags say.

    --adapter_size=N          Houlsby adapters of N units (official/modeling/adapter.py)
    --lora_rank=r             LoRA of rank r (official/modeling/lora.py), scaled by
    --lora_alpha=a            a / r (default a = r, a scale of 1)
    --lora_targets=REGEX      on the projection matrices whose original kernel name the expression
                              finds (re.search), e.g.
                              bert/encoder/layer_0/attention/self/query/kernel; default: every
                              layer's query and value, as Hu et al. and peft
    --peft_train_pooler       whether the pooler trains with the method (see DEFAULT_TRAIN_POOLER)

What trains follows from the method (official/peft/methods.py): adapters train their adapters and
every LayerNorm; LoRA its matrices; both the task head, and the pooler when `train_pooler`.
Everything here is checked before any data or model work, each error one line naming the flag.
"""

from __future__ import annotations

import dataclasses
import re

ADAPTERS, LORA = "adapters", "lora"
DEFAULT_LORA_TARGETS = r"attention/self/(query|value)/kernel"
# Whether the pooler (the dense tanh layer under a classifier's head) trains by default: no,
# chosen by measurement rather than by adapter-bert's and peft's habit. The worry was a pooler
# never trained for classification, such as all-MiniLM-L6-v2's (a sentence-transformers model,
# trained on mean-pooled vectors), frozen under a fresh head. On it (bench/finetune_peft.py,
# adapters and LoRA) the trained pooler won on SST-2 and lost on MRPC, by 0.1 to 1.5 points
# either way, one run each: no consistent gain. Training it adds the pooler's H^2 + H
# parameters to every task's artifact (3x LoRA's at rank 8), and a frozen one is shared by every
# task of a multi-task export.
DEFAULT_TRAIN_POOLER = False


@dataclasses.dataclass(frozen=True)
class PeftSettings:
    """One parameter-efficient method and its sizes.

    Attributes:
      method: ADAPTERS or LORA.
      adapter_size: the adapters' bottleneck units (adapters).
      lora_rank, lora_alpha, lora_targets: LoRA's rank, scale numerator and the regular
        expression over original kernel names that picks the matrices it adapts (lora).
      train_pooler: the pooler trains too.
    """
    method: str
    adapter_size: int = 0
    lora_rank: int = 0
    lora_alpha: float = 0.0
    lora_targets: str = DEFAULT_LORA_TARGETS
    train_pooler: bool = DEFAULT_TRAIN_POOLER

    def __post_init__(self):
        if self.method not in (ADAPTERS, LORA):
            raise ValueError(f"unknown parameter-efficient method {self.method!r}; known: "
                             f"{ADAPTERS}, {LORA}")
        if self.method == ADAPTERS and self.adapter_size < 1:
            raise ValueError(f"--adapter_size must be positive, got {self.adapter_size}")
        if self.method == LORA:
            if self.lora_rank < 1:
                raise ValueError(f"--lora_rank must be positive, got {self.lora_rank}")
            if self.lora_alpha <= 0:
                raise ValueError(f"--lora_alpha must be positive, got {self.lora_alpha:g}")
            try:
                re.compile(self.lora_targets)
            except re.error as e:
                raise ValueError(f"--lora_targets={self.lora_targets!r} is not a regular "
                                 f"expression ({e})") from None

    @property
    def lora_scale(self) -> float:
        """alpha / r: the factor of LoRA's update x A B."""
        return self.lora_alpha / self.lora_rank

    @classmethod
    def from_flags(cls, adapter_size: int = 0, lora_rank: int = 0,
                   lora_alpha: float | None = None, lora_targets: str | None = None,
                   train_pooler: bool | None = None) -> PeftSettings | None:
        """The settings the flags ask for; None for full fine-tuning (neither --adapter_size nor
        --lora_rank). A LoRA or pooler flag without its method is an error, not ignored.

        Raises:
          ValueError: one line naming the flag.
        """
        if adapter_size and lora_rank:
            raise ValueError("--adapter_size and --lora_rank are two methods: give one")
        if not lora_rank:
            for flag, value in (("--lora_alpha", lora_alpha), ("--lora_targets", lora_targets)):
                if value is not None:
                    raise ValueError(f"{flag} is a LoRA setting: it needs --lora_rank")
        if not (adapter_size or lora_rank):
            if train_pooler is not None:
                raise ValueError("--peft_train_pooler needs a parameter-efficient method "
                                 "(--adapter_size or --lora_rank)")
            return None
        pooler = DEFAULT_TRAIN_POOLER if train_pooler is None else train_pooler
        if adapter_size:
            return cls(ADAPTERS, adapter_size=adapter_size, train_pooler=pooler)
        return cls(LORA, lora_rank=lora_rank,
                   lora_alpha=float(lora_rank if lora_alpha is None else lora_alpha),
                   lora_targets=DEFAULT_LORA_TARGETS if lora_targets is None else lora_targets,
                   train_pooler=pooler)

    def to_dict(self) -> dict:
        """The fields that apply to the method (a LoRA run records no adapter_size)."""
        fields = {"method": self.method, "train_pooler": self.train_pooler}
        if self.method == ADAPTERS:
            fields["adapter_size"] = self.adapter_size
        else:
            fields.update(lora_rank=self.lora_rank, lora_alpha=self.lora_alpha,
                          lora_targets=self.lora_targets)
        return fields

    @classmethod
    def from_dict(cls, values: dict) -> PeftSettings:
        return cls(**values)

    def differences(self, other: PeftSettings) -> list[str]:
        """["adapter_size (64 vs 32)", ...]: the fields of `to_dict` that differ."""
        mine, theirs = self.to_dict(), other.to_dict()
        return [f"{name} ({mine.get(name)} vs {theirs.get(name)})"
                for name in dict.fromkeys([*mine, *theirs]) if mine.get(name) != theirs.get(name)]

    def describe(self) -> str:
        """E.g. "adapters of 64 units, pooler trained" or "LoRA rank 8, alpha 8 on query, pooler
        frozen"."""
        pooler = ", pooler trained" if self.train_pooler else ", pooler frozen"
        if self.method == ADAPTERS:
            return f"adapters of {self.adapter_size} units{pooler}"
        return (f"LoRA rank {self.lora_rank}, alpha {self.lora_alpha:g} on "
                f"{self.lora_targets}{pooler}")
