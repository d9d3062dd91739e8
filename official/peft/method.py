"""What a parameter-efficient method is: one row of the table in official/peft/methods.py.

    PeftMethod      name; its settings; its flags; what it inserts into the encoder; which of the
                    encoder's variables it trains; how its trained variables fold into plain
                    BERT weights (None: they cannot)
    PeftSettings    what every method's settings share: train_pooler, the record's dict,
                    differences, a one-line description
    Flag            one flag of a method, as data (official/flag_rows.py): defined on every
                    fine-tuning entry point, so a new method needs no entry-point code

A method is one module (official/peft/adapters.py, lora.py, bitfit.py, ia3.py, frozen.py)
holding its settings dataclass and its `METHOD` row, and one line of registration in
`methods.METHODS`.
Everything else (freezing, what the head and the pooler do, checkpoints that hold only what
trained, the record naming the base, exports, merging) is the same for every method.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Callable, ClassVar

from official.flag_rows import Flag

if TYPE_CHECKING:
    from official.checkpoints.tf1 import Weights
    from official.modeling.encoder import BertEncoder

# Whether the pooler (the dense tanh layer under a classifier's head) trains by default: no,
# chosen by measurement rather than by adapter-bert's and peft's habit. The worry was a pooler
# never trained for classification, such as all-MiniLM-L6-v2's (a sentence-transformers model,
# trained on mean-pooled vectors), frozen under a fresh head. On it (bench/finetune_peft.py,
# adapters and LoRA) the trained pooler won on SST-2 and lost on MRPC, by 0.1 to 1.5 points
# either way, one run each: no consistent gain. Training it adds the pooler's H^2 + H
# parameters to every task's artifact (3x LoRA's at rank 8), and a frozen one is shared by every
# task of a multi-task export.
DEFAULT_TRAIN_POOLER = False


@dataclasses.dataclass(frozen=True, kw_only=True)
class PeftSettings:
    """The settings of one method; each method's dataclass adds its own fields, named as its
    flags and as the keys of its record (peft_config.json).

    Attributes:
      train_pooler: the pooler trains whole too (under a head that reads it).
    """
    method: ClassVar[str]
    train_pooler: bool = DEFAULT_TRAIN_POOLER

    def describe(self) -> str:
        """E.g. "LoRA rank 8, alpha 8 on query|value, pooler frozen"."""
        pooler = "pooler trained" if self.train_pooler else "pooler frozen"
        return f"{self.title()}, {pooler}"

    def title(self) -> str:
        """The method and its sizes, e.g. "adapters of 64 units"."""
        return self.method

    def to_dict(self) -> dict:
        """The record's fields: the method's name and every setting."""
        return {"method": self.method, **dataclasses.asdict(self)}

    def differences(self, other: PeftSettings) -> list[str]:
        """["lora_rank (8 vs 4)", ...]: the fields of `to_dict` that differ."""
        mine, theirs = self.to_dict(), other.to_dict()
        return [f"{name} ({mine.get(name)} vs {theirs.get(name)})"
                for name in dict.fromkeys([*mine, *theirs]) if mine.get(name) != theirs.get(name)]


@dataclasses.dataclass(frozen=True)
class PeftMethod:
    """One parameter-efficient method.

    Attributes:
      name: its name in records and in the code ("lora").
      title: its name in messages ("LoRA").
      settings: its `PeftSettings` dataclass, whose `from_flags(**values)` takes its flags'
        values (None: not given) and checks them, one line naming the flag.
      flags: its flags; the first switches it on.
      insert: adds its layers to a fresh encoder (nothing, for a method that only chooses what
        trains).
      trains: whether the encoder's variable of this original name trains (the rest is frozen;
        the head always trains, the pooler when settings.train_pooler).
      fold: its trained variables folded into plain BERT weights ({original name: array} in,
        the same without the method's own names out), so a run serves and converts as a plain
        model; None when they cannot fold (adapters: a GELU sits between their matrices).
    """
    name: str
    title: str
    settings: type[PeftSettings]
    flags: tuple[Flag, ...]
    insert: Callable[[BertEncoder, PeftSettings], None]
    trains: Callable[[str, PeftSettings], bool]
    fold: Callable[[Weights, PeftSettings], Weights] | None
