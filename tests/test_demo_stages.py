"""Tests for demo/stages.py: a stage runs once, reruns when its command, an input file or an
earlier stage changes, and a failed stage leaves neither outputs nor a stamp behind; stages side
by side (jobs) run together, read as if run in order, and stop starting at a failure."""

import os
import sys
import time

import pytest

from demo.stages import Pipeline, StageFailed
from official.stages import Stage, format_seconds


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


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_stage_after_an_unknown_one_is_refused(tmp_path, jobs):
    with pytest.raises(ValueError, match=r"comes after \['vocab'\]"):
        Pipeline(str(tmp_path), python=sys.executable).run(
            [Stage("records", "records", ["-c", "pass"], outputs=[], after=["vocab"])],
            jobs=jobs)
    with pytest.raises(ValueError, match="jobs must be at least 1, got 0"):
        Pipeline(str(tmp_path)).run([], jobs=0)


def meeting(path, other, text, linger=0.0):
    """A stage command that says it started, waits (up to 60 s) until `other` has started too,
    lingers `linger` seconds, then prints `text` and writes it to `path`: it ends only if the
    two run side by side."""
    code = (f"import os, sys, time; open({path!r} + '.started', 'w').close(); "
            f"deadline = time.time() + 60\n"
            f"while not os.path.exists({other!r} + '.started') and time.time() < deadline: "
            f"time.sleep(0.01)\n"
            f"if not os.path.exists({other!r} + '.started'): sys.exit(9)\n"
            f"time.sleep({linger}); print({text!r}); print({text!r} + ' on stderr', "
            f"file=sys.stderr); open({path!r}, 'w').write({text!r})")
    return ["-c", code]


def test_stages_side_by_side_run_together_and_read_as_if_one_at_a_time(tmp_path, capsys):
    first, second, third = (str(tmp_path / name) for name in ("first", "second", "third"))
    # The second ends first (the first lingers), yet its block shows after the first's.
    stages = [Stage("first", "the first", meeting(first, second, "first says", linger=0.5),
                    outputs=[first]),
              Stage("second", "the second", meeting(second, first, "second says"),
                    outputs=[second]),
              Stage("third", "the third", writer(third, "x"), outputs=[third],
                    after=["first", "second"])]
    runs = Pipeline(str(tmp_path / "stages")).run(stages, jobs=2)
    assert [r.reused for r in runs] == [False, False, False]
    assert all(r.seconds > 0 for r in runs) and runs[0].seconds > runs[1].seconds
    out, err = capsys.readouterr()
    order = ["== [1/3] the first", "   $ python -c", "first says\n", "   finished in",
             "== [2/3] the second", "second says\n", "== [3/3] the third", "   finished in"]
    at = [out.index(order[0])]
    for text in order[1:]:
        at.append(out.index(text, at[-1] + 1))
    assert err.index("first says on stderr") < err.index("second says on stderr")
    assert times_run(third) == 1

    again = Pipeline(str(tmp_path / "stages")).run(stages, jobs=2)
    assert [r.reused for r in again] == [True, True, True]
    assert [r.seconds for r in again] == [r.seconds for r in runs]
    assert capsys.readouterr().out.count("reused") == 3


def test_side_by_side_a_failure_starts_nothing_more_and_keeps_what_finished(tmp_path):
    broken, slow, later = (tmp_path / name for name in ("broken", "slow", "later"))
    fail = ["-c", f"import os, sys; os.makedirs({str(broken)!r}); "
                  f"open(os.path.join({str(broken)!r}, 'half'), 'w').write('x'); sys.exit(3)"]
    wait_then_write = ["-c", "import time; time.sleep(0.5); " + writer(str(slow), "x")[1]]
    stages = [Stage("broken", "broken", fail, outputs=[str(broken)]),
              Stage("slow", "slow", wait_then_write, outputs=[str(slow)]),
              Stage("later", "later", writer(str(later), "x"), outputs=[str(later)],
                    after=["broken"])]
    started = time.perf_counter()
    with pytest.raises(StageFailed, match="stage 'broken' failed with exit status 3"):
        Pipeline(str(tmp_path / "stages")).run(stages, jobs=2)
    assert time.perf_counter() - started >= 0.5  # the slow stage was waited for
    assert not broken.exists() and not (tmp_path / "stages" / "broken.json").exists()
    assert times_run(str(slow)) == 1 and (tmp_path / "stages" / "slow.json").exists()
    assert times_run(str(later)) == 0

    stages[0] = Stage("broken", "broken", writer(str(broken), "fixed"), outputs=[str(broken)])
    runs = Pipeline(str(tmp_path / "stages")).run(stages, jobs=2)
    assert [r.reused for r in runs] == [False, True, False]
    assert times_run(str(slow)) == 1 and times_run(str(later)) == 1


def test_format_seconds():
    assert [format_seconds(s) for s in (0.4, 59.4, 61, 605)] == [
        "0 s", "59 s", "1 min 01 s", "10 min 05 s"]
