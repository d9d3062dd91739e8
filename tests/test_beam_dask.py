"""create_pretraining_data on Beam's Dask runner, on a real `distributed` cluster started here:
a scheduler and two worker processes (the README's `dask scheduler` and `dask worker`, run as
`python -m` from the repo's root), no mock. One worker is killed (SIGKILL) in the middle of a
shard; Dask runs the shard again on the other, and the files are still the fast generator's,
byte for byte: no record lost or duplicated."""

import json
import os
import signal

import pytest

from data_prep import fast_generation
from data_prep.pretraining_options import PretrainingDataOptions
from official.pretraining_shards import SUMMARY_FILE
from tests.cli import BackgroundRun, snapshot, succeeded

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SAMPLE = os.path.join(REPO, "tests", "data", "pretraining_sample.txt")
VOCAB = os.path.join(REPO, "data", "vocab", "uncased_vocab.txt")
SHARDS = 4
OPTIONS = PretrainingDataOptions(max_seq_length=64, max_predictions_per_seq=10, dupe_factor=3)


@pytest.fixture(scope="module", autouse=True)
def _no_process_left():
    yield
    BackgroundRun.stop_all()


def open_temp_shards(pid: int, folder: str) -> list[str]:
    """The temp shard files (official/atomic_files.py's names) process `pid` has open in
    `folder`: what a worker holds while it makes a shard."""
    found = []
    try:
        descriptors = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return found
    for descriptor in descriptors:
        try:
            target = os.readlink(f"/proc/{pid}/fd/{descriptor}")
        except OSError:
            continue
        folder_of, name = os.path.split(target)
        if folder_of == folder and name.startswith(".pretraining-") and name.endswith(".tmp"):
            found.append(name)
    return found


@pytest.fixture(scope="module")
def killed_run(tmp_path_factory):
    """The output folders of the fast generator and of a Dask run that lost a worker mid-shard,
    and what the run saw: {"fast", "dask", "result", "killed_pid", "held", "workers"}."""
    root = tmp_path_factory.mktemp("dask")
    scheduler_file = root / "scheduler.json"
    logs = {name: root / name for name in ("scheduler", "worker0", "worker1", "create")}
    for folder in logs.values():
        folder.mkdir()
    BackgroundRun("distributed.cli.dask_scheduler", logs["scheduler"], "--host=127.0.0.1",
                  "--port=0", "--no-dashboard", f"--scheduler-file={scheduler_file}")
    # Without a nanny a killed worker stays dead, so the other one must do its shard.
    workers = [BackgroundRun("distributed.cli.dask_worker", logs[f"worker{i}"],
                             f"--scheduler-file={scheduler_file}", "--nthreads=1",
                             "--no-nanny", "--no-dashboard", f"--local-directory={root}")
               for i in range(2)]
    for worker in workers:
        worker.wait_until(lambda worker=worker: "Registered to:" in worker.stderr())
    with open(scheduler_file, encoding="utf-8") as f:
        address = json.load(f)["address"]

    fast_dir, dask_dir = str(root / "fast"), str(root / "out")
    fast_generation.generate([SAMPLE], fast_dir, VOCAB, True, OPTIONS, num_shards=SHARDS)
    run = BackgroundRun(
        "data_prep.create_pretraining_data", logs["create"], f"--input_file={SAMPLE}",
        f"--vocab_file={VOCAB}", f"--output_dir={dask_dir}", f"--num_shards={SHARDS}",
        "--max_seq_length=64", "--max_predictions_per_seq=10", "--dupe_factor=3",
        "--runner=DaskRunner", f"--dask_address={address}")
    # The event: a worker process (not the launcher) holds a shard's temp file open.
    held = {}
    run.wait_until(lambda: held.update(
        {worker.pid: open_temp_shards(worker.pid, dask_dir) for worker in workers})
        or any(held.values()))
    killed = next(worker for worker in workers if held[worker.pid])
    os.kill(killed.pid, signal.SIGKILL)
    killed.process.wait()
    return {"fast": fast_dir, "dask": dask_dir, "result": run.finish(), "killed_pid": killed.pid,
            "held": held, "workers": [worker.pid for worker in workers], "launcher": run.pid}


def test_a_worker_process_makes_the_shards(killed_run):
    # The shard in the making was open in a worker's process, which is neither this one nor
    # the launcher's: the records are made on the cluster, not in-process.
    assert killed_run["held"][killed_run["killed_pid"]]
    assert killed_run["killed_pid"] in killed_run["workers"]
    assert killed_run["killed_pid"] not in (os.getpid(), killed_run["launcher"])


def test_a_worker_killed_mid_shard_loses_and_duplicates_no_record(killed_run):
    succeeded(killed_run["result"])
    fast, dask = (snapshot(killed_run[name]) for name in ("fast", "dask"))
    # The dead worker's shard (".NAME.<uuid>.tmp" when it died) was made again by the other.
    (held,) = killed_run["held"][killed_run["killed_pid"]]
    assert held.split(".")[1] + ".tfrecord" in dask
    # Every shard byte for byte the fast generator's (a lost or a doubled record changes its
    # shard's bytes), and no temp file or counts' folder left: the dead worker's temp shard is
    # deleted.
    assert sorted(dask) == sorted(fast)
    shards = [name for name in fast if name != SUMMARY_FILE]
    assert len(shards) == SHARDS
    for name in shards:
        assert dask[name] == fast[name], name
    fast_summary, dask_summary = (json.loads(found[SUMMARY_FILE]) for found in (fast, dask))
    del fast_summary["seconds"], dask_summary["seconds"]
    # The counts of the shard made twice are counted once.
    assert dask_summary == fast_summary
