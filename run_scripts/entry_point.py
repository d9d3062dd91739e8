"""How an entry point ends: a stopped job's exit code, a bad input's one line, readable output.

    def main(argv):
        entry_point.run_job("run_classifier", lambda: run(...))

Every entry point's job runs through `run_job`, so each ends the same way:
  - SIGTERM or ctrl-C during training: the loop saved a checkpoint; exit 143 or 130 (128 + the
    signal, what a supervisor or shell expects), and rerunning the command resumes;
  - ctrl-C outside training: exit 130 with one line (whatever was being written is not left
    half-made: every writer of the project writes to a temporary name first);
  - bad flags, files, data or checkpoints (a ValueError or OSError, which the library raises with
    one-line messages): "<script>: <message>" as the last line on stderr, exit 1, no traceback.
Log lines are plain messages (official/console.py), TensorFlow's C++ notes held back
(run_scripts/__init__.py).
"""

import sys
from typing import Callable

from absl import logging

from official import console
from official.training.trainer import Preempted


def run_job(script: str, job: Callable[[], object]) -> None:
    """Runs `job()` and ends the process as the module docstring says."""
    console.use_plain_lines()
    try:
        job()
    except Preempted as e:
        logging.warning("%s", e)
        console.quiet_after_error()
        sys.exit(128 + e.signum)
    except KeyboardInterrupt:
        _fail(script, "interrupted (ctrl-C); nothing half-written was left", 130)
    except (ValueError, OSError) as e:
        _fail(script, str(e), 1)


def _fail(script: str, message: str, status: int) -> None:
    # The first line only: a library message is one line, and TensorFlow's may carry a graph
    # trace after it.
    lines = message.strip().splitlines() or ["failed"]
    console.quiet_after_error()
    print(f"{script}: {lines[0]}", file=sys.stderr, flush=True)
    sys.exit(status)
