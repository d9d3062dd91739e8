"""Files that appear under their final name only when complete.

Every writer of the project goes through `open_atomically`, so an interrupted or failed run never
leaves a half-written file for the next step to read as if it were whole.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from typing import IO, Iterator


@contextlib.contextmanager
def open_atomically(path: str, mode: str = "w") -> Iterator[IO]:
    """Opens a temp file beside `path` ("w" text or "wb" binary); renames it to `path` if the
    `with` block completes and deletes it otherwise.

    The temp file is in the same folder, so the rename is atomic; it is created with open(..., "x")
    rather than mkstemp so that it gets the umask's permissions, not owner-only ones.
    """
    if mode not in ("w", "wb"):
        raise ValueError(f"mode must be 'w' or 'wb', got {mode!r}")
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    tmp = os.path.join(directory, f".{os.path.basename(path)}.{uuid.uuid4().hex}.tmp")
    try:
        with open(tmp, mode.replace("w", "x"), **({} if "b" in mode else {"encoding": "utf-8"})) as f:
            yield f
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
