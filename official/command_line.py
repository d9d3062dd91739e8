"""How every command ends, one way: run_scripts', data_prep's and the demo's.

    if __name__ == "__main__":
        command_line.main("run_classifier", prepare, job, required=["task_name", ...])

    prepare() -> plan   every check that needs no TensorFlow: flag values and combinations, the
                        settings objects (their `from_flags`), files and folders there and
                        readable or writable, the config and the vocab; it imports nothing
                        heavier than absl and numpy, so a mistake is answered in well under a
                        second (bench/startup.py measures it)
    job(plan)           imports what it needs (TensorFlow, loaded quietly first unless
                        `tensorflow=False`: a command whose job never loads it, or loads it in
                        its workers only) and works

Every command ends the same way:
  - a flag absl refuses, or a required one missing: "<script>: <absl's message>", exit 1
    (`flags_parser`); an argument that is not a flag: "<script>: <it>: unexpected argument";
  - bad flags, files, data or checkpoints (a ValueError or OSError, which the library raises with
    one-line messages): "<script>: <message>" as the last line on stderr, exit 1, no traceback;
  - a full disk, however the writer said it: "<script>: <path>: no space left on device", with
    no half-made file left (official/atomic_files.py);
  - a job that stopped itself on SIGTERM or ctrl-C after saving its state (`Preempted`: a
    training loop's checkpoint): its message as a warning, exit 143 or 130 (128 + the signal,
    what a supervisor or shell expects), and rerunning the command resumes;
  - ctrl-C or SIGTERM anywhere else: exit 130 or 143 with one line, "stopped by ctrl-C: <what
    the stop left>" (whatever was being written is not left half-made: every writer of the
    project writes to a temporary name first).
Log lines are plain messages and TensorFlow's C++ start-up notes are held back
(official/console.py).

The pieces, for a job that ends itself:
    flags_parser(script)            for `app.run(main, flags_parser=...)`: what absl refuses (an
                                    unknown flag, a value of the wrong type, one outside an enum,
                                    a required flag missing) ends the run with
                                    "<script>: <absl's message>" as the last line on stderr and
                                    exit status 1, as every other bad input does (absl's own
                                    ending is "Pass --helpshort or --helpfull ...")
    fail(script, message, status)   that one line (the message's first), and nothing after it
    describe(error)                 an error's one line: "<file>: <what>" for an OSError that
                                    names a file (a full disk: official/atomic_files.py)
    stopped(script, interrupt, what)
                                    the ending of a run stopped by ctrl-C or SIGTERM: "stopped
                                    by ctrl-C: <what>" (or SIGTERM), exit 130 or 143

SIGTERM is ctrl-C's twin: once the flags are parsed it raises `Terminated`, a KeyboardInterrupt,
in the main thread wherever that is, so every clean-up written for ctrl-C (a temporary file
removed, progress kept, the `except KeyboardInterrupt` that ends the run in one line) serves a
supervisor's stop too, and the exit status says which arrived (128 + the signal). A training
loop and the stage runner install their own handlers for their run (a checkpoint saved, the
stages stopped) and restore this one after.

Only absl and the standard library are imported, so a command answers a bad flag, --help or a
missing file before TensorFlow loads.
"""

from __future__ import annotations

import signal
import sys
from typing import Any, Callable, NoReturn, Sequence

from absl import app, flags, logging

from official import console, parent_death
from official.atomic_files import disk_full


class Terminated(KeyboardInterrupt):
    """SIGTERM arrived (see the module docstring): handled wherever ctrl-C is."""


class Preempted(Exception):
    """SIGTERM or SIGINT arrived; a training loop saved the state at `step` and stopped
    (official/training/trainer.py raises it; here so that a command ends with it before
    TensorFlow loads)."""

    def __init__(self, step: int, signum: int):
        name = signal.Signals(signum).name
        super().__init__(f"stopped by {name} at step {step}; the checkpoint is saved, and "
                         f"rerunning the same command resumes from it")
        self.step = step
        self.signum = signum


def raise_terminated(signum: int, frame: object) -> None:
    """SIGTERM's handler once the flags are parsed (a stage runner's while it runs)."""
    raise Terminated()


def stopped(script: str, interrupt: KeyboardInterrupt, what: str) -> NoReturn:
    """Ends a run that ctrl-C or SIGTERM stopped: "<script>: stopped by <signal>: <what>", exit
    130 (ctrl-C) or 143 (SIGTERM)."""
    name, signum = (("SIGTERM", signal.SIGTERM) if isinstance(interrupt, Terminated)
                    else ("ctrl-C", signal.SIGINT))
    fail(script, f"stopped by {name}: {what}", 128 + signum)


def fail(script: str, message: str, status: int = 1) -> NoReturn:
    """Ends the process: "<script>: <message's first line>" as the last stderr line."""
    lines = message.strip().splitlines() or ["failed"]
    console.quiet_after_error()
    print(f"{script}: {lines[0]}", file=sys.stderr, flush=True)
    sys.exit(status)


def describe(error: BaseException) -> str:
    """The one line of `error`: "<file>: <what>" for an OSError naming its file (Python's own
    "[Errno 28] No space left on device: 'x'" reads backwards), else its message."""
    if isinstance(error, OSError) and error.filename and error.strerror:
        return f"{error.filename}: {error.strerror}"
    return str(error)


def flags_parser(script: str) -> Callable[[list[str]], list[str]]:
    """absl's flag parsing for `app.run`, its errors ending in the entry point's one line; once
    parsed, SIGTERM raises `Terminated` (see the module docstring), and a command an
    orchestrator started ends with it (official/parent_death.py)."""

    def parse(argv: list[str]) -> list[str]:
        try:
            parsed = flags.FLAGS(argv)
        except flags.Error as e:
            fail(script, " ".join(str(e).split()))
        signal.signal(signal.SIGTERM, raise_terminated)
        parent_death.stop_with_parent()
        return parsed

    return parse


def main(script: str, prepare: Callable[[], Any], job: Callable[[Any], object],
         required: Sequence[str] = (), tensorflow: bool = True,
         left: str | Callable[[], str] = "nothing half-written was left") -> NoReturn:
    """Parses the command line (`required` flags must be given), then runs `job(prepare())`
    as the module docstring says; `left` (or what it returns, once the flags are parsed) is
    what a stop by ctrl-C or SIGTERM leaves. Does not return."""
    flags.mark_flags_as_required(list(required))
    app.run(lambda argv: _run(script, prepare, job, argv[1:], tensorflow, left),
            flags_parser=flags_parser(script))


def _run(script: str, prepare: Callable[[], Any], job: Callable[[Any], object],
         arguments: list[str], tensorflow: bool, left: str | Callable[[], str]) -> None:
    console.use_plain_lines()
    try:
        if arguments:
            raise ValueError(f"{arguments[0]}: unexpected argument")
        plan = prepare()
        if tensorflow:
            console.import_tensorflow_quietly(sys.argv)
            console.use_plain_lines()  # TensorFlow's logger, which its import set up
        job(plan)
    except Preempted as e:
        logging.warning("%s", e)
        console.quiet_after_error()
        sys.exit(128 + e.signum)
    except KeyboardInterrupt as e:
        stopped(script, e, left if isinstance(left, str) else left())
    except (ValueError, OSError) as e:
        fail(script, describe(e))
    except Exception as e:  # a writer TensorFlow runs (checkpoints, exports) on a full disk
        full = disk_full(e)
        if full is None:
            raise
        fail(script, describe(full))
