"""Benchmark: the Beam pipeline on a Dask cluster of 1, 2 and 4 workers against the fast
generator with 1 and 2 worker processes, in rounds, in one run.

    python -m bench.beam_dask_throughput [--copies 2] [--shards 8] [--rounds 3]

The corpus is `--copies` copies of data/gutenberg/corpus.txt (1.5 MB each), made with the
original README's flags (max_seq_length 128, max_predictions_per_seq 20, dupe_factor 5, uncased
vocab) into `--shards` files. Three `distributed` clusters are started first (a `dask scheduler`
and 1, 2 or 4 `dask worker` processes of one thread each, as the README starts them) and kept
for the whole run, as a cluster is; a Dask run's time is from `run_beam`'s call to its return
(connecting, submitting the graph, every shard, summary.json), not the cluster's start, which is
printed apart. One untimed run of each peer warms it (a Dask worker imports Beam and builds
its tokenizer at its first shard). Each round times every peer once; each figure is the median
over rounds, and each ratio is against the fast generator with 1 worker in the same round
(bench/rounds.py). CPU seconds per MB (the launcher's and its workers', the scheduler's too)
say what each costs whatever else loads the machine. Every Dask run's shards are checked byte
for byte against the fast generator's.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from bench.rounds import load_average, ratios
from data_prep import beam_pipeline, fast_generation
from data_prep.pretraining_options import PretrainingDataOptions

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(REPO, "data", "gutenberg", "corpus.txt")
VOCAB = os.path.join(REPO, "data", "vocab", "uncased_vocab.txt")
OPTIONS = PretrainingDataOptions(max_seq_length=128, max_predictions_per_seq=20, dupe_factor=5)
DASK_WORKERS = (1, 2, 4)


class Cluster:
    """A scheduler and `workers` one-thread worker processes on this machine, started as the
    README's commands start them (`python -m distributed.cli.dask_*`, from the repo's root)."""

    def __init__(self, workers: int, folder: str):
        start = time.perf_counter()
        scheduler_file = os.path.join(folder, "scheduler.json")
        self.log = open(os.path.join(folder, "cluster.log"), "w")
        self.processes = [self._start("distributed.cli.dask_scheduler", "--host=127.0.0.1",
                                      "--port=0", "--no-dashboard",
                                      f"--scheduler-file={scheduler_file}")]
        self.processes += [self._start("distributed.cli.dask_worker",
                                       f"--scheduler-file={scheduler_file}", "--nthreads=1",
                                       "--no-nanny", "--no-dashboard",
                                       f"--local-directory={folder}") for _ in range(workers)]
        from distributed import Client
        with Client(scheduler_file=scheduler_file, timeout=600) as client:
            client.wait_for_workers(workers, timeout=600)
            self.address = client.scheduler.address
        self.start_seconds = time.perf_counter() - start

    def cpu_seconds(self) -> float:
        """CPU seconds the scheduler and workers have used so far (from /proc)."""
        total = 0
        for process in self.processes:
            with open(f"/proc/{process.pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime
        return total / os.sysconf("SC_CLK_TCK")

    def _start(self, module: str, *flags: str) -> subprocess.Popen:
        return subprocess.Popen([sys.executable, "-m", module, *flags], cwd=REPO,
                                stdout=self.log, stderr=self.log)

    def stop(self) -> None:
        # Killed: a worker told to close may wait for a scheduler that is closing too.
        for process in self.processes:
            process.kill()
        for process in self.processes:
            process.wait()
        self.log.close()


def shard_bytes(folder: str) -> dict[str, bytes]:
    found = {}
    for name in sorted(os.listdir(folder)):
        if name.endswith(".tfrecord"):
            with open(os.path.join(folder, name), "rb") as f:
                found[name] = f.read()
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--copies", type=int, default=2)
    parser.add_argument("--shards", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    with open("/proc/cpuinfo") as f:
        cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    print(f"CPU: {cpu}, {os.cpu_count()} cores; {load_average()}")
    root = tempfile.mkdtemp(prefix="beam_dask_bench_")
    clusters: dict[int, Cluster] = {}
    try:
        corpus = os.path.join(root, "corpus.txt")
        with open(corpus, "wb") as out:
            for _ in range(args.copies):
                with open(CORPUS, "rb") as part:
                    shutil.copyfileobj(part, out)
        megabytes = os.path.getsize(corpus) / 1e6
        for workers in DASK_WORKERS:
            folder = os.path.join(root, f"cluster{workers}")
            os.makedirs(folder)
            clusters[workers] = Cluster(workers, folder)
            print(f"cluster of {workers} worker(s) started in "
                  f"{clusters[workers].start_seconds:.1f} s")

        def fast_cpu() -> float:  # This process, and the worker processes it has joined.
            children = resource.getrusage(resource.RUSAGE_CHILDREN)
            return time.process_time() + children.ru_utime + children.ru_stime

        def fast(workers: int):
            return lambda out: fast_generation.generate(
                [corpus], out, VOCAB, True, OPTIONS, num_shards=args.shards,
                num_workers=workers)

        def dask(workers: int):
            return lambda out: beam_pipeline.run_beam(
                [corpus], out, VOCAB, True, OPTIONS, num_shards=args.shards,
                pipeline_args=["--runner=DaskRunner",
                               f"--dask_client_address={clusters[workers].address}"])

        peers = {"fast generator, 1 worker": fast(1), "fast generator, 2 workers": fast(2)}
        peers.update({f"Beam on Dask, {n} worker{'s' if n > 1 else ''}": dask(n)
                      for n in DASK_WORKERS})
        # What each peer's CPU seconds are read from: the launcher's and its workers'.
        cpu_of = {name: fast_cpu for name in list(peers)[:2]}
        cpu_of.update({name: (lambda n=n: time.process_time() + clusters[n].cpu_seconds())
                       for name, n in zip(list(peers)[2:], DASK_WORKERS)})
        reference = os.path.join(root, "reference")
        fast(1)(reference)
        expected = shard_bytes(reference)
        for run in peers.values():  # Untimed: the workers import Beam and build tokenizers.
            out = os.path.join(root, "out")
            run(out)
            shutil.rmtree(out)
        instances = None
        seconds = {name: [] for name in peers}
        cpu = {name: [] for name in peers}
        for round_index in range(args.rounds):
            for name, run in peers.items():
                out = os.path.join(root, "out")
                start, start_cpu = time.perf_counter(), cpu_of[name]()
                summary = run(out)
                seconds[name].append(time.perf_counter() - start)
                cpu[name].append(cpu_of[name]() - start_cpu)
                assert shard_bytes(out) == expected, f"{name}: other shards than the fast's"
                instances = summary["instances"]
                shutil.rmtree(out)
            print(f"round {round_index + 1}: " + ", ".join(
                f"{name} {times[-1]:.1f} s" for name, times in seconds.items())
                + f"; {load_average()}")
    finally:
        for cluster in clusters.values():
            cluster.stop()
        shutil.rmtree(root, ignore_errors=True)

    baseline = [megabytes / s for s in seconds["fast generator, 1 worker"]]
    print(f"\n{megabytes:.1f} MB of text, {instances} instances, {args.shards} shards, "
          f"{args.rounds} rounds (medians); every Dask run's shards equal the fast's\n")
    print("| generator | seconds | MB/s | instances/s | x fast, 1 worker | CPU s per MB |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, times in seconds.items():
        rates = [megabytes / s for s in times]
        print(f"| {name} | {statistics.median(times):.1f} | {statistics.median(rates):.2f} | "
              f"{instances / statistics.median(times):.0f} | "
              f"{statistics.median(ratios(rates, baseline)):.2f} | "
              f"{statistics.median(cpu[name]) / megabytes:.2f} |")


if __name__ == "__main__":
    main()
