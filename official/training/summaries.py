"""Reading back what a `Trainer` writes: its TensorBoard curves and its eval_results.txt.

    read_scalars("pretrained/train")  # {step: {"masked_lm_loss": 6.5, "learning_rate": ...}}
    read_eval_results("pretrained/eval_results.txt")  # {"masked_lm_accuracy": 0.31, ...}

For reports and plots made after a run (demo/report.py, bench/pretraining_curve.py), without
TensorBoard's own readers.
"""

from __future__ import annotations

import os

import tensorflow as tf


def read_scalars(events_dir: str) -> dict[int, dict[str, float]]:
    """{step: {tag: value}} of every scalar summary in the event files of `events_dir`, in the
    order written (a later value of a tag at the same step wins); {} when there is no folder."""
    curve: dict[int, dict[str, float]] = {}
    if not os.path.isdir(events_dir):
        return curve
    for name in sorted(os.listdir(events_dir)):
        for record in tf.data.TFRecordDataset(os.path.join(events_dir, name)):
            event = tf.compat.v1.Event.FromString(record.numpy())
            for value in event.summary.value:
                curve.setdefault(event.step, {})[value.tag] = float(
                    tf.make_ndarray(value.tensor))
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
