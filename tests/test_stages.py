"""Tests for run_scripts/stages.py, the one stage runner, with stand-in commands a test can
count, stop and finish at will: a stage runs once and is reused until its command, an input file
or an earlier stage changes; a failed one leaves neither outputs nor stamp; --jobs runs
independent stages together with TensorFlow's threads shared; ctrl-C and SIGTERM reach the
running command, which is waited for and resumed next time; and the stamps the runner wrote
before it was shared by the demo and the ablation study (tests/data/stage_records) are still
read as done."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from run_scripts.stages import ProgressLines, Runner, Stage, StageFailed
from tests.cli import ENV, PATIENCE, REPO

RECORDS = os.path.join(REPO, "tests", "data", "stage_records")


def writer(path, text):
    """A stage command that writes `text` to `path` and appends a line to path + '.log', so a
    test can count how often it really ran."""
    return ["-c", f"open({path!r}, 'w').write({text!r}); open({path!r} + '.log', 'a')"
                  ".write('ran\\n')"]


def times_run(path):
    return len(open(path + ".log").read().splitlines()) if os.path.exists(path + ".log") else 0


def runner(root, lines=None, **kwargs):
    say = (lambda _: None) if lines is None else lines.append
    return Runner(str(root / "stages"), str(root / "logs"), view=ProgressLines(say=say),
                  **kwargs)


def test_a_stage_is_reused_until_its_command_an_input_or_an_earlier_stage_changes(tmp_path):
    source = tmp_path / "source.txt"
    source.write_text("v1")
    first, second = str(tmp_path / "first"), str(tmp_path / "second")

    def run(text):
        stages = [Stage("first", "first", writer(first, text), outputs=[first],
                        inputs=[str(source)]),
                  Stage("second", "second", writer(second, "x"), outputs=[second],
                        after=["first"])]
        return [run.reused for run in runner(tmp_path).run(stages)]

    assert run("a") == [False, False]
    assert run("a") == [True, True]
    assert run("b") == [False, False] and open(first).read() == "b"
    source.write_text("v2")
    assert run("b") == [False, False]
    assert run("b") == [True, True]
    os.unlink(second)  # an output gone: the stage is not done
    assert run("b") == [True, False]
    assert times_run(first) == 3 and times_run(second) == 4


def test_the_paths_of_stages_are_relative_to_the_commands_directory(tmp_path):
    (tmp_path / "in.txt").write_text("x")
    stage = Stage("copy", "copy", ["-c", "open('out.txt', 'w').write(open('in.txt').read())"],
                  outputs=["out.txt"], inputs=["in.txt"])
    assert [r.reused for r in runner(tmp_path, cwd=str(tmp_path)).run([stage])] == [False]
    assert [r.reused for r in runner(tmp_path, cwd=str(tmp_path)).run([stage])] == [True]


def test_a_failed_stage_leaves_neither_outputs_nor_stamp(tmp_path):
    made = tmp_path / "made"
    code = (f"import os, sys; os.makedirs({str(made)!r}); print('half of it'); "
            "print('ValueError: bad input', file=sys.stderr); sys.exit(3)")
    stage = Stage("broken", "the broken stage", ["-c", code], outputs=[str(made)])
    with pytest.raises(StageFailed) as failure:
        runner(tmp_path).run([stage])
    assert str(failure.value) == (f"the broken stage: exit status 3 (log: {tmp_path}/logs/"
                                  "broken.log); it said: ValueError: bad input")
    assert failure.value.returncode == 3
    assert not made.exists() and not (tmp_path / "stages" / "broken.json").exists()
    assert "half of it\n" in (tmp_path / "logs" / "broken.log").read_text()


def test_a_stage_must_make_its_outputs(tmp_path):
    promised = str(tmp_path / "promised")
    with pytest.raises(StageFailed, match=f"exit status 0 .*it made no {promised}"):
        runner(tmp_path).run([Stage("lazy", "lazy", ["-c", "pass"], outputs=[promised])])


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_stage_after_an_unknown_one_is_refused(tmp_path, jobs):
    with pytest.raises(ValueError, match=r"comes after \['vocab'\]"):
        runner(tmp_path, jobs=jobs).run(
            [Stage("records", "records", ["-c", "pass"], outputs=[], after=["vocab"])])
    with pytest.raises(ValueError, match="jobs must be at least 1, got 0"):
        runner(tmp_path, jobs=0)


def test_jobs_run_independent_stages_at_once_and_a_dependent_after_them(tmp_path):
    def timed(name, seconds):
        path = tmp_path / name
        return ["-c", f"import os, time; start = time.time(); time.sleep({seconds}); "
                      f"open({str(path)!r}, 'w').write(f'{{start}} {{time.time()}} "
                      "{os.environ[\"TF_NUM_INTRAOP_THREADS\"]}')"]

    stages = [Stage("a", "a", timed("a", 1.0), [str(tmp_path / "a")]),
              Stage("b", "b", timed("b", 1.0), [str(tmp_path / "b")]),
              Stage("c", "c", timed("c", 0.0), [str(tmp_path / "c")], after=["a", "b"])]
    runs = runner(tmp_path, jobs=2).run(stages)
    assert [run.stage.name for run in runs] == ["a", "b", "c"]
    (a0, a1, threads), (b0, b1, _), (c0, _, _) = (
        map(float, (tmp_path / n).read_text().split()) for n in "abc")
    assert a0 < b1 and b0 < a1  # a and b ran at the same time
    assert c0 >= max(a1, b1)  # c waited for both
    # TensorFlow's threads shared among the commands at once, not each taking every core.
    assert threads == max(1, len(os.sched_getaffinity(0)) // 2)


def test_after_a_failure_nothing_more_starts_and_what_finished_is_kept(tmp_path):
    broken, slow, later = (tmp_path / name for name in ("broken", "slow", "later"))
    tried = str(tmp_path / "tried")
    fail = ["-c", f"import os, sys; os.makedirs({str(broken)!r}); open({tried!r}, 'w'); "
                  "sys.exit(3)"]
    # The slow stage ends after the failure: it goes on once the failed stage has run.
    wait_then_write = ["-c", f"import os, time\nwhile not os.path.exists({tried!r}): "
                             "time.sleep(0.01)\ntime.sleep(0.5); " + writer(str(slow), "x")[1]]
    stages = [Stage("broken", "broken", fail, outputs=[str(broken)]),
              Stage("slow", "slow", wait_then_write, outputs=[str(slow)]),
              Stage("later", "later", writer(str(later), "x"), outputs=[str(later)],
                    after=["broken"])]
    with pytest.raises(StageFailed, match="broken: exit status 3"):
        runner(tmp_path, jobs=2).run(stages)
    assert not broken.exists() and not (tmp_path / "stages" / "broken.json").exists()
    assert times_run(str(slow)) == 1 and (tmp_path / "stages" / "slow.json").exists()
    assert times_run(str(later)) == 0

    stages[0] = Stage("broken", "broken", writer(str(broken), "fixed"), outputs=[str(broken)])
    assert [r.reused for r in runner(tmp_path, jobs=2).run(stages)] == [False, True, False]
    assert times_run(str(slow)) == 1 and times_run(str(later)) == 1


def test_keep_going_runs_every_stage_past_a_failure_and_returns_it(tmp_path):
    broken, first, last = (tmp_path / name for name in ("broken", "first", "last"))
    fail = ["-c", "import sys; print('loading'); print('broken: the bad thing', file=sys.stderr); "
                  "sys.exit(3)"]
    stages = [Stage("first", "first", writer(str(first), "x"), outputs=[str(first)]),
              Stage("broken", "broken", fail, outputs=[str(broken)]),
              Stage("last", "last", writer(str(last), "x"), outputs=[str(last)])]
    runs = runner(tmp_path, keep_going=True).run(stages)
    assert [run.stage.name for run in runs] == ["first", "broken", "last"]
    assert [run.failure is None for run in runs] == [True, False, True]
    failure = runs[1].failure
    assert (failure.returncode, failure.last_line) == (3, "broken: the bad thing")
    assert failure.log == str(tmp_path / "logs" / "broken.log")
    assert times_run(str(first)) == 1 and times_run(str(last)) == 1
    assert not (tmp_path / "stages" / "broken.json").exists()

    stages[1] = Stage("broken", "broken", writer(str(broken), "fixed"), outputs=[str(broken)])
    again = runner(tmp_path, keep_going=True).run(stages)
    assert [(run.reused, run.failure) for run in again] == [(True, None), (False, None),
                                                             (True, None)]


def test_keep_going_refuses_a_stage_after_another(tmp_path):
    stages = [Stage("a", "a", writer(str(tmp_path / "a"), "x"), outputs=[str(tmp_path / "a")]),
              Stage("b", "b", writer(str(tmp_path / "b"), "x"), outputs=[str(tmp_path / "b")],
                    after=["a"])]
    with pytest.raises(ValueError, match="^stage b comes after a: keep_going runs independent "
                                         "stages only$"):
        runner(tmp_path, keep_going=True).run(stages)
    assert times_run(str(tmp_path / "a")) == 0


# A stand-in for an entry point: appends "start" to <out>/trace, then "done" if <out>/../go
# exists, else waits; stopped by SIGTERM or ctrl-C it appends "stopped" and exits 128 + the
# signal, as the entry points do once their checkpoint is saved.
STAND_IN = """
import os, signal, sys, time
out = sys.argv[1]
os.makedirs(out, exist_ok=True)
trace = open(os.path.join(out, "trace"), "a")
def stop(signum, frame):
    trace.write("stopped\\n"); trace.close(); sys.exit(128 + signum)
signal.signal(signal.SIGTERM, stop)
signal.signal(signal.SIGINT, stop)
trace.write("start\\n"); trace.flush()
print("started", flush=True)
while not os.path.exists(os.path.join(out, "..", "go")):
    time.sleep(0.05)
trace.write("done\\n")
"""

# Runs one stage of the stand-in; exits as the runner's stop says (130 ctrl-C, 143 SIGTERM).
DRIVER = """
import signal, sys
from official.command_line import Terminated
from run_scripts.stages import ProgressLines, Runner, Stage
signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a terminal (not an `&` job's)
root = sys.argv[1]
stage = Stage("work", "the work", ["-c", {code!r}, root + "/made"], outputs=[root + "/made"])
try:
    Runner(root + "/stages", root + "/logs", view=ProgressLines(say=print)).run([stage])
except KeyboardInterrupt as stop:
    sys.exit(143 if isinstance(stop, Terminated) else 130)
"""


def drive(root):
    return subprocess.Popen([sys.executable, "-c", DRIVER.format(code=STAND_IN), str(root)],
                            cwd=REPO, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_stopped_stage_is_resumed_over_its_outputs_then_reused(tmp_path, signum):
    driver = drive(tmp_path)
    while not (tmp_path / "made" / "trace").exists():
        assert driver.poll() is None, driver.communicate()
        time.sleep(0.05)
    time.sleep(0.5)  # the command has run at least this long when stopped
    driver.send_signal(signum)
    stdout, stderr = driver.communicate(timeout=PATIENCE)
    # The command got the signal once, and the runner waited for it to end.
    assert driver.returncode == 128 + signum, stderr
    assert (tmp_path / "made" / "trace").read_text() == "start\nstopped\n"
    stopped = json.loads((tmp_path / "stages" / "work.json").read_text())
    assert stopped["state"] == "started" and stopped["seconds"] >= 0.5
    # As if the stopped runs had worked 1,000 seconds: the run that finishes adds its own.
    (tmp_path / "stages" / "work.json").write_text(json.dumps({**stopped, "seconds": 1000.0}))

    (tmp_path / "go").write_text("")
    started = time.perf_counter()
    stdout, stderr = drive(tmp_path).communicate(timeout=PATIENCE)
    resumed_for = time.perf_counter() - started
    assert "[1/1] the work: resuming (log: " in stdout, stderr
    # The stopped run's output was kept for the command to go on from.
    assert (tmp_path / "made" / "trace").read_text() == "start\nstopped\nstart\ndone\n"
    log = (tmp_path / "logs" / "work.log").read_text()
    assert log.splitlines().count("started") == 2 and "--- resumed ---" in log
    done = json.loads((tmp_path / "stages" / "work.json").read_text())
    assert done["state"] == "done" and 1000.0 < done["seconds"] < 1000.0 + resumed_for

    stdout, _ = drive(tmp_path).communicate(timeout=PATIENCE)
    assert stdout.strip() == "[1/1] the work: reused (done before with the same command and " \
                             "inputs)"


def recorded_stages():
    """The two stages whose stamps tests/data/stage_records holds, as written by the ablation
    study's runner before the demo's and the study's were one (commit 272faa1): the records of
    a corpus, then a pretraining after them."""
    records = Stage("data.nsp.seed1", "records", ["-c", "import os; os.makedirs('out/records', "
                    "exist_ok=True); open('out/records/shard', 'w').write('r')"],
                    outputs=["out/records"], inputs=["data/corpus.txt"])
    pretrain = Stage("bert.seed1.pretrain", "pretrain",
                     ["-c", "open('out/pretrained', 'w').write('p')"],
                     outputs=["out/pretrained"], inputs=["data/corpus.txt"],
                     after=["data.nsp.seed1"])
    return records, pretrain


def test_stamps_of_the_runner_before_are_reused_and_a_started_one_resumed(tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "corpus.txt").write_text("corpus text\n")
    (tmp_path / "out" / "records").mkdir(parents=True)
    (tmp_path / "out" / "pretrained").write_text("p")
    shutil.copytree(RECORDS, tmp_path / "stages")
    records, pretrain = recorded_stages()
    lines = []
    runs = runner(tmp_path, lines, cwd=str(tmp_path)).run([records, pretrain])
    assert [run.reused for run in runs] == [True, True], lines
    assert runs[1].seconds == json.loads((tmp_path / "stages" /
                                          "bert.seed1.pretrain.json").read_text())["seconds"]

    # A stage the old runner left "started" (stopped) is resumed over its outputs.
    stamp = tmp_path / "stages" / "bert.seed1.pretrain.json"
    stamp.write_text(stamp.read_text().replace('"state": "done"', '"state": "started"'))
    (tmp_path / "out" / "pretrained").write_text("half")
    lines.clear()
    runs = runner(tmp_path, lines, cwd=str(tmp_path)).run([records, pretrain])
    assert [run.reused for run in runs] == [True, False]
    assert lines[1].startswith("[2/2] pretrain: resuming (log: "), lines
    assert (tmp_path / "out" / "pretrained").read_text() == "p"
    with open(os.path.join(RECORDS, "bert.seed1.pretrain.json")) as f:
        assert json.loads(stamp.read_text())["key"] == json.load(f)["key"]


def test_stamps_of_the_demos_runner_before_are_reused(tmp_path):
    """The demo's runner wrote {"key", "command", "seconds"} once a stage was done: the same
    keys as the study's, no state."""
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "corpus.txt").write_text("corpus text\n")
    (tmp_path / "out" / "records").mkdir(parents=True)
    (tmp_path / "out" / "pretrained").write_text("p")
    (tmp_path / "stages").mkdir()
    for name in os.listdir(RECORDS):
        with open(os.path.join(RECORDS, name)) as f:
            stamp = json.load(f)
        del stamp["state"]
        (tmp_path / "stages" / name).write_text(json.dumps(stamp))
    runs = runner(tmp_path, cwd=str(tmp_path)).run(list(recorded_stages()))
    assert [run.reused for run in runs] == [True, True]


def test_a_changed_input_reruns_a_recorded_stage(tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "corpus.txt").write_text("other text\n")
    (tmp_path / "out" / "records").mkdir(parents=True)
    shutil.copytree(RECORDS, tmp_path / "stages")
    records, _ = recorded_stages()
    assert [run.reused for run in runner(tmp_path, cwd=str(tmp_path)).run([records])] == [False]
    assert (tmp_path / "out" / "records" / "shard").read_text() == "r"
