"""run_pretraining on two hosts, as run_scripts/recipes/pretrain_multi_host.sh runs it: here two
worker processes on two ports of localhost (MultiWorkerMirroredStrategy, TF_CONFIG), at a tiny
size, on the records conftest.pretraining_records makes.

One run, stopped and resumed, is the subject of every test (a module fixture): two workers
started by the recipe, SIGTERM to the second worker once it has trained a step; then the recipe
again, to three steps further; and beside that rerun one process (the default strategy) resumed
from a copy of the same checkpoint with --restart_input, which restarts its input at the
checkpoint's step as a multi-worker run does (official/training/trainer.py). Its weights are the
reference: the same state, the same global batches of 8, one replica instead of two.

Dropout is off: each replica draws the masks of its own rows, so with dropout a split batch is
masked otherwise than a whole one (as under MirroredStrategy), and the weights would differ by
more than the order of the all-reduce's sums.

The workers are real processes (bash, then the python the recipe execs): a TensorFlow collective
worker is not forked from tests/fork_server.py. The reference is forked (tests/cli.py).
"""

import contextlib
import dataclasses
import os
import shutil
import signal
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

from official.configs import BertConfig
from tests.cli import ENV, REPO, free_ports, lines_until, outputs, refused, start

RECIPE = os.path.join(REPO, "run_scripts", "recipes", "pretrain_multi_host.sh")
# The recipe's real-scale flags made tiny (a later flag wins), and the reference's the same.
TINY = ["--train_batch_size=8", "--max_seq_length=32", "--max_predictions_per_seq=5",
        "--learning_rate=1e-3", "--num_warmup_steps=2", "--dtype=float32", "--nojit_compile",
        "--steps_per_loop=1", "--log_steps=1", "--save_checkpoints_steps=1000",
        "--keep_checkpoint_max=3"]
# All-reduce sums two replicas' gradients where one process sums one batch's: the same terms in
# another order, a float32 rounding apart (~1e-7 of each gradient), which Adam's normalised steps
# carry into the weights at about that size (after 3 steps, measured: 1.2e-7 at two layers, the
# weights moving 2e-2; 3.4e-8 at the one layer here, the weights moving 3.3e-2). 1e-5 leaves room
# for another CPU's kernels while a wrong batch or a missed update (1e-3 a step at this learning
# rate) cannot pass.
TOLERANCE = 1e-5


def workers(work, *flags, task_indices=(0, 1)):
    """The recipe started once per task index, each a worker of a two-worker localhost
    cluster; their Popens (stderr piped)."""
    hosts = ",".join(f"127.0.0.1:{port}" for port in free_ports(2))
    env = {name: value for name, value in ENV.items() if name != "TF_CONFIG"}
    # The recipe runs `python`: this one, as a user's activated environment gives it.
    env.update(PATH=os.pathsep.join([os.path.dirname(sys.executable), env["PATH"]]),
               HOSTS=hosts, WORK=str(work), BERT_CONFIG=str(work / "bert_config.json"))
    return [subprocess.Popen(["bash", RECIPE, *flags], cwd=REPO, env=dict(env, TASK_INDEX=str(i)),
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            for i in task_indices]


@contextlib.contextmanager
def killed_on_failure(processes):
    """A failing test leaves no worker behind, waiting for a peer that is gone."""
    try:
        yield processes
    except BaseException:
        for process in processes:
            if process.poll() is None:
                process.kill()
                process.wait()
        raise


def weights(prefix):
    """{name: value} of a training checkpoint's float variables."""
    reader = tf.train.load_checkpoint(str(prefix))
    return {name: reader.get_tensor(name) for name in reader.get_variable_to_shape_map()
            if name != "_CHECKPOINTABLE_OBJECT_GRAPH"
            and np.asarray(reader.get_tensor(name)).dtype.kind == "f"}


def listing(folder):
    return sorted(os.listdir(folder))


@pytest.fixture(scope="module")
def work(pretraining_records, tmp_path_factory):
    """WORK as the recipe reads it: records_128/ and a bert_config.json, dropout off, one layer
    (tests/pretraining_helpers.py: a run's fixed cost grows with the layers)."""
    work = tmp_path_factory.mktemp("multi_host")
    os.symlink(os.path.join(pretraining_records["dir"], "data"), work / "records_128")
    config = dataclasses.replace(BertConfig.from_json_file(pretraining_records["bert_config_file"]),
                                 hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
                                 num_hidden_layers=1)
    config.to_json_file(str(work / "bert_config.json"))
    return work


@pytest.fixture(scope="module")
def run(work):
    """The stopped run, the rerun and the reference: {"stopped": [CompletedProcess] x 2, "step":
    the step saved, "after_stop": output_dir's listing then, "resumed": [CompletedProcess] x 2,
    "reference": CompletedProcess, "out", "single": the two output_dirs}."""
    out, single = work / "phase1_multi_host", work / "single"
    with killed_on_failure(workers(work, "--num_train_steps=100000", *TINY)) as running:
        said = lines_until(running[1].stderr, r"\bstep [1-9]\d*/100000")
        running[1].send_signal(signal.SIGTERM)
        stopped = [outputs(process) for process in running]
    stopped[1].stderr = said + stopped[1].stderr
    saved = [name for name in listing(out) if name.endswith(".index")]
    assert len(saved) == 1, (saved, stopped[0].stderr[-2000:], stopped[1].stderr[-2000:])
    step = int(saved[0][len("model.ckpt-"):-len(".index")])
    after_stop = listing(out)

    shutil.copytree(out, single)
    end = f"--num_train_steps={step + 3}"
    reference = start("run_scripts.run_pretraining", f"--input_file={work}/records_128/*.tfrecord",
                      f"--output_dir={single}", f"--bert_config_file={work}/bert_config.json",
                      "--do_train", end, "--restart_input", *TINY)
    with killed_on_failure([*workers(work, end, *TINY), reference]) as rerun:
        resumed = [outputs(process) for process in rerun]
    return {"stopped": stopped, "step": step, "after_stop": after_stop, "resumed": resumed[:2],
            "reference": resumed[2], "out": out, "single": single}


def test_sigterm_to_one_worker_stops_both_with_one_checkpoint(run):
    for result in run["stopped"]:
        assert result.returncode == 143, result.stderr[-3000:]
        assert "Traceback" not in result.stderr
        last = result.stderr.strip().splitlines()[-1]
        assert f"stopped by SIGTERM at step {run['step']}; the checkpoint is saved" in last
    assert "another worker was stopped by SIGTERM" in run["stopped"][0].stderr
    assert run["step"] >= 1
    # The chief's checkpoint alone: the other worker's copy (a folder of its own) is gone.
    assert run["after_stop"] == ["bert_config.json", "checkpoint",
                                 f"model.ckpt-{run['step']}.data-00000-of-00001",
                                 f"model.ckpt-{run['step']}.index", "train"]


def test_the_rerun_resumes_and_reaches_one_process_weights(run):
    step = run["step"]
    for result in (*run["resumed"], run["reference"]):
        assert result.returncode == 0, result.stderr[-3000:]
        assert "Traceback" not in result.stderr
        assert f"model.ckpt-{step} at step {step}" in result.stderr
        assert f"step {step + 3}/{step + 3}" in result.stderr
    assert "with 2 replica(s)" in run["resumed"][0].stderr

    ours, one_process = (weights(folder / f"model.ckpt-{step + 3}")
                         for folder in (run["out"], run["single"]))
    before = weights(run["out"] / f"model.ckpt-{step}")
    assert ours.keys() == one_process.keys() == before.keys()
    for name in ours:
        np.testing.assert_allclose(ours[name], one_process[name], rtol=0, atol=TOLERANCE,
                                   err_msg=name)
    # Three updates moved the weights far beyond the tolerance (the comparison is not of two
    # untouched checkpoints).
    assert max(np.abs(ours[n] - before[n]).max() for n in ours) > 100 * TOLERANCE
    # Written once: what the two workers leave is what one process leaves.
    assert listing(run["out"]) == listing(run["single"])


def test_a_task_outside_the_cluster_is_one_line_naming_tf_config(work, tmp_path):
    out = tmp_path / "out"
    [result] = [outputs(process) for process in
                workers(work, f"--output_dir={out}", *TINY, task_indices=(2,))]
    refused(result, "TF_CONFIG: task worker 2 is outside its cluster, which has 2 workers")
    assert not out.exists()


def test_a_tf_config_that_is_not_json_is_one_line(work, tmp_path):
    out = tmp_path / "out"
    env = dict(ENV, TF_CONFIG="{cluster: worker}")
    result = outputs(start("run_scripts.run_pretraining", "--do_train",
                           "--distribution_strategy=multi_worker_mirrored",
                           f"--input_file={work}/records_128/*.tfrecord", f"--output_dir={out}",
                           f"--bert_config_file={work}/bert_config.json", *TINY, env=env))
    refused(result, "TF_CONFIG is not JSON")
    assert not out.exists()
