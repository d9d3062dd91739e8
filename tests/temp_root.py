"""The temporary folder of one pytest process (tests/conftest.py): what the tests and the
commands they start leave in the temporary folder (TensorFlow's autograph sources, the scratch
folders of TFDS, Beam and dask) goes under it, and it is removed when the process ends.

A process killed outright (SIGKILL, the machine's OOM killer) cannot remove its own, so each
folder names its process (`bert-tests-<pid>-<random>`) and the next suite removes those whose
process is gone.

    own_folder   make this process's folder, after removing those of ended processes
"""

import os
import re
import shutil
import tempfile

_PREFIX = "bert-tests-"
_NAME = re.compile(re.escape(_PREFIX) + r"(\d+)-")


def _alive(pid: int) -> bool:
    """Whether a process `pid` exists (one of another user counts as alive)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _remove_ended(parent: str) -> None:
    """Removes the folders in `parent` that ended processes' `own_folder` left."""
    for name in os.listdir(parent):
        match = _NAME.match(name)
        path = os.path.join(parent, name)
        if match and not _alive(int(match.group(1))) and os.path.isdir(path):
            shutil.rmtree(path, ignore_errors=True)


def own_folder(parent: str | None = None) -> str:
    """A new folder for this process in `parent` (the temporary folder by default), after the
    ended processes' folders there are removed."""
    parent = parent or tempfile.gettempdir()
    _remove_ended(parent)
    return tempfile.mkdtemp(prefix=f"{_PREFIX}{os.getpid()}-", dir=parent)
