"""Tests for demo/stages.py: a stage runs once, reruns when its command, an input file or an
earlier stage changes, and a failed stage leaves neither outputs nor a stamp behind."""

import os
import sys

import pytest

from demo.stages import Pipeline, Stage, StageFailed, format_seconds


def writer(path, text):
    """A stage command that writes `text` to `path` and appends a line to path + '.log', so a
    test can count how often it really ran."""
    code = (f"import sys; open({path!r}, 'w').write({text!r}); "
            f"open({path!r} + '.log', 'a').write('ran\\n')")
    return ["-c", code]


def times_run(path):
    return len(open(path + ".log").read().splitlines()) if os.path.exists(path + ".log") else 0


def test_a_stage_is_reused_until_its_command_or_inputs_change(tmp_path, capsys):
    source, made = tmp_path / "source.txt", str(tmp_path / "made.txt")
    source.write_text("v1")

    def run(text="a"):
        stage = Stage("make", "make a file", writer(made, text), outputs=[made],
                      inputs=[str(source)])
        return Pipeline(str(tmp_path / "stages")).run([stage])[0]

    assert not run().reused and times_run(made) == 1
    assert run().reused and times_run(made) == 1
    assert "reused" in capsys.readouterr().out
    assert not run(text="b").reused and open(made).read() == "b"
    source.write_text("v2")
    assert not run(text="b").reused and times_run(made) == 3
    os.unlink(made)  # an output gone: the stage is not done
    assert not run(text="b").reused and times_run(made) == 4


def test_a_rerun_earlier_stage_reruns_the_later_ones(tmp_path):
    first, second = str(tmp_path / "first"), str(tmp_path / "second")

    def run(first_text):
        stages = [Stage("first", "first", writer(first, first_text), outputs=[first]),
                  Stage("second", "second", writer(second, "x"), outputs=[second],
                        after=["first"])]
        return [r.reused for r in Pipeline(str(tmp_path / "stages")).run(stages)]

    assert run("a") == [False, False]
    assert run("a") == [True, True]
    assert run("b") == [False, False]
    assert times_run(second) == 2


def test_a_failed_stage_leaves_nothing_behind(tmp_path):
    made = tmp_path / "made"
    command = ["-c", f"import os, sys; os.makedirs({str(made)!r}); "
                     f"open(os.path.join({str(made)!r}, 'half'), 'w').write('x'); sys.exit(3)"]
    pipeline = Pipeline(str(tmp_path / "stages"))
    with pytest.raises(StageFailed, match="stage 'broken' failed with exit status 3") as error:
        pipeline.run([Stage("broken", "broken", command, outputs=[str(made)])])
    assert error.value.returncode == 3
    assert not made.exists() and not (tmp_path / "stages" / "broken.json").exists()


def test_a_stage_must_make_its_outputs(tmp_path):
    promised = str(tmp_path / "promised")
    with pytest.raises(RuntimeError, match="exited 0 but did not make .*promised"):
        Pipeline(str(tmp_path / "stages")).run(
            [Stage("lazy", "lazy", ["-c", "pass"], outputs=[promised])])


def test_a_stage_after_an_unknown_one_is_refused(tmp_path):
    with pytest.raises(ValueError, match=r"comes after \['vocab'\]"):
        Pipeline(str(tmp_path), python=sys.executable).run(
            [Stage("records", "records", ["-c", "pass"], outputs=[], after=["vocab"])])


def test_format_seconds():
    assert [format_seconds(s) for s in (0.4, 59.4, 61, 605)] == [
        "0 s", "59 s", "1 min 01 s", "10 min 05 s"]
