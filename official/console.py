"""What a user reads on stderr: plain lines, one progress line, TensorFlow's C++ notes off.

    import_tensorflow_quietly(argv)   before anything imports TensorFlow: its C++ start-up notes
                                      ("oneDNN custom operations are on", "Could not find cuda
                                      drivers", ...) are held back unless --verbosity=1 asks
    use_plain_lines()                 log records as bare messages ("WARNING: ..." for warnings),
                                      without absl's "I1201 19:08:44.885175 140608 trainer.py:337]"
    PROGRESS                          `logging.info(..., extra=PROGRESS)`: on a terminal the line
                                      rewrites itself in place; in a log file or CI, plain lines
    quiet_after_error()               nothing more after the entry point's one-line error
    format_seconds(seconds)           a duration as a reader says it: "42 s", "3 min 05 s"

Only the standard library is imported here, so a data generator's coordinating process, which
never loads TensorFlow, can use it too. Neither flags nor options are parsed: the one argument
read before absl parses the command line is --verbosity, since TensorFlow loads before that.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import sys
import tempfile

# `extra=` of a logging call whose line is progress (it replaces the previous one on a terminal).
PROGRESS = {"progress": True}

# TensorFlow's C++ log level once loaded: 3 keeps back its INFO, WARNING and ERROR notes
# ("failed call to cuInit" on a machine without a GPU is an ERROR); real failures still reach
# Python as exceptions with the same text.
_QUIET_CPP_LEVEL = "3"


def _verbosity(argv: list[str]) -> int:
    """absl's --verbosity (or -v) as the command line gives it, before flags are parsed; 0 if
    absent or unreadable (absl reports a bad value itself once it parses)."""
    for i, arg in enumerate(argv):
        for name in ("--verbosity", "-v"):
            value = None
            if arg.startswith(name + "="):
                value = arg[len(name) + 1:]
            elif arg == name and i + 1 < len(argv):
                value = argv[i + 1]
            if value is not None:
                try:
                    return int(value)
                except ValueError:
                    return 0
    return 0


def import_tensorflow_quietly(argv: list[str]) -> None:
    """Imports TensorFlow with its C++ start-up notes held back, unless the user asked for them.

    TensorFlow writes those notes through absl's C++ logging before that logging is initialised,
    which ignores TF_CPP_MIN_LOG_LEVEL; so stderr's file descriptor is pointed at a temporary
    file while `import tensorflow` runs. If the import fails, what was held back is written out,
    since it may explain why. `--verbosity=1` or TF_CPP_MIN_LOG_LEVEL=0 shows everything as
    TensorFlow prints it; otherwise TF_CPP_MIN_LOG_LEVEL defaults to 3 for what follows.
    """
    if "tensorflow" in sys.modules:
        return
    if _verbosity(argv) >= 1 or os.environ.get("TF_CPP_MIN_LOG_LEVEL") == "0":
        os.environ["TF_CPP_MIN_LOG_LEVEL"] = "0"
        import tensorflow  # noqa: F401
        return
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", _QUIET_CPP_LEVEL)
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as held_back:
        os.dup2(held_back.fileno(), 2)
        try:
            import tensorflow  # noqa: F401
        except BaseException:
            os.dup2(saved, 2)
            held_back.seek(0)
            sys.stderr.write(held_back.read().decode("utf-8", "replace"))
            raise
        finally:
            os.dup2(saved, 2)
            os.close(saved)


class _PlainFormatter(logging.Formatter):
    """The message alone for INFO; "WARNING: ", "ERROR: " or "DEBUG: " before the others."""

    def format(self, record: logging.LogRecord) -> str:
        message = record.getMessage()
        if record.exc_info:
            message += "\n" + self.formatException(record.exc_info)
        if record.levelno == logging.INFO:
            return message
        return f"{logging.getLevelName(record.levelno)}: {message}"


class ProgressHandler(logging.StreamHandler):
    """Writes records as plain lines; a PROGRESS record on a terminal overwrites the previous
    PROGRESS line instead of adding one (any other record first ends that line)."""

    def __init__(self, stream=None):
        super().__init__(stream if stream is not None else sys.stderr)
        self.setFormatter(_PlainFormatter())
        self._line_open = False

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = self.format(record)
            in_place = getattr(record, "progress", False) and self.stream.isatty()
            if self._line_open:
                self.stream.write("\r\x1b[K" if in_place else "\n")
            self.stream.write(text if in_place else text + "\n")
            self._line_open = in_place
            self.flush()
        except Exception:  # logging's own contract: a broken stream must not end the program
            self.handleError(record)


def _package_dir(name: str) -> str | None:
    """Where package `name` is installed (found, not imported), with a trailing separator."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return os.path.join(list(spec.submodule_search_locations)[0], "")


class _TensorFlowInfoFilter(logging.Filter):
    """Drops the INFO records of TensorFlow's own Python code that go through absl's logger
    rather than TensorFlow's ("Sharding callback duration: 73 microseconds", from its
    checkpoint saver): notes for its developers, shown with --verbosity=1 like the others."""

    def __init__(self, tensorflow_dir: str):
        super().__init__()
        self._tensorflow_dir = tensorflow_dir

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno >= logging.WARNING or \
            not record.pathname.startswith(self._tensorflow_dir)


def use_plain_lines() -> None:
    """Sends every Python log record (absl's and TensorFlow's) through one ProgressHandler.

    Call once flags are parsed (absl installs its handler then). TensorFlow's logger has a
    handler of its own besides propagating to the root's, so each of its warnings used to appear
    twice, once in each format; here it only propagates, from WARNING up.
    """
    root = logging.getLogger()
    for handler in list(root.handlers):
        root.removeHandler(handler)
    root.addHandler(ProgressHandler())
    tensorflow_logger = logging.getLogger("tensorflow")
    for handler in list(tensorflow_logger.handlers):
        tensorflow_logger.removeHandler(handler)
    tensorflow_logger.propagate = True
    # TensorFlow's own INFO lines ("Sharding callback duration: 73 microseconds") are for its
    # developers; they show with absl's --verbosity=1 (the absl logger's level is DEBUG then).
    debugging = logging.getLogger("absl").getEffectiveLevel() <= logging.DEBUG
    tensorflow_logger.setLevel(logging.DEBUG if debugging else logging.WARNING)
    tensorflow_dir = _package_dir("tensorflow")
    if not debugging and tensorflow_dir is not None:
        root.handlers[0].addFilter(_TensorFlowInfoFilter(tensorflow_dir))


def quiet_after_error() -> None:
    """After the one-line error: no more log records (TensorFlow warns while tearing down objects
    that a failed run left, e.g. "Value in checkpoint could not be found"), so that the error
    stays the last line on stderr."""
    logging.disable(logging.CRITICAL)


def format_seconds(seconds: float) -> str:
    """"42 s", "3 min 05 s" or "2 h 03 min"."""
    if seconds < 60:
        return f"{seconds:.0f} s"
    minutes, rest = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {rest:02d} s"
    return f"{minutes // 60} h {minutes % 60:02d} min"
