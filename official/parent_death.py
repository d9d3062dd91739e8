"""Commands that end when the process that started them ends, SIGKILL included.

    child_environment(env)      what an orchestrator (the ablation study, the demo) starts a
                                command with: `env` plus STOP_WITH_PARENT=<its pid>
    stop_with_parent()          what every command line does once its flags are parsed
                                (official/command_line.py): given STOP_WITH_PARENT, the kernel
                                sends it SIGTERM when that parent dies
    die_with(parent_pid, signum)
                                the same for a process already running (data_prep's workers)

Without it a runner killed by SIGKILL leaves its running stage orphaned: the stage goes on
writing into its output_dir while a rerun of the runner starts the same stage again (two
writers; official/output_lock.py refuses the second). SIGTERM, not SIGKILL, because every entry
point treats it as ctrl-C: a training run saves a checkpoint and the others leave nothing
half-written, so the rerun resumes. Linux only (prctl's PR_SET_PDEATHSIG, which watches the
thread that started the child: the orchestrators start each command from a thread that waits for
it); elsewhere a killed runner's command runs to its end, as before.

The variable is removed from the environment once read, so a command's own children are not
mistaken for the orchestrator's.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
from typing import Mapping

STOP_WITH_PARENT = "BERT_STOP_WITH_PARENT"
_PR_SET_PDEATHSIG = 1  # linux/prctl.h


def child_environment(env: Mapping[str, str]) -> dict[str, str]:
    """`env` for a command this process starts and must not outlive it."""
    return {**env, STOP_WITH_PARENT: str(os.getpid())}


def stop_with_parent() -> None:
    """Given STOP_WITH_PARENT in the environment (and removed from it): SIGTERM to this process
    when that parent dies, at once when it already has."""
    parent = os.environ.pop(STOP_WITH_PARENT, None)
    if parent and parent.isdigit():
        die_with(int(parent), signal.SIGTERM)


def die_with(parent_pid: int, signum: int) -> None:
    """Makes the kernel send `signum` to this process when `parent_pid` (its parent) dies; sends
    it now when the parent died before the request took effect."""
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, ctypes.c_ulong(signum))
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent_pid:
        os.kill(os.getpid(), signum)
