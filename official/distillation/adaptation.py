"""Distillation as the generic training runs drive it (official/adaptation.py): any task's run,
fine-tuning or pretraining, becomes a distillation with --teacher_checkpoint.

    resolve(settings, options, task) -> (options, DistillationAdaptation | None)
        the teacher resolved once (official/checkpoints/finetuned.py), the student's config (the
        teacher's layers with --student_layers, else --bert_config_file's), the record compared
        with what output_dir holds: a rerun of a distillation with another teacher or other
        losses, or a plain fine-tuning resumed in a distillation's output_dir, is refused before
        any work; a run that only evaluates or predicts reads the student alone
    DistillationAdaptation
        `config`: the student's; `task`: the task wrapped in a `DistillationTask`; `files`:
        distillation.json (the settings, the teacher by absolute path)

The run is the task's own: its data flags, best/, eval_results.txt, predictions and resuming;
the output_dir holds the student alone (the teacher is never saved), so export_saved_model,
convert_checkpoint and --do_predict read it as any run of the task.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any

from official import records
from official.adaptation import Adaptation, Leftover
from official.checkpoints import finetuned
from official.configs import BertConfig
from official.distillation.settings import DistillationSettings
from official.distillation.task import DistillationTask

RECORD_FILE = "distillation.json"


class DistillationAdaptation(Adaptation):
    """The run's student taught by `teacher` under `settings`."""

    def __init__(self, settings: DistillationSettings, teacher: finetuned.Source):
        self.settings = settings
        self.teacher = teacher

    def config(self, config: BertConfig | None, source: str | None
               ) -> tuple[BertConfig | None, str | None]:
        """The student's: the teacher's with the listed layers, or `config` (the student's own
        --bert_config_file)."""
        if self.settings.student_layers is None:
            return config, source
        layers = ",".join(map(str, self.settings.student_layers))
        return (self.settings.student_config(self.teacher.config),
                f"{self.teacher.config_file} (its layers {layers})")

    def task(self, task: Any) -> DistillationTask:
        return DistillationTask(task, self.settings, self.teacher)

    def files(self) -> dict[str, str | None]:
        return {RECORD_FILE: record_text(self.settings)}


def record_text(settings: DistillationSettings) -> str:
    """distillation.json: the settings, the teacher as an absolute path (a rerun from another
    folder names the same teacher)."""
    teacher = settings.teacher_checkpoint
    return records.to_json(dataclasses.replace(
        settings, teacher_checkpoint=teacher if "://" in teacher else os.path.abspath(teacher)))


def resolve(settings: DistillationSettings | None, options: Any, task: Any
            ) -> tuple[Any, Adaptation | None]:
    """(options, adaptation) for a training run with `settings` (None: no --teacher_checkpoint);
    `options` are the run's FinetuningOptions or PretrainingOptions (official/training/); with
    --student_layers the returned ones name the teacher's config file (the student's config is
    made of it). See the module docstring.

    Raises:
      ValueError: --student_layers with --bert_config_file or --init_checkpoint, neither of
        them, a teacher that cannot be read, or a rerun whose record differs.
    """
    directory = options.output_dir
    trains = getattr(options, "do_train", True)
    if settings is None:
        if trains:
            finetuned.check_record(directory, RECORD_FILE, None)
        stale = (not finetuned.has_checkpoint(directory)
                 and os.path.isfile(os.path.join(directory, RECORD_FILE)))
        return options, Leftover(RECORD_FILE) if stale else None
    settings.check_student(options)  # the entry points checked it before TensorFlow
    if trains:
        finetuned.check_record(directory, RECORD_FILE, record_text(settings))
    return options, DistillationAdaptation(
        settings, finetuned.resolve_source(settings.teacher_checkpoint))
