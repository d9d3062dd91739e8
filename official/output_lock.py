"""One live writer per output folder: a run holds its folder until it ends, however it ends.

    hold(folder)      takes the folder for the rest of this process (again: a no-op), or raises
                      FolderBusy: "<folder>: another run is writing here (pid 123: python -m
                      run_scripts.run_pretraining ...); wait for it to end, or use another folder"
    holder(folder)    the pid holding it, or None (without taking it)

Two runs resuming into one output_dir would race on its checkpoints, its `checkpoint` state file
and its events; an orchestrator killed by SIGKILL used to leave its stage running while a rerun
started the same stage again (the second writer). The lock is flock(2) on the folder itself: no
lock file is left for a snapshot to see or a rerun to trip over, and the kernel drops it when the
holding process ends (SIGKILL included), so it is never stale. Its descriptor is not inherited by
the commands a holder starts (Python opens descriptors non-inheritable). The holder is named from
/proc/locks (Linux); elsewhere the message says "another process".

Standard library only: the entry points and orchestrators call it before TensorFlow loads.
"""

from __future__ import annotations

import fcntl
import os

# (device, inode) of each folder this process holds -> the descriptor holding it (kept open). By
# inode, not path: a folder removed and made again under the same name is another folder.
_held: dict[tuple[int, int], int] = {}


class FolderBusy(ValueError):
    """Another live process holds the folder; the message names the folder and that process."""

    def __init__(self, folder: str, pid: int | None):
        who = f"pid {pid}: {_command_of(pid)}" if pid else "another process"
        super().__init__(f"{folder}: another run is writing here ({who}); wait for it to end, "
                         f"or use another folder")
        self.pid = pid


def hold(folder: str) -> None:
    """Locks `folder` (which must exist) for the rest of this process, or raises FolderBusy."""
    descriptor = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    status = os.fstat(descriptor)
    if (status.st_dev, status.st_ino) in _held:
        os.close(descriptor)
        return
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(descriptor)
        raise FolderBusy(folder, holder(folder)) from None
    _held[status.st_dev, status.st_ino] = descriptor


def holder(folder: str) -> int | None:
    """The pid of the process holding `folder`'s lock, or None when no process does (or the
    folder does not exist, or the system keeps no /proc/locks)."""
    try:
        status = os.stat(folder)
        with open("/proc/locks", encoding="ascii") as f:
            table = f.read().splitlines()
    except OSError:
        return None
    device = f"{os.major(status.st_dev):02x}:{os.minor(status.st_dev):02x}:{status.st_ino}"
    for line in table:
        fields = line.split()
        # "1: FLOCK  ADVISORY  WRITE 28995 fe:00:2286781 0 EOF"; a waiter's line has "->".
        if len(fields) >= 6 and fields[1] == "FLOCK" and fields[5] == device:
            return int(fields[4])
    return None


def _command_of(pid: int) -> str:
    """The process's command line as `ps` shows it, cut at 120 characters."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            words = f.read().split(b"\0")
    except OSError:
        return "a process"
    text = " ".join(os.path.basename(w.decode(errors="replace")) if i == 0 else
                    w.decode(errors="replace") for i, w in enumerate(words) if w)
    return text if len(text) <= 120 else text[:117] + "..."
