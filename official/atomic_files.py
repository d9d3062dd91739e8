"""Files that appear under their final name only when complete, and a full disk said plainly.

Every writer of the project goes through `open_atomically` (or `atomic_path`, for writers that
open files by name, such as tf.io.TFRecordWriter; `atomic_folder` for a folder of files written
as one), so an interrupted or failed run never leaves a half-written file for the next step to
read as if it were whole.

A write that runs out of space fails in as many ways as there are writers: Python's OSError of
errno ENOSPC, numpy's "1280000 requested and 524256 written", TensorFlow's ResourceExhaustedError
"...; No space left on device" after a traceback of its graph. `disk_full` turns each into one
OSError(ENOSPC) naming the file or folder the user asked for, which the entry points write as
"<path>: no space left on device"; `atomic_path` does so for what it wraps, after removing its
temporary file.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import shutil
import uuid
from typing import IO, Iterator

TEMP_SUFFIX = ".tmp"
_NO_SPACE = "No space left on device"
# numpy's ndarray.tofile (and so np.save) on a full disk: an OSError with no errno.
_SHORT_WRITE = re.compile(r"\d+ requested and \d+ written")
# The path TensorFlow's file system names in its message (a temporary file beside the target).
_TF_PATH = re.compile(r"(/[^\s;]+)[;:]? " + _NO_SPACE)


def disk_full(error: BaseException, path: str | None = None) -> OSError | None:
    """OSError(ENOSPC, "no space left on device", `path`) when `error` is a write that ran out of
    space, else None. Without `path`, the error's own path, or for TensorFlow's the nearest
    folder of the one its message names that still exists (its temporary files are gone)."""
    text = str(error)
    if isinstance(error, OSError) and error.errno == errno.ENOSPC:
        path = path or error.filename
    elif _NO_SPACE not in text and not (isinstance(error, OSError) and _SHORT_WRITE.search(text)):
        return None
    if path is None:
        named = _TF_PATH.search(text)
        path = named.group(1) if named else None
        while path and not os.path.exists(path):
            path = os.path.dirname(path)
    return OSError(errno.ENOSPC, "no space left on device", path)


@contextlib.contextmanager
def atomic_path(path: str) -> Iterator[str]:
    """Yields a temp path beside `path`; renames it to `path` if the `with` block completes and
    deletes it otherwise (a full disk raised as `disk_full` names `path`). The temp file is in
    the same folder, so the rename is atomic."""
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    tmp = os.path.join(directory, f".{os.path.basename(path)}.{uuid.uuid4().hex}{TEMP_SUFFIX}")
    try:
        yield tmp
        os.replace(tmp, path)
    except BaseException as e:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        full = disk_full(e, path)
        if full is not None:
            raise full from None
        raise


@contextlib.contextmanager
def atomic_folder(path: str) -> Iterator[str]:
    """Yields an empty temp folder beside `path`; when the `with` block completes, it replaces
    `path` (an earlier folder there is removed first), and otherwise it is removed (a full disk
    raised as `disk_full` names `path`). The temp folders an interrupted run left beside `path`
    are removed first."""
    parent, name = os.path.split(os.path.abspath(path))
    os.makedirs(parent, exist_ok=True)
    for leftover in os.listdir(parent):
        if leftover.startswith(f".{name}.") and leftover.endswith(TEMP_SUFFIX):
            shutil.rmtree(os.path.join(parent, leftover), ignore_errors=True)
    staging = os.path.join(parent, f".{name}.{uuid.uuid4().hex}{TEMP_SUFFIX}")
    os.makedirs(staging)
    try:
        yield staging
        if os.path.isdir(path):
            shutil.rmtree(path)
        os.replace(staging, path)
    except BaseException as e:
        shutil.rmtree(staging, ignore_errors=True)
        full = disk_full(e, path)
        if full is not None:
            raise full from None
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
