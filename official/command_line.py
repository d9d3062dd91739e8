"""How every command line begins and ends: the flags parsed, absl's refusals as the entry point's
one line, and that one line.

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
loop and the ablation runner install their own handlers for their run (a checkpoint saved, the
stages stopped) and restore this one after.

Only absl and the standard library are imported, so a command answers a bad flag, --help or a
missing file before TensorFlow loads (run_scripts/entry_point.py; the data makers of data_prep).
"""

from __future__ import annotations

import signal
import sys
from typing import Callable, NoReturn

from absl import flags

from official import console, parent_death


class Terminated(KeyboardInterrupt):
    """SIGTERM arrived (see the module docstring): handled wherever ctrl-C is."""


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
