"""The folder data_prep's pretraining-data generators write: shard names and summary.json.

    pretraining-00000-of-00010.tfrecord ... pretraining-00009-of-00010.tfrecord
    summary.json      written last, once every shard is complete: the options, the counts, and
                      num_shards

The writers (data_prep/fast_generation.py, data_prep/beam_pipeline.py) and the readers
(official/training/pretraining_input.py, official/tasks/pretraining.py) share these names and
`write_summary` / `read_summary`; the readers use the summary's "num_shards" and
"options"."objective". Only the standard library is imported, since the generator's coordinating
process never loads TensorFlow. The records inside the shards are official/pretraining_records.py.
"""

from __future__ import annotations

import json
import os
import re

from official.atomic_files import open_atomically

SUMMARY_FILE = "summary.json"
# Any generator's shard, whatever its run's num_shards.
SHARD_NAME = re.compile(r"pretraining-\d{5}-of-\d{5}\.tfrecord")


def shard_path(output_dir: str, shard: int, num_shards: int) -> str:
    """The path of shard `shard` (0-based) of a run that writes `num_shards` files."""
    return os.path.join(output_dir, f"pretraining-{shard:05d}-of-{num_shards:05d}.tfrecord")


def shard_paths(output_dir: str, num_shards: int) -> list[str]:
    """Every shard path of such a run, in order."""
    return [shard_path(output_dir, shard, num_shards) for shard in range(num_shards)]


def write_summary(output_dir: str, summary: dict) -> None:
    """Writes the folder's summary.json (indented, keys sorted), under its name only when complete.

    Call it once every shard is complete: its presence is what says the folder is finished.
    """
    with open_atomically(os.path.join(output_dir, SUMMARY_FILE)) as f:
        json.dump(summary, f, indent=2, sort_keys=True)


def read_summary(output_dir: str) -> dict | None:
    """The folder's summary.json as a dict; None when it has none.

    Raises:
      ValueError: a summary.json that is not a JSON object (the message names it).
    """
    path = os.path.join(output_dir, SUMMARY_FILE)
    if not os.path.isfile(path):
        return None
    try:
        with open(path, encoding="utf-8") as f:
            summary = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        raise ValueError(f"{path}: unreadable ({e})") from None
    if not isinstance(summary, dict):
        raise ValueError(f"{path}: not a JSON object")
    return summary
