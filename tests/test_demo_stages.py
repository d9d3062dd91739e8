"""Tests for demo/stages.py: the demo's stages read as blocks on stdout in the stages' order,
each its title, its command, its output (stdout and stderr) and its time, or "reused"; one
stage at a time, the output appears as it comes; side by side (--jobs), a later stage's output
waits for the blocks before it. (The runner under it: test_stages.py.)"""

import os

import pytest

from demo.stages import REUSED, Blocks
from run_scripts.stages import Runner, Stage, StageFailed
from tests.cli import PATIENCE


def meeting(path, other, text, linger=0.0):
    """A stage command that says it started, waits (up to cli.PATIENCE) until `other` has
    started too, lingers `linger` seconds, then prints `text` (and on stderr) and writes it to
    `path`: it ends only if the two run side by side."""
    code = (f"import os, sys, time; open({path!r} + '.started', 'w').close(); "
            f"deadline = time.time() + {PATIENCE}\n"
            f"while not os.path.exists({other!r} + '.started') and time.time() < deadline: "
            f"time.sleep(0.01)\n"
            f"if not os.path.exists({other!r} + '.started'): sys.exit(9)\n"
            f"time.sleep({linger}); print({text!r}, flush=True); print({text!r} + ' on stderr',"
            f" file=sys.stderr); open({path!r}, 'w').write({text!r})")
    return ["-c", code]


def writer(path, text):
    return ["-c", f"print('writing'); open({path!r}, 'w').write({text!r})"]


def run(tmp_path, stages, jobs):
    return Runner(str(tmp_path / "stages"), str(tmp_path / "logs"), view=Blocks(),
                  jobs=jobs).run(stages)


def in_order(out, texts):
    """Whether each of `texts` appears in `out` after the one before it."""
    at = -1
    for text in texts:
        at = out.find(text, at + 1)
        if at < 0:
            return False
    return True


def test_side_by_side_stages_read_as_if_run_one_at_a_time(tmp_path, capsys):
    first, second, third = (str(tmp_path / name) for name in ("first", "second", "third"))
    # The second ends first (the first lingers), yet its block shows after the first's.
    stages = [Stage("first", "the first", meeting(first, second, "first says", linger=0.5),
                    outputs=[first]),
              Stage("second", "the second", meeting(second, first, "second says"),
                    outputs=[second]),
              Stage("third", "the third", writer(third, "x"), outputs=[third],
                    after=["first", "second"])]
    runs = run(tmp_path, stages, jobs=2)
    assert [r.reused for r in runs] == [False, False, False]
    out = capsys.readouterr().out
    assert in_order(out, ["\n== [1/3] the first\n", "   $ python -c", "first says\n",
                          "first says on stderr\n", "   finished in",
                          "\n== [2/3] the second\n", "   $ python -c", "second says\n",
                          "second says on stderr\n", "   finished in",
                          "\n== [3/3] the third\n", "writing\n", "   finished in"]), out

    assert [r.reused for r in run(tmp_path, stages, jobs=2)] == [True, True, True]
    out = capsys.readouterr().out
    assert in_order(out, ["== [1/3] the first\n" + REUSED, "== [2/3] the second\n" + REUSED,
                          "== [3/3] the third\n" + REUSED]), out


def test_one_at_a_time_a_stages_output_shows_while_it_runs(tmp_path, capsys):
    """The stage's command goes on only once its first line is on stdout."""
    made, seen = str(tmp_path / "made"), str(tmp_path / "seen")
    code = (f"import os, time; print('first line', flush=True)\n"
            f"deadline = time.time() + {PATIENCE}\n"
            f"while not os.path.exists({seen!r}) and time.time() < deadline: time.sleep(0.01)\n"
            f"open({made!r}, 'w').write(str(os.path.exists({seen!r})))")

    class Watching(Blocks):
        def line(self, place, text):
            super().line(place, text)
            if "first line\n" in capsys.readouterr().out:
                open(seen, "w").close()

    Runner(str(tmp_path / "stages"), str(tmp_path / "logs"), view=Watching()).run(
        [Stage("slow", "slow", ["-c", code], outputs=[made])])
    assert open(made).read() == "True"


def test_a_failed_run_shows_every_block_that_ran(tmp_path, capsys):
    fine = str(tmp_path / "fine")
    stages = [Stage("broken", "broken", ["-c", "import sys; print('bad'); sys.exit(3)"],
                    outputs=[str(tmp_path / "broken")]),
              Stage("fine", "fine", ["-c", "import time; time.sleep(0.5); "
                                           f"open({fine!r}, 'w').write('x')"], outputs=[fine])]
    with pytest.raises(StageFailed, match="broken: exit status 3"):
        run(tmp_path, stages, jobs=2)
    out = capsys.readouterr().out
    assert in_order(out, ["== [1/2] broken\n", "bad\n", "== [2/2] fine\n", "   finished in"])
    assert "finished" not in out.split("== [2/2]")[0]
    assert os.path.exists(fine)
