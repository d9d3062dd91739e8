"""Distillation as one row of the adaptation kinds' table (official/adaptation_kinds.py): its
flags (DistilBERT's names for the soft and hard weights on run_pretraining) and settings from
their values, checked against the run (settings.py, no TensorFlow), the teacher checked to be
there, and its resolve (adaptation.py, loaded when a run resolves it). Every training run.
"""

from __future__ import annotations

from typing import Any

from official.adaptation import AdaptationKind
from official.distillation.settings import DistillationSettings, flags


def resolve(settings: DistillationSettings | None, options: Any, task: Any
            ) -> tuple[Any, Any]:
    """official/distillation/adaptation.py's `resolve` (TensorFlow)."""
    from official.distillation import adaptation

    return adaptation.resolve(settings, options, task)


KIND = AdaptationKind(
    name="distillation", flags=flags(pretraining=False), pretraining_flags=flags(pretraining=True),
    settings=DistillationSettings.from_flag_values, resolve=resolve,
    check=DistillationSettings.check_run,
    checkpoints=lambda settings: (settings.teacher_checkpoint,))
