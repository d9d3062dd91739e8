"""The folder data_prep's pretraining-data generators write: shard names and summary.json.

    pretraining-00000-of-00010.tfrecord ... pretraining-00009-of-00010.tfrecord
    summary.json      written last, once every shard is complete: the options, the counts, and
                      num_shards

The writers (data_prep/fast_generation.py, data_prep/beam_pipeline.py) and the readers
(official/training/pretraining_input.py, official/tasks/pretraining.py) share these names and
`write_summary` / `read_summary`; the readers use the summary's "num_shards" and
"options"."objective". `expand_input_files` is run_pretraining's --input_file: globs, or such a
folder's shards. Only the standard library is imported, since the generator's coordinating
process never loads TensorFlow (nor does an entry point checking its flags); a remote path
(gs://...) is globbed by TensorFlow's file system, imported then. The records inside the shards
are official/pretraining_records.py.
"""

from __future__ import annotations

import glob
import json
import os
import re

from official.atomic_files import open_atomically

SUMMARY_FILE = "summary.json"
# Second-sentence objectives, as a summary's options name them. "nsp": BERT's next-sentence
# prediction (label 1 = B is a random sentence, 0 = B follows A, as the original writes it).
# "sop": ALBERT's sentence-order prediction (label 1 = the two segments are swapped). "none":
# RoBERTa's FULL-SENTENCES packing, one segment of contiguous sentences and no second-sentence
# task; next_sentence_labels is written as 0.
OBJECTIVES = ("nsp", "sop", "none")
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
    """The folder's summary.json as a dict; None when it has none. The fields the readers use
    are checked: num_shards (a positive integer) and options.objective (one of OBJECTIVES; a
    summary without options is next-sentence data).

    Raises:
      ValueError: not a JSON object, or one of those fields wrong (naming the file and field).
    """
    path = os.path.join(output_dir, SUMMARY_FILE)
    if not os.path.isfile(path):
        return None
    try:
        with open(path, encoding="utf-8") as f:
            summary = json.load(f)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"{path}: unreadable ({e})") from None
    if not isinstance(summary, dict):
        raise ValueError(f"{path}: not a JSON object")
    shards = summary.get("num_shards")
    if type(shards) is not int or shards < 1:
        raise ValueError(f"{path}: field num_shards must be a positive integer, got {shards!r}")
    options = summary.setdefault("options", {})
    if not isinstance(options, dict):
        raise ValueError(f"{path}: field options must be an object, got {options!r}")
    if options.setdefault("objective", "nsp") not in OBJECTIVES:
        raise ValueError(f"{path}: field options.objective must be one of "
                         f"{', '.join(OBJECTIVES)}, got {options['objective']!r}")
    return summary


def _isdir(path: str) -> bool:
    if "://" in path:
        import tensorflow as tf
        return tf.io.gfile.isdir(path)
    return os.path.isdir(path)


def _glob(pattern: str) -> list[str]:
    if "://" in pattern:
        import tensorflow as tf
        return tf.io.gfile.glob(pattern)
    return glob.glob(pattern)


def expand_input_files(input_file: str, flag: str = "--input_file") -> list[str]:
    """The original's `--input_file` (or another `flag`): comma-separated globs to a sorted list
    of files.

    An entry may also be a folder data_prep's create_pretraining_data wrote: its shards, all of
    them, as its summary.json lists them. A file matched by two patterns is listed once (it would
    otherwise be read twice per epoch).

    Raises:
      ValueError: a pattern matches nothing or matches a summary.json (the message names it), a
        folder that is no finished generator output, or no pattern is given.
    """
    files = set()
    for pattern in (p.strip() for p in input_file.split(",")):
        if not pattern:
            continue
        if _isdir(pattern):
            files.update(generated_shards(pattern))
            continue
        matches = _glob(pattern)
        if not matches:
            raise ValueError(f"{flag} pattern {pattern!r} matches no file")
        summaries = [m for m in matches if os.path.basename(m) == SUMMARY_FILE]
        if summaries:
            raise ValueError(f"{flag} pattern {pattern!r} matches {summaries[0]}, which is "
                             f"no TFRecord file: give the folder {os.path.dirname(summaries[0])} "
                             f"itself as {flag} for all its shards")
        files.update(matches)
    if not files:
        raise ValueError(f"{flag} {input_file!r} names no file pattern")
    return sorted(files)


def generated_shards(folder: str) -> list[str]:
    """The shards of a finished create_pretraining_data output folder (its summary.json, written
    last, says how many).

    Raises:
      ValueError: the folder has no summary.json (not generator output, or a run that did not
        finish) or lacks shards its summary lists.
    """
    summary = read_summary(folder)
    if summary is None:
        raise ValueError(f"--input_file={folder}: a folder without "
                         f"{SUMMARY_FILE}: not the output of a finished "
                         f"create_pretraining_data run (give a glob of TFRecord files instead)")
    shards = shard_paths(folder, summary["num_shards"])
    missing = [path for path in shards if not os.path.isfile(path)]
    if missing:
        raise ValueError(f"--input_file={folder}: its {SUMMARY_FILE} lists "
                         f"{len(shards)} shards, but {len(missing)} are missing, e.g. "
                         f"{missing[0]}")
    return shards
