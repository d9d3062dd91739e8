"""MultiWorkerMirroredStrategy on localhost: two worker processes train as one process would.

Each worker is `tests/distributed_worker.py` with its TF_CONFIG; the reference is the same script
on the default strategy with the same global batches.
"""

import json
import os
import subprocess
import sys

import numpy as np

from tests.cli import ENV, PATIENCE, free_ports

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def start(args, tf_config=None):
    env = dict(ENV)
    env.pop("TF_CONFIG", None)
    if tf_config:
        env["TF_CONFIG"] = json.dumps(tf_config)
    return subprocess.Popen([sys.executable, "-m", "tests.distributed_worker", *args], cwd=REPO,
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def finish(process):
    _, stderr = process.communicate(timeout=PATIENCE)
    assert process.returncode == 0, stderr[-3000:]


def test_two_workers_hold_the_weights_of_one_process(tmp_path):
    workers = [f"127.0.0.1:{port}" for port in free_ports(2)]
    processes = [
        start([str(tmp_path / "multi"), str(tmp_path / f"worker{i}.npy"), "multi_worker_mirrored"],
              {"cluster": {"worker": workers}, "task": {"type": "worker", "index": i}})
        for i in range(2)]
    single = start([str(tmp_path / "single"), str(tmp_path / "single.npy")])
    for process in (*processes, single):
        finish(process)

    worker0, worker1 = (np.load(tmp_path / f"worker{i}.npy") for i in range(2))
    reference = np.load(tmp_path / "single.npy")
    np.testing.assert_array_equal(worker0, worker1)
    np.testing.assert_allclose(worker0, reference, atol=2e-6)
    # Training moved the weights (the comparison is not between two untouched inits).
    assert np.abs(reference).sum() > 0
    # The chief wrote the checkpoint; the other worker's scratch copy is gone.
    assert os.path.exists(tmp_path / "multi" / "model.ckpt-3.index")
    assert [f for f in os.listdir(tmp_path / "multi") if f.startswith(".worker")] == []
