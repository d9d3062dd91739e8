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

Only absl and the standard library are imported, so a command answers a bad flag, --help or a
missing file before TensorFlow loads (run_scripts/entry_point.py; the data makers of data_prep).
"""

from __future__ import annotations

import sys
from typing import Callable, NoReturn

from absl import flags

from official import console


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
    """absl's flag parsing for `app.run`, its errors ending in the entry point's one line."""

    def parse(argv: list[str]) -> list[str]:
        try:
            return flags.FLAGS(argv)
        except flags.Error as e:
            fail(script, " ".join(str(e).split()))

    return parse
