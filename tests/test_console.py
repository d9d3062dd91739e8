"""official/console.py: plain lines, the progress line on a terminal, the import's held-back
notes (the last through a subprocess, as an entry point imports TensorFlow)."""

import io
import logging
import os
import subprocess
import sys

from official import console
from tests.cli import REPO


class Terminal(io.StringIO):
    def isatty(self):
        return True


def record(message, level=logging.INFO, progress=False):
    made = logging.LogRecord("absl", level, __file__, 1, message, None, None)
    if progress:
        made.progress = True
    return made


def test_plain_lines_and_levels():
    stream = io.StringIO()
    handler = console.ProgressHandler(stream)
    for made in (record("step 1/2", progress=True), record("step 2/2", progress=True),
                 record("careful", logging.WARNING), record("broken", logging.ERROR)):
        handler.emit(made)
    # Not a terminal: every record is a line of its own, progress included.
    assert stream.getvalue() == "step 1/2\nstep 2/2\nWARNING: careful\nERROR: broken\n"


def test_progress_rewrites_one_line_on_a_terminal():
    stream = Terminal()
    handler = console.ProgressHandler(stream)
    for made in (record("step 1/3", progress=True), record("step 2/3", progress=True),
                 record("eval at step 2: accuracy 0.5"), record("step 3/3", progress=True)):
        handler.emit(made)
    assert stream.getvalue() == ("step 1/3" "\r\x1b[K" "step 2/3" "\n"
                                 "eval at step 2: accuracy 0.5\n" "step 3/3")


def test_verbosity_is_read_before_flags_are_parsed():
    assert console._verbosity(["prog", "--verbosity=1"]) == 1
    assert console._verbosity(["prog", "-v", "2"]) == 2
    assert console._verbosity(["prog", "--verbosity", "x"]) == 0
    assert console._verbosity(["prog", "--other"]) == 0


def test_tensorflow_notes_show_when_asked_for():
    """--verbosity=1: TensorFlow's C++ start-up notes as it prints them. (Held back otherwise:
    what an entry point prints is checked in tests/test_bad_inputs_pretraining.py.)"""
    code = ("import sys; from official import console; "
            "console.import_tensorflow_quietly(sys.argv); print('imported', file=sys.stderr)")
    env = {k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}
    shown = subprocess.run([sys.executable, "-c", code, "--verbosity=1"], cwd=REPO,
                           capture_output=True, text=True, env=env).stderr
    assert shown.endswith("imported\n") and len(shown.splitlines()) > 1


def test_tensorflows_own_info_records_are_held_back():
    """TensorFlow's checkpoint saver logs "Sharding callback duration" through absl's logger
    at INFO: held back; its warnings, and every record of other code, still show."""
    tensorflow_dir = console._package_dir("tensorflow")
    saver = os.path.join(tensorflow_dir, "python", "checkpoint", "functional_saver.py")
    handler = console.ProgressHandler(io.StringIO())
    handler.addFilter(console._TensorFlowInfoFilter(tensorflow_dir))
    stream = handler.stream
    for made in (record("eval at step 2"), record("step 2/3", progress=True)):
        handler.handle(made)
    inside = logging.LogRecord("absl", logging.INFO, saver, 440,
                               "Sharding callback duration: 73 microseconds", None, None)
    handler.handle(inside)
    handler.handle(logging.LogRecord("absl", logging.WARNING, saver, 1, "careful", None, None))
    assert stream.getvalue() == "eval at step 2\nstep 2/3\nWARNING: careful\n"


def test_format_seconds():
    assert [console.format_seconds(s) for s in (0.4, 59.4, 61, 605, 7380)] == [
        "0 s", "59 s", "1 min 01 s", "10 min 05 s", "2 h 03 min"]
