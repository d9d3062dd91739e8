"""The parameter-efficient methods as one row of the adaptation kinds' table
(official/adaptation_kinds.py): every method's flags as its row of `methods.METHODS` declares
them and --peft_train_pooler, the method they ask for (`methods.from_flags`), and its resolve
(official/peft/adaptation.py, loaded when a run resolves it). Fine-tuning runs only.
"""

from __future__ import annotations

from typing import Any, Mapping

from official.adaptation import AdaptationKind
from official.flag_rows import Flag
from official.peft import methods
from official.peft.method import DEFAULT_TRAIN_POOLER, PeftSettings


def settings_of_flags(values: Mapping[str, Any], pretraining: bool) -> PeftSettings | None:
    """The method the flags' values ask for, checked; None for full fine-tuning (`pretraining`
    is never true: no pretraining run takes a method)."""
    values = dict(values)
    return methods.from_flags(train_pooler=values.pop(methods.POOLER_FLAG), **values)


def resolve(settings: PeftSettings | None, options: Any, task: Any) -> tuple[Any, Any]:
    """official/peft/adaptation.py's `resolve` (TensorFlow)."""
    from official.peft import adaptation

    return adaptation.resolve(settings, options, task)


KIND = AdaptationKind(
    name="peft",
    flags=(*(flag for method in methods.METHODS.values() for flag in method.flags),
           Flag(methods.POOLER_FLAG, bool, None,
                "Whether the pooler trains whole with a parameter-efficient method (under a head "
                f"that reads it: run_classifier's). Default: {DEFAULT_TRAIN_POOLER} "
                "(bench/finetune_peft.py measures both).")),
    pretraining_flags=None, settings=settings_of_flags, resolve=resolve)
