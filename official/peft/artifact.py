"""A parameter-efficient run's artifact: what it trained, and the record that names its base.

A PEFT fine-tuning's output_dir (and its best/) holds

    peft_config.json   the method and its sizes, the base checkpoint's path and fingerprint,
                       and what an export needs to serve the task (its `serving_spec`)
    bert_config.json   the architecture
    model.ckpt-N.*     the trained variables only: the method's own, what it trains of the
                       encoder, the pooler when it trains, the task head
                       (official/checkpoints/training.py); best/ without the optimiser's slots

so a task costs a few percent of its base (bench/finetune_peft.py measures real sizes), and the
record refuses any other base: weights trained on one base are meaningless on another, and with
the same shapes nothing else would notice.

    fingerprint(encoder)        sha256 of the encoder's weights (names, dtypes, shapes, values)
    PeftRecord                  peft_config.json, read and written
    read_record(directory)      a folder's record, or None
    task_differences(recorded, spec)
                                what a record's task and a run's serving spec disagree on
    find_run(path)              a run's checkpoint (best/ when kept) and record
    load_base(model, record, base, source)
                                base weights into a fresh model, checked against the record, then
                                the method applied: the model is then ready for the run's
                                trained variables
    restore(model, run, base)   any fine-tuning checkpoint into its task's model: a PEFT run on
                                its base, a full fine-tuning as it is
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os

import keras
import numpy as np

from official import checkpoints, records
from official.atomic_files import open_atomically
from official.checkpoints import finetuned, tf1
from official.checkpoints.errors import CheckpointError
from official.modeling.encoder import encoder_of
from official.peft import methods
from official.peft.method import PeftSettings

PEFT_FILE = "peft_config.json"


def fingerprint(encoder: keras.Model) -> str:
    """"sha256:<hex>" of the encoder's weights under their original names: their names, dtypes,
    shapes and bytes, in name order. Taken before a method is applied."""
    digest = hashlib.sha256()
    for name, value in sorted(tf1.weights_of(encoder_of(encoder)).items()):
        value = np.ascontiguousarray(value)
        digest.update(f"{name} {value.dtype.str} {list(value.shape)}\n".encode())
        digest.update(value.tobytes())
    return "sha256:" + digest.hexdigest()


@dataclasses.dataclass(frozen=True)
class PeftRecord:
    """peft_config.json.

    Attributes:
      settings: the method and its sizes.
      base_checkpoint: the --init_checkpoint the run started from, as given.
      base_fingerprint: `fingerprint` of that checkpoint's encoder.
      task: the task's `serving_spec()` (official/tasks/): what an export rebuilds it from.
    """
    settings: PeftSettings
    base_checkpoint: str
    base_fingerprint: str
    task: dict = dataclasses.field(default_factory=dict)

    def to_json(self) -> str:
        return json.dumps({**self.settings.to_dict(), "base_checkpoint": self.base_checkpoint,
                           "base_fingerprint": self.base_fingerprint, "task": self.task},
                          indent=2, sort_keys=True) + "\n"

    def write(self, directory: str) -> None:
        with open_atomically(os.path.join(directory, PEFT_FILE)) as f:
            f.write(self.to_json())


def task_differences(recorded: dict, spec: dict) -> list[str]:
    """["feature_based ({...} vs None)", ...]: the entries of a record's task (`PeftRecord.task`)
    and a run's serving spec that differ, max_seq_length aside (a rerun may read its data at
    another length); none when the record names no task (a record written before it did)."""
    if not recorded:
        return []
    return [f"{name} ({recorded.get(name)} vs {spec.get(name)})"
            for name in dict.fromkeys([*recorded, *spec])
            if name != "max_seq_length" and recorded.get(name) != spec.get(name)]


def read_record(directory: str) -> PeftRecord | None:
    """The record in `directory` (a run's output_dir or its best/), None when there is none.

    Raises:
      CheckpointError: the file is there but is not a record (one line naming it and the
        field).
    """
    path = os.path.join(directory, PEFT_FILE)
    if not os.path.isfile(path):
        return None
    try:
        values = records.read_json(path)
        if not isinstance(values, dict):
            raise ValueError(f"expected a JSON object, got {type(values).__name__}")
        fields = {}
        for name, kind in (("base_checkpoint", str), ("base_fingerprint", str), ("task", dict)):
            value = values.pop(name, {} if name == "task" else None)
            if not isinstance(value, kind):
                raise ValueError(f"field {name} must be a "
                                 f"{'string' if kind is str else 'JSON object'}, got {value!r}")
            fields[name] = value
        return PeftRecord(methods.from_dict(values, path), **fields)
    except ValueError as e:
        message = str(e).removeprefix(f"{path}: ")
        raise CheckpointError(f"{path}: not a parameter-efficient run's record "
                              f"({message})") from None


def record_of(run: finetuned.Finetuned) -> PeftRecord | None:
    """The record beside a fine-tuning's checkpoint; None for a full fine-tuning.

    Raises:
      CheckpointError: a record beside a full fine-tuning's checkpoint, or not a record.
    """
    record = read_record(run.directory)
    if record is not None and not run.is_partial:
        raise CheckpointError(f"{run.prefix}: a full fine-tuning's checkpoint beside a "
                              f"parameter-efficient run's {PEFT_FILE}: remove one of them")
    return record


def find_run(path: str) -> tuple[finetuned.Finetuned, PeftRecord | None]:
    """(the checkpoint, the record) of a fine-tuning output_dir (its best/ when kept, else its
    newest checkpoint) or checkpoint prefix; record None for a full fine-tuning."""
    run = finetuned.resolve(path)
    return run, record_of(run)


def check_base(record: PeftRecord, found: str, base: str, source: str) -> None:
    """Raises CheckpointError unless `found` (the fingerprint of `base`'s encoder) is the one
    the run at `source` was trained on."""
    if found != record.base_fingerprint:
        raise CheckpointError(
            f"{base} is not the base of the parameter-efficient run {source}: that run was "
            f"trained on {record.base_checkpoint} (weights {record.base_fingerprint[:19]}...), "
            f"these weights are {found[:19]}...")


def load_base(model: keras.Model, record: PeftRecord, base: str | None, source: str) -> None:
    """Loads the base (`base`, else the record's) into the fresh `model`, checks it is the run's,
    and applies the run's method, so the model holds every variable of the run at `source`.

    Raises:
      CheckpointError: the base cannot be read, does not fit, or is not the run's.
    """
    base = base or record.base_checkpoint
    checkpoints.load_init_checkpoint(base, model)
    check_base(record, fingerprint(model), base, source)
    methods.apply(model, record.settings)


def restore(model: keras.Model, run: str | finetuned.Finetuned,
            base: str | None = None) -> PeftRecord | None:
    """Loads the fine-tuning checkpoint `run` (resolved, or a path `finetuned.resolve` takes:
    an output_dir's best/ when kept) into the fresh `model` its task built: a
    parameter-efficient run on its base (`base`, else the one its record names, which must be
    the run's) with its method applied, a full fine-tuning as it is. Returns the run's record
    (None for a full fine-tuning).

    Raises:
      CheckpointError: a checkpoint without this model's head or of other shapes; a `base` for
        a full fine-tuning, or a base that is not the PEFT run's.
    """
    if isinstance(run, str):
        run = finetuned.resolve(run)
    record = record_of(run)
    if record is not None:
        load_base(model, record, base, run.source)
    elif base is not None:
        raise CheckpointError(f"{run.prefix} holds no parameter-efficient run ({PEFT_FILE}): "
                              "a full fine-tuning needs no base")
    run.restore(model)
    return record
