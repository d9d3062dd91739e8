"""A parameter-efficient run's artifact: what it trained, and the record that names its base.

A PEFT fine-tuning's output_dir (and its best/) holds

    peft_config.json   the method and its sizes, the base checkpoint's path and fingerprint,
                       and what an export needs to serve the task (its `serving_spec`)
    bert_config.json   the architecture
    model.ckpt-N.*     the trained variables only: adapters or LoRA matrices, LayerNorms, the
                       pooler when it trains, the task head (official/checkpoints/training.py);
                       best/ without the optimiser's slots

so a task costs a few percent of its base (bench/finetune_peft.py measures real sizes), and the
record refuses any other base: weights trained on one base are meaningless on another, and with
the same shapes nothing else would notice.

    fingerprint(encoder)        sha256 of the encoder's weights (names, dtypes, shapes, values)
    PeftRecord                  peft_config.json, read and written
    read_record(directory)      a folder's record, or None
    find_run(path)              a run's checkpoint (best/ when kept) and record
    load_base(model, record, base, source)
                                base weights into a fresh model, checked against the record, then
                                the method applied: the model is then ready for the run's
                                trained variables (official/export/restoring.py reads them)
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os

import keras
import numpy as np

from official import checkpoints
from official.atomic_files import open_atomically
from official.checkpoints import tf1, training
from official.checkpoints.errors import CheckpointError
from official.peft import methods
from official.peft.settings import PeftSettings
from official.training import output_dir

PEFT_FILE = output_dir.ADAPTATION_RECORDS[0]  # "peft_config.json"


def fingerprint(encoder: keras.Model) -> str:
    """"sha256:<hex>" of the encoder's weights under their original names: their names, dtypes,
    shapes and bytes, in name order. Taken before adapters or LoRA are added."""
    digest = hashlib.sha256()
    for name, value in sorted(tf1.weights_of(methods.encoder_of(encoder)).items()):
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


def read_record(directory: str) -> PeftRecord | None:
    """The record in `directory` (a run's output_dir or its best/), None when there is none.

    Raises:
      CheckpointError: the file is there but is not a record (one line naming it).
    """
    path = os.path.join(directory, PEFT_FILE)
    if not os.path.isfile(path):
        return None
    try:
        with open(path, encoding="utf-8") as f:
            values = json.load(f)
        base, mark = values.pop("base_checkpoint"), values.pop("base_fingerprint")
        task = values.pop("task", {})
        return PeftRecord(PeftSettings.from_dict(values), base, mark, task)
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        raise CheckpointError(f"{path}: not a parameter-efficient run's record ({e})") from None


def find_run(path: str) -> tuple[str, PeftRecord | None]:
    """(checkpoint prefix, record) of a fine-tuning output_dir (its best/ when kept, else its
    newest checkpoint) or checkpoint prefix; record None for a full fine-tuning."""
    prefix = output_dir.finetuned_checkpoint(path)
    record = read_record(os.path.dirname(prefix))
    if record is not None and not training.is_peft_checkpoint(prefix):
        raise CheckpointError(f"{prefix}: a full fine-tuning's checkpoint beside a "
                              f"parameter-efficient run's {PEFT_FILE}: remove one of them")
    return prefix, record


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
