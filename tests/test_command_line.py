"""Tests for official/command_line.py's `main`, the one way every command ends: in this process
for each ending (bad input, an argument that is no flag, ctrl-C, SIGTERM, a preempted training
loop), then as a user meets it in the commands that once ended their own way (one process each,
none of which loads TensorFlow before it refuses)."""

import os
import signal
import time

import pytest

from official import command_line
from tests.cli import refused, run_module


class NoConsole:
    """console's set-up for a command's process (its logging handlers, TensorFlow's quiet
    import), left out in this one."""

    def __getattr__(self, name):
        return lambda *args: None


def ending(monkeypatch, capsys, job, prepare=lambda: None, arguments=(), left="kept"):
    """(exit status, last stderr line) of `main`'s run of `prepare` then `job`."""
    monkeypatch.setattr(command_line, "console", NoConsole())
    with pytest.raises(SystemExit) as exited:
        command_line._run("tool", prepare, job, list(arguments), True, left)
    return exited.value.code, capsys.readouterr().err.strip().splitlines()[-1]


def test_bad_input_is_one_line_and_status_1(monkeypatch, capsys):
    def prepare():
        raise ValueError("--input_file=x.txt: no such file\n(a second line nobody reads)")

    assert ending(monkeypatch, capsys, None, prepare) == (1, "tool: --input_file=x.txt: no "
                                                             "such file")
    missing = FileNotFoundError(2, "No such file or directory", "/data/x.txt")
    assert ending(monkeypatch, capsys, lambda _: (_ for _ in ()).throw(missing)) == (
        1, "tool: /data/x.txt: No such file or directory")


def test_an_argument_that_is_no_flag_is_refused_before_prepare(monkeypatch, capsys):
    def prepare():
        raise AssertionError("prepared")

    assert ending(monkeypatch, capsys, None, prepare, arguments=["extra"]) == (
        1, "tool: extra: unexpected argument")


@pytest.mark.parametrize("interrupt,status,name", [
    (KeyboardInterrupt, 130, "ctrl-C"), (command_line.Terminated, 143, "SIGTERM")])
def test_a_stop_says_what_it_left_with_128_plus_the_signal(monkeypatch, capsys, interrupt,
                                                           status, name):
    def job(_):
        raise interrupt()

    assert ending(monkeypatch, capsys, job, left=lambda: "out.txt not written") == (
        status, f"tool: stopped by {name}: out.txt not written")


def test_sigterm_once_the_flags_are_parsed_is_ctrl_cs_twin(monkeypatch):
    """flags_parser's handler, here with a real signal to this process."""
    previous = signal.getsignal(signal.SIGTERM)
    try:
        command_line.flags_parser("tool")(["tool"])
        with pytest.raises(command_line.Terminated):
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(60)  # the handler interrupts it
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_a_preempted_training_loop_ends_with_its_signals_status(monkeypatch, capsys):
    def job(_):
        raise command_line.Preempted(7, signal.SIGTERM)

    monkeypatch.setattr(command_line, "console", NoConsole())
    with pytest.raises(SystemExit) as exited:
        command_line._run("tool", lambda: None, job, [], True, "")
    assert exited.value.code == 143


@pytest.mark.parametrize("module,flags,expected", [
    ("data_prep.newsgroups", ["--input_dir=/nowhere", "--output_dir={tmp}/out"],
     "newsgroups: /nowhere"),
    ("data_prep.gutenberg_demo_data", ["--sentences_file=/nowhere.txt", "--books_dir=/nowhere",
                                       "--output_dir={tmp}/out"], "gutenberg_demo_data: "),
    ("data_prep.synonyms_sample", ["--synonyms_file=/nowhere.txt", "--texts_file=/nowhere.txt",
                                   "--output_file={tmp}/out"], "synonyms_sample: /nowhere.txt"),
    ("demo.sized_config", ["--template=/nowhere.json", "--vocab_file=/nowhere.txt",
                           "--output_file={tmp}/out"], "sized_config: /nowhere"),
    ("demo.run_demo", ["--output_dir={tmp}/out", "extra"], "run_demo: extra: unexpected "
                                                           "argument"),
    ("run_scripts.run_ablation_study", ["--study=objectives", "--output_dir={tmp}/out",
                                        "extra"], "run_ablation_study: extra: unexpected "
                                                  "argument"),
])
def test_commands_that_ended_their_own_way_end_as_every_command(tmp_path, module, flags,
                                                                 expected):
    result = run_module(module, *(flag.format(tmp=tmp_path) for flag in flags))
    refused(result, expected)
    assert not (tmp_path / "out").exists()
