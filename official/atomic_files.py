"""Files that appear under their final name only when complete.

Every writer of the project goes through `open_atomically` (or `atomic_path`, for writers that
open files by name, such as tf.io.TFRecordWriter), so an interrupted or failed run never leaves a
half-written file for the next step to read as if it were whole.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from typing import IO, Iterator

TEMP_SUFFIX = ".tmp"


@contextlib.contextmanager
def atomic_path(path: str) -> Iterator[str]:
    """Yields a temp path beside `path`; renames it to `path` if the `with` block completes and
    deletes it otherwise. The temp file is in the same folder, so the rename is atomic."""
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    tmp = os.path.join(directory, f".{os.path.basename(path)}.{uuid.uuid4().hex}{TEMP_SUFFIX}")
    try:
        yield tmp
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


@contextlib.contextmanager
def open_atomically(path: str, mode: str = "w") -> Iterator[IO]:
    """Opens `atomic_path(path)` as a file ("w" text, UTF-8, or "wb" binary).

    It is created with open(..., "x") rather than mkstemp so that it gets the umask's permissions,
    not owner-only ones.
    """
    if mode not in ("w", "wb"):
        raise ValueError(f"mode must be 'w' or 'wb', got {mode!r}")
    with atomic_path(path) as tmp:
        encoding = {} if "b" in mode else {"encoding": "utf-8"}
        with open(tmp, mode.replace("w", "x"), **encoding) as f:
            yield f
