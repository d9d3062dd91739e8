"""How every entry point runs: its checks before TensorFlow loads, then its job, one way to end.

    if __name__ == "__main__":
        entry_point.main("run_classifier", prepare, job, required=["task_name", ...])

    prepare() -> plan   every check that needs no TensorFlow: flag values and combinations, the
                        settings objects (their `from_flags`), files and folders there and
                        readable or writable, the config and the vocab; it imports nothing
                        heavier than absl and numpy, so a mistake is answered in well under a
                        second (bench/startup.py measures it)
    job(plan)           imports what it needs (TensorFlow, loaded quietly first) and works

Every entry point ends the same way:
  - a flag absl refuses, or a required one missing: "<script>: <absl's message>", exit 1
    (official/command_line.py);
  - bad flags, files, data or checkpoints (a ValueError or OSError, which the library raises with
    one-line messages): "<script>: <message>" as the last line on stderr, exit 1, no traceback;
  - a full disk, however the writer said it: "<script>: <path>: no space left on device", with
    no half-made file left (official/atomic_files.py);
  - SIGTERM or ctrl-C during training: the loop saved a checkpoint; exit 143 or 130 (128 + the
    signal, what a supervisor or shell expects), and rerunning the command resumes;
  - ctrl-C or SIGTERM outside training: exit 130 or 143 with one line (whatever was being
    written is not left half-made: every writer of the project writes to a temporary name
    first; official/command_line.py raises SIGTERM as ctrl-C's twin).
Log lines are plain messages and TensorFlow's C++ start-up notes are held back
(official/console.py).
"""

import sys
from typing import Any, Callable, Sequence

from absl import app, flags, logging

from official import command_line, console
from official.atomic_files import disk_full
from official.training.stopping import Preempted


def main(script: str, prepare: Callable[[], Any], job: Callable[[Any], object],
         required: Sequence[str] = ()) -> None:
    """Parses the command line (`required` flags must be given), then runs `job(prepare())`
    as the module docstring says; does not return."""
    flags.mark_flags_as_required(list(required))
    app.run(lambda argv: _run(script, prepare, job),
            flags_parser=command_line.flags_parser(script))


def _run(script: str, prepare: Callable[[], Any], job: Callable[[Any], object]) -> None:
    console.use_plain_lines()
    try:
        plan = prepare()
        console.import_tensorflow_quietly(sys.argv)
        console.use_plain_lines()  # TensorFlow's logger, which its import set up
        job(plan)
    except Preempted as e:
        logging.warning("%s", e)
        console.quiet_after_error()
        sys.exit(128 + e.signum)
    except KeyboardInterrupt as e:
        command_line.stopped(script, e, "nothing half-written was left")
    except (ValueError, OSError) as e:
        command_line.fail(script, command_line.describe(e))
    except Exception as e:  # a writer TensorFlow runs (checkpoints, exports) on a full disk
        full = disk_full(e)
        if full is None:
            raise
        command_line.fail(script, command_line.describe(full))
