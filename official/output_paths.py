"""Checks that an output location can be written, made before any work starts.

    check_output_dir(path, flag)    a directory that exists or can be made, and can be written in
    check_output_file(path, flag)   a file whose folder is such a directory, not a directory itself

A run that would fail at its first write after minutes of work (an --output_dir that is a regular
file, a folder without write permission, an --output_file naming a directory) fails here instead,
with one line naming the flag. Nothing is created: a probe file is made in the nearest existing
folder and removed at once, which also catches read-only file systems and root-owned places that
permission bits alone would not show.
"""

from __future__ import annotations

import os
import tempfile


class OutputPathError(ValueError):
    """An output location cannot be written; the message names the flag and the path."""


def _nearest_existing(path: str) -> str:
    path = os.path.abspath(path)
    while not os.path.exists(path):
        path = os.path.dirname(path)
    return path


def _check_writable_in(folder: str, flag: str, path: str) -> None:
    try:
        handle, probe = tempfile.mkstemp(prefix=".write-check-", dir=folder)
    except OSError as e:
        raise OutputPathError(f"--{flag}={path}: cannot write in {folder} "
                              f"({e.strerror})") from None
    os.close(handle)
    os.unlink(probe)


def check_output_dir(path: str, flag: str = "output_dir") -> None:
    """Raises OutputPathError unless `path` is a writable directory or can be made one."""
    if not path:
        raise OutputPathError(f"--{flag}: required")
    existing = _nearest_existing(path)
    if not os.path.isdir(existing):
        what = ("is a file" if existing == os.path.abspath(path)
                else f"is inside the file {existing}")
        raise OutputPathError(f"--{flag}={path}: {what}, not a directory")
    _check_writable_in(existing, flag, path)


def check_output_file(path: str, flag: str = "output_file") -> None:
    """Raises OutputPathError unless `path` can be written as a file (its folder may be made)."""
    if not path:
        raise OutputPathError(f"--{flag}: required")
    if os.path.isdir(path):
        raise OutputPathError(f"--{flag}={path}: is a directory, not a file")
    existing = _nearest_existing(os.path.dirname(os.path.abspath(path)))
    if not os.path.isdir(existing):
        raise OutputPathError(f"--{flag}={path}: is inside the file {existing}, not a directory")
    _check_writable_in(existing, flag, path)
