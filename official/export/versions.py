"""An export_dir's SavedModel versions, found without TensorFlow (an entry point's checks use it
before TensorFlow loads).

    is_saved_model(path)      a SavedModel's folder (saved_model.pb or .pbtxt in it)
    newest_version(path)      `path` itself when it is one, else its numbered subfolder with the
                              largest number that holds one (TF Serving's choice;
                              official/export/saving.py names versions)
    digest(path)              sha256 over a SavedModel's graph and variables' index: equal for
                              the same export, different when either changes
"""

from __future__ import annotations

import hashlib
import os


def is_saved_model(path: str) -> bool:
    return any(os.path.isfile(os.path.join(path, name))
               for name in ("saved_model.pb", "saved_model.pbtxt"))


def newest_version(export_dir: str) -> str:
    """See the module docstring.

    Raises:
      ValueError: no such folder, or neither a SavedModel nor one holding numbered versions.
    """
    if not os.path.isdir(export_dir):
        raise ValueError(f"{export_dir}: no such directory")
    if is_saved_model(export_dir):
        return export_dir
    versions = [name for name in os.listdir(export_dir)
                if name.isdigit() and is_saved_model(os.path.join(export_dir, name))]
    if not versions:
        raise ValueError(f"{export_dir}: neither a SavedModel nor an export_dir holding "
                         "numbered SavedModel versions")
    return os.path.join(export_dir, max(versions, key=int))


def digest(path: str) -> str:
    """See the module docstring (`path` a SavedModel's folder)."""
    sha = hashlib.sha256()
    for name in ("saved_model.pb", "saved_model.pbtxt", os.path.join("variables",
                                                                     "variables.index")):
        file = os.path.join(path, name)
        if os.path.isfile(file):
            with open(file, "rb") as f:
                sha.update(name.encode() + b"\0" + hashlib.file_digest(f, "sha256").digest())
    return sha.hexdigest()
