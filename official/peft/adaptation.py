"""Parameter-efficient fine-tuning as the generic fine-tuning run drives it.

    resolve(options, task) -> (options, PeftAdaptation | None)
        reconciles the flags (options.peft) with what output_dir already holds, before any model
        or data work: a rerun resumes a PEFT run only with the same method and sizes; a run that
        only evaluates or predicts on a PEFT output_dir takes its method (and its base, when no
        --init_checkpoint is given) from its record; a PEFT run into a fully fine-tuned
        output_dir, or the reverse, is refused
    PeftAdaptation
        the run's `adapt(model)` hook (official/training/job_setup.py): after --init_checkpoint
        is loaded, fingerprints the base (checked against a resumed run's record), then applies
        the method; `files()` is the record the run writes into output_dir and best/
"""

from __future__ import annotations

import dataclasses
import math
import os
from typing import TYPE_CHECKING

import keras
from absl import logging

from official.peft import artifact, methods
from official.peft.settings import PeftSettings
from official.training import output_dir as output_dirs

if TYPE_CHECKING:  # official/training/finetuning imports this module
    from official.tasks.base import FinetuningTask
    from official.training.finetuning import FinetuningOptions


class PeftAdaptation:
    """Applies `settings` to the fine-tuning model, recording the base it started from.

    Args:
      settings: the method.
      output_dir: the run's; a record there (a resumed run) must name the same base.
      base_checkpoint: the run's --init_checkpoint.
      task: the task's serving_spec(), kept in the record for exports.
    """

    def __init__(self, settings: PeftSettings, output_dir: str, base_checkpoint: str,
                 task: dict):
        self.settings = settings
        self.output_dir = output_dir
        self.base_checkpoint = base_checkpoint
        self.task = task
        self.record: artifact.PeftRecord | None = None

    def __call__(self, model: keras.Model) -> None:
        record = artifact.PeftRecord(self.settings, self.base_checkpoint,
                                     artifact.fingerprint(model), self.task)
        earlier = (artifact.read_record(self.output_dir)
                   if output_dirs.has_checkpoint(self.output_dir) else None)
        if earlier is not None:
            artifact.check_base(earlier, record.base_fingerprint, self.base_checkpoint,
                                self.output_dir)
        methods.apply(model, self.settings)
        self.record = record
        trained = sum(math.prod(v.shape) for v in model.trainable_variables)
        total = sum(math.prod(v.shape) for v in model.variables if "float" in v.dtype)
        logging.info("%s: training %s of %s parameters (%.2f%%)", self.settings.describe(),
                     f"{trained:,}", f"{total:,}", 100.0 * trained / total)

    def files(self) -> dict[str, str]:
        """{file name: text}: what the run writes beside its checkpoints (and into best/)."""
        if self.record is None:
            raise ValueError("the adaptation has not been applied yet")
        return {artifact.PEFT_FILE: self.record.to_json()}


def resolve(options: FinetuningOptions, task: FinetuningTask
            ) -> tuple[FinetuningOptions, PeftAdaptation | None]:
    """(options, adaptation) for a fine-tuning run; adaptation None for full fine-tuning. See
    the module docstring.

    Raises:
      ValueError: the flags disagree with the PEFT run in output_dir, or the output_dir holds a
        full fine-tuning, or no base is given.
    """
    directory = options.output_dir
    # A record counts once checkpoints stand beside it (a run killed before its first save
    # leaves nothing to resume).
    earlier = (artifact.read_record(directory) if output_dirs.has_checkpoint(directory)
               else None)
    settings = options.peft
    if earlier is not None:
        if settings is None and options.do_train:
            raise ValueError(
                f"{directory} holds a parameter-efficient run ({earlier.settings.describe()}): "
                f"pass its flags to resume it, or use another --output_dir")
        if settings is not None and earlier.settings.differences(settings):
            raise ValueError(
                f"{os.path.join(directory, artifact.PEFT_FILE)} (the run in {directory}) and the "
                f"flags differ in {', '.join(earlier.settings.differences(settings))}: nothing "
                f"was changed; use another --output_dir, or the same flags to resume")
        settings = earlier.settings
    elif settings is not None and output_dirs.has_checkpoint(directory):  # no record there
        raise ValueError(f"{directory} holds a full fine-tuning's checkpoints: a "
                         f"parameter-efficient run ({settings.describe()}) needs another "
                         f"--output_dir")
    if settings is None:
        return options, None
    base = options.init_checkpoint or (earlier.base_checkpoint if earlier else None)
    if not base:
        raise ValueError("a parameter-efficient fine-tuning (--adapter_size, --lora_rank) "
                         "needs --init_checkpoint: the base it adapts")
    if not hasattr(task, "serving_spec"):
        raise ValueError(f"{type(task).__name__} has no serving_spec(): a parameter-efficient "
                         "run records what its export rebuilds the task from")
    options = dataclasses.replace(options, peft=settings, init_checkpoint=base)
    spec = dict(task.serving_spec(), max_seq_length=options.max_seq_length)
    # The record names the base for later runs, exports and merges, from any directory.
    recorded = base if "://" in base else os.path.abspath(base)
    return options, PeftAdaptation(settings, directory, recorded, spec)
