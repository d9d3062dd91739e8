"""Reading back what a `Trainer` writes: its TensorBoard curves and its eval_results.txt.

    read_scalars("pretrained/train")  # {step: {"masked_lm_loss": 6.5, "learning_rate": ...}}
    read_eval_results("pretrained/eval_results.txt")  # {"masked_lm_accuracy": 0.31, ...}

For reports and plots made after a run (demo/report.py, bench/pretraining_curve.py), without
TensorBoard's own readers and without TensorFlow: an event file is TFRecords (an 8-byte
little-endian length, its 4-byte CRC, the record, its CRC) of `Event` protos, parsed with
tensorboard's copy of the proto and its `make_ndarray` (neither loads TensorFlow), so a report
starts in a fraction of a second.
"""

from __future__ import annotations

import os
import struct
from typing import Iterator

from tensorboard.compat.proto.event_pb2 import Event
from tensorboard.util.tensor_util import make_ndarray

_LENGTH = struct.Struct("<Q")


def _records(path: str) -> Iterator[bytes]:
    """The records of a TFRecord file in order; a record cut short at the end (a run killed
    while writing) is left out, as TensorBoard leaves it."""
    with open(path, "rb") as f:
        while len(header := f.read(_LENGTH.size + 4)) == _LENGTH.size + 4:
            (length,) = _LENGTH.unpack_from(header)
            data = f.read(length)
            if len(data) < length or len(f.read(4)) < 4:
                return
            yield data


def read_scalars(events_dir: str) -> dict[int, dict[str, float]]:
    """{step: {tag: value}} of every scalar summary in the event files of `events_dir`, in the
    order written (a later value of a tag at the same step wins); {} when there is no folder."""
    curve: dict[int, dict[str, float]] = {}
    if not os.path.isdir(events_dir):
        return curve
    for name in sorted(os.listdir(events_dir)):
        for record in _records(os.path.join(events_dir, name)):
            event = Event.FromString(record)
            for value in event.summary.value:
                curve.setdefault(event.step, {})[value.tag] = float(make_ndarray(value.tensor))
    return curve


def read_eval_results(path: str) -> dict[str, float]:
    """The `key = value` lines of an eval_results.txt (`trainer.write_eval_results`), as
    numbers (global_step included)."""
    results = {}
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, start=1):
            name, equals, value = line.strip().partition(" = ")
            if not equals:
                raise ValueError(f"{path}:{number}: expected 'key = value'")
            results[name] = float(value)
    return results
