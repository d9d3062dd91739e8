"""Parameter-efficient fine-tuning as the generic fine-tuning run drives it (the seam of
official/adaptation.py).

    resolve(settings, options, task) -> (options, PeftAdaptation | None)
        reconciles the flags' settings with what output_dir already holds, before any model or
        data work: a rerun resumes a PEFT run only with the same method and sizes; a run that
        only evaluates or predicts on a PEFT output_dir takes its method (and its base, when no
        --init_checkpoint is given) from its record; either must build the task the record
        names (its serving spec, but for max_seq_length); a PEFT run into a fully fine-tuned
        output_dir, or the reverse, is refused
    PeftAdaptation
        `adapt(model)`: after --init_checkpoint is loaded, fingerprints the base (checked against
        a resumed run's record), then applies the method; `files()` is the record the run writes
        into output_dir and best/
"""

from __future__ import annotations

import dataclasses
import math
import os
from typing import Any

import keras
from absl import logging

from official.adaptation import Adaptation, Leftover
from official.checkpoints import finetuned
from official.peft import artifact, methods
from official.peft.method import PeftSettings


class PeftAdaptation(Adaptation):
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
        self.task_spec = task
        self.record: artifact.PeftRecord | None = None

    def adapt(self, model: keras.Model) -> None:
        record = artifact.PeftRecord(self.settings, self.base_checkpoint,
                                     artifact.fingerprint(model), self.task_spec)
        earlier = (artifact.read_record(self.output_dir)
                   if finetuned.has_checkpoint(self.output_dir) else None)
        if earlier is not None:
            artifact.check_base(earlier, record.base_fingerprint, self.base_checkpoint,
                                self.output_dir)
        methods.apply(model, self.settings)
        self.record = record
        trained = sum(math.prod(v.shape) for v in model.trainable_variables)
        total = sum(math.prod(v.shape) for v in model.variables if "float" in v.dtype)
        logging.info("%s: training %s of %s parameters (%.2f%%)", self.settings.describe(),
                     f"{trained:,}", f"{total:,}", 100.0 * trained / total)

    def files(self) -> dict[str, str | None]:
        if self.record is None:
            raise ValueError("the adaptation has not been applied yet")
        return {artifact.PEFT_FILE: self.record.to_json()}


def resolve(settings: PeftSettings | None, options: Any, task: Any
            ) -> tuple[Any, Adaptation | None]:
    """(options, adaptation) for a fine-tuning run with `settings` (None: no method asked for);
    adaptation None for full fine-tuning. `options` are the run's FinetuningOptions
    (official/training/finetuning.py); the returned ones name the base as init_checkpoint. See
    the module docstring.

    Raises:
      ValueError: the flags disagree with the PEFT run in output_dir, or the output_dir holds a
        full fine-tuning, or no base is given.
    """
    directory = options.output_dir
    # A record counts once checkpoints stand beside it (a run killed before its first save
    # leaves nothing to resume).
    has_checkpoint = finetuned.has_checkpoint(directory)
    earlier = artifact.read_record(directory) if has_checkpoint else None
    spec = dict(task.serving_spec(), max_seq_length=options.max_seq_length)
    if earlier is not None:
        if settings is None and options.do_train:
            raise ValueError(
                f"{directory} holds a parameter-efficient run ({earlier.settings.describe()}): "
                f"pass its flags to resume it, or use another --output_dir")
        differences = (earlier.settings.differences(settings) if settings is not None else []) \
            + [f"the task's {d}" for d in artifact.task_differences(earlier.task, spec)]
        if differences:
            raise ValueError(
                f"{os.path.join(directory, artifact.PEFT_FILE)} (the run in {directory}) and the "
                f"flags differ in {', '.join(differences)}: nothing was changed; use another "
                f"--output_dir, or the same flags to resume")
        settings = earlier.settings
    elif settings is not None and has_checkpoint:  # no record there
        raise ValueError(f"{directory} holds a full fine-tuning's checkpoints: a "
                         f"parameter-efficient run ({settings.describe()}) needs another "
                         f"--output_dir")
    if settings is None:
        stale = os.path.isfile(os.path.join(directory, artifact.PEFT_FILE))
        return options, Leftover(artifact.PEFT_FILE) if stale else None
    base = options.init_checkpoint or (earlier.base_checkpoint if earlier else None)
    if not base:
        raise ValueError(f"a parameter-efficient fine-tuning ({settings.describe()}) needs "
                         "--init_checkpoint: the base it adapts")
    options = dataclasses.replace(options, init_checkpoint=base)
    # The record names the base for later runs, exports and merges, from any directory.
    recorded = base if "://" in base else os.path.abspath(base)
    return options, PeftAdaptation(settings, directory, recorded, spec)
