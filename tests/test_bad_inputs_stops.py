"""Runs stopped from outside, and two runs in one folder, with real processes.

- A runner killed outright (SIGKILL) takes its running stage with it: the stage, sent SIGTERM by
  the kernel when its parent died (official/parent_death.py), saves and exits; it is not left
  orphaned writing into its output_dir.
- While a run trains, a second run into the same output_dir is refused in one line naming the
  folder and the first process (official/output_lock.py), before it touches anything there.
- SIGTERM is ctrl-C's twin for every entry point, not only the training loop: one line, exit 143,
  nothing half-written (official/command_line.py).
"""

import json
import os
import signal
import subprocess
import sys
import time

import numpy as np

from official import output_lock
from tests.cli import ENV, PATIENCE, REPO, BackgroundRun, refused, run_module, snapshot
from tests.test_bad_inputs_pretraining import checkpoint_steps, pretrain_flags
from tests.test_score_minimal_pairs import command as scoring_command
from tests.test_score_minimal_pairs import write_model

# A runner of one stage, as run_ablation_study runs its stages: argv[1] is the stage's command.
RUNNER = """
import json, sys
from run_scripts.stages import Runner, Stage
command, out, root = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3]
Runner(root + "/stages", root + "/logs").run([Stage("pretrain", "pretrain", command, [out])])
"""


def _alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie, dead but not yet reaped by an orphan's new parent, does
    not)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in "ZX"
    except OSError:
        return False


def _wait_for(condition, what: str, process=None) -> None:
    """Until `condition()` holds; fails once `process` (if given) has ended without it."""
    deadline = time.monotonic() + PATIENCE
    while not condition():
        assert process is None or process.poll() is None, f"{what}: the process ended"
        assert time.monotonic() < deadline, what
        time.sleep(0.1)


def test_a_killed_runner_takes_its_stage_with_it_and_a_second_writer_is_refused(
        pretraining_records, tmp_path):
    out = tmp_path / "pretrained"
    flags = pretrain_flags(pretraining_records, out, "--do_train", "--num_train_steps=100000",
                           "--save_checkpoints_steps=100000", "--iterations_per_loop=1",
                           "--log_steps=1")
    runner = subprocess.Popen(
        [sys.executable, "-c", RUNNER, json.dumps(["-m", "run_scripts.run_pretraining", *flags]),
         str(out), str(tmp_path)], cwd=REPO, env=ENV, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        _wait_for(lambda: (out / "train").is_dir(), "the stage never started training", runner)
        stage = output_lock.holder(str(out))
        assert stage is not None and stage != runner.pid and _alive(stage)

        # The same run again, by hand, while the stage trains: refused, nothing touched.
        before = snapshot(out / "bert_config.json")
        second = run_module("run_scripts.run_pretraining", *flags)
        refused(second, f"run_pretraining: {out}: another run is writing here (pid {stage}: "
                        "python -m run_scripts.run_pretraining", "wait for it to end")
        assert snapshot(out / "bert_config.json") == before and _alive(stage)

        runner.kill()
        runner.wait(timeout=PATIENCE)
        # Dead, and every thread of it gone (a leader can be a zombie while a thread that is
        # still writing keeps the folder's lock).
        _wait_for(lambda: not _alive(stage) and output_lock.holder(str(out)) is None,
                  "the stage outlived its killed runner")
    finally:
        if runner.poll() is None:
            os.killpg(runner.pid, signal.SIGKILL)
    # It stopped as SIGTERM stops a training run (its output, a pipe to the dead runner, is
    # lost): its state saved at the step it reached.
    steps = checkpoint_steps(out)
    assert len(steps) == 1 and steps[0] >= 1, steps


def test_sigterm_ends_an_entry_point_as_ctrl_c_does(tmp_path):
    """score_minimal_pairs (no training loop of its own) stopped while it scores (one sentence
    a batch, so that it is still scoring)."""
    checkpoint = write_model(tmp_path / "model", np.zeros(30522))
    out = tmp_path / "scores"
    command = scoring_command(checkpoint, out, "--batch_size=1")
    run = BackgroundRun(command[0], tmp_path, *command[1:])
    try:
        run.wait_until(lambda: "Scoring" in run.stderr())
        os.kill(run.pid, signal.SIGTERM)
        result = run.finish()
    finally:
        BackgroundRun.stop_all()
    refused(result, "score_minimal_pairs: stopped by SIGTERM: nothing half-written was left",
            code=128 + signal.SIGTERM)
    assert "KeyboardInterrupt" not in result.stderr
    assert snapshot(out) == {}
