"""TFRecord files made once per setting: a key file beside each says what it was made from.

    cached(path, key, make) -> CachedRecords(path, facts, reused)

run_classifier, run_squad and run_ner convert their data in output_dir; a rerun with the same
settings (a predict-only run after training, say) reuses the files instead of tokenizing again.
The key holds every setting that changes the records and the sha256 of the inputs (contents, not
dates: a copied dataset is still the same data, and a file edited within a second is not). The
records' size is kept beside the key, so a cached file cut short (a disk that filled up, an
interrupted copy of an output_dir) is made again rather than trusted.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from typing import Any, Callable

from official.atomic_files import open_atomically

_SIZE = "bytes"  # the records' file size when made


@dataclasses.dataclass(frozen=True)
class CachedRecords:
    """A TFRecord file made (or found) by `cached`.

    Attributes:
      path: the TFRecord file.
      facts: what `make` said of it, as kept in the key file: the data file and its counts,
        under names the module that made it documents (its `cached_tfrecord`).
      reused: True when the file was already there for the same key.
    """
    path: str
    facts: dict[str, Any]
    reused: bool


def sha256_of_file(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def cached(path: str, key: dict[str, Any],
           make: Callable[[], dict[str, Any]]) -> CachedRecords:
    """The records at `path` with their facts (counts, say), made by `make()` unless `path` and
    its key file `<path>.json` are there for the same `key`.

    Args:
      key: JSON-serialisable settings and input hashes the records depend on.
      make: writes `path` (atomically) and returns JSON-serialisable facts about it.
    """
    key_file = path + ".json"
    if os.path.exists(path) and os.path.exists(key_file):
        with open(key_file, encoding="utf-8") as f:
            made = json.load(f)
        if made.pop("key") == key and made.pop(_SIZE, None) == os.path.getsize(path):
            return CachedRecords(path, made, reused=True)
    # The old key goes first: were the run to stop between writing the records and the key,
    # the next run would otherwise trust new records under the old key.
    if os.path.exists(key_file):
        os.unlink(key_file)
    facts = make()
    with open_atomically(key_file) as f:
        json.dump({"key": key, _SIZE: os.path.getsize(path), **facts}, f, indent=2)
        f.write("\n")
    return CachedRecords(path, facts, reused=False)
