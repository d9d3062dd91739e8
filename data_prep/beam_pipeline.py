"""The fast generator (fast_generation.py) as an Apache Beam pipeline, for corpora past one machine.

    run_beam(input_files, output_dir, vocab_file, do_lower_case, options, num_shards,
             chunk_bytes, pipeline_args)

When to use it: the process-pool generator (`fast_generation.generate`) is the faster choice while
the corpus fits one machine's disk and its cores finish in acceptable time: a cluster's workers
take seconds to minutes to start, and each shard's tokenizer is built again on its worker. Switch
to Beam when one machine is not enough: a corpus larger than its disk, or more text than its cores
can process in the time you have.

The same files: the work items are the shards of `corpus_shards.plan_shards`, and a worker makes
each with the fast generator's own `make_shard` (same chunks, seeds and framing), writing it
under a temp name and renaming it into place when complete. So every shard file is byte for byte
the fast generator's with the same options, `num_shards` and `chunk_bytes`. Parallelism is
`num_shards` (one worker makes one shard), so choose several shards per worker. The pipeline is
one ParDo after a Reshuffle, with no Beam sink, side input or multiple outputs: that is all the
Dask runner of Beam 2.77 runs correctly (its ParDo mixes tagged outputs into the main one, it
computes only the pipeline's last step, and it has no Reshuffle), and each shard's counts reach
the launcher as a small JSON file rather than through a Beam sink.

Retries: a runner runs a work item again when its worker dies (Dask does so on another worker,
Dataflow and Flink likewise). A retried shard is written again under a fresh temp name and
renamed over the same final name with the same bytes, and so is its counts' file, so a retry
neither loses nor duplicates records; the temp file the dead worker left is deleted at the end.

Running on a cluster: pass Beam's own flags as `pipeline_args`, e.g.

    --runner=DaskRunner --dask_client_address=tcp://HOST:8786
    --runner=FlinkRunner --flink_master=HOST:8081 --environment_type=DOCKER
    --runner=SparkRunner --spark_master_url=spark://HOST:7077 --environment_type=DOCKER
    --runner=DataflowRunner --project=P --region=R --temp_location=gs://BUCKET/tmp

DaskRunner (Beam's `apache_beam.runners.dask.dask_runner.DaskRunner`, named here by its short
name) runs on a `distributed` cluster: a `dask scheduler` and `dask worker` processes on any
machines (or dask-kubernetes, dask-yarn); without an address it starts a LocalCluster of worker
processes on this machine. Each shard is a Dask partition of its own (`--dask_partition_size=1`
unless given), so the scheduler spreads shards over workers. Flink and Spark need their job
servers' jars (fetched from Maven Central at the first run) and Dataflow apache-beam[gcp].

The workers import this repo's `data_prep` and `official` packages and need numpy, absl-py and
apache-beam with google-crc32c, not TensorFlow: start the Dask scheduler (which unpickles the
tasks too) and workers with the repo's venv and `PYTHONPATH=/path/to/repo`; give other runners
a container image with the repo and requirements installed (`--sdk_container_image=IMAGE` on
Dataflow, `--environment_type=DOCKER --environment_config=IMAGE` on Flink and Spark), or
`--setup_file=./setup.py`. Workers read
the corpus and write the shards with plain file calls, so the input files and `output_dir`
must be on a file system mounted at the same path by the launcher and every worker (NFS, a
FUSE-mounted bucket).

A run first removes an earlier run's output from `output_dir` (as the fast generator does:
`remove_earlier_output`) and the temp files a killed run left; an interrupted or failed run
deletes its own. On a cluster, stopping the launcher does not stop the shards workers have
begun (Dask drops only the tasks not started): they may still write their shard and counts
after the command has exited, in a folder without summary.json, which a rerun cleans.

The plain DirectRunner tries Beam's Prism runner first, which it downloads from GitHub; offline it
logs the failure and falls back to running in-process.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import os
import re
import shutil
import time
import uuid

import apache_beam as beam
from absl import logging
from apache_beam.options.pipeline_options import PipelineOptions, StandardOptions

from data_prep import corpus_shards
from data_prep.fast_generation import (
    CHUNK_BYTES,
    ShardStats,
    make_shard,
    remove_earlier_output,
    remove_temp_shards,
    special_ids,
    summary_dict,
)
from data_prep.input_errors import InputError
from data_prep.pretraining_options import PretrainingDataOptions
from official.atomic_files import atomic_path
from official.pretraining_shards import shard_path, write_summary
from official.text.python_tokenizer import PythonTokenizer
from official.text.vocab import load_vocab

# Beam knows its Dask runner only by its full name; `--runner=DaskRunner` is taken as it.
DASK_RUNNER = "apache_beam.runners.dask.dask_runner.DaskRunner"
# The folder where the workers leave each shard's counts until the run ends.
_STATS_FOLDER = re.compile(r"\.beam-stats-[0-9a-f]{32}")


class _MakeShard(beam.DoFn):
    """(shard, byte ranges) in: writes the shard's file and its counts' JSON; nothing out."""

    def __init__(self, output_dir: str, stats_dir: str, num_shards: int, vocab_file: str,
                 do_lower_case: bool, options: PretrainingDataOptions, chunk_bytes: int):
        self._output_dir, self._stats_dir, self._num_shards = output_dir, stats_dir, num_shards
        self._vocab_file, self._do_lower_case = vocab_file, do_lower_case
        self._options, self._chunk_bytes = options, chunk_bytes

    def setup(self):
        self._tokenizer = _worker_tokenizer(self._vocab_file, self._do_lower_case)

    def process(self, work):
        # No annotation: Beam would read it as a type hint (and log that it cannot).
        shard, ranges = work
        stats = make_shard(shard, ranges, self._output_dir, self._num_shards, self._tokenizer,
                           self._options, self._chunk_bytes)
        # After the shard: a counts' file is there only for a shard that is complete.
        with atomic_path(_stats_path(self._stats_dir, shard)) as tmp_path:
            with open(tmp_path, "w", encoding="utf-8") as f:
                json.dump(dataclasses.asdict(stats), f)
        return ()


@functools.cache
def _worker_tokenizer(vocab_file: str, do_lower_case: bool) -> PythonTokenizer:
    """One tokenizer a worker process, built there (not pickled with the DoFn) and kept across
    shards, so its word cache grows as a fast generator worker's does. Kept here rather than by
    the DoFn because Beam 2.77's Dask runner calls `setup` for every bundle, that is every shard
    (building it takes a few tenths of a second)."""
    return PythonTokenizer(vocab_file, do_lower_case)


def _stats_path(stats_dir: str, shard: int) -> str:
    return os.path.join(stats_dir, f"{shard:05d}.json")


def _read_stats(stats_dir: str, num_shards: int) -> ShardStats:
    """The corpus's counts: the sum of every shard's file."""
    total = ShardStats()
    for shard in range(num_shards):
        with open(_stats_path(stats_dir, shard), encoding="utf-8") as f:
            fields = json.load(f)
        # JSON keys are strings; the histogram's are bucket starts, which the summary sorts as
        # ints.
        fields["length_histogram"] = {int(k): v for k, v in fields["length_histogram"].items()}
        total.add(ShardStats(**fields))
    return total


def pipeline_options(pipeline_args: list[str]) -> PipelineOptions:
    """Beam's options from its flags; DaskRunner named in full, one shard a Dask partition.

    Beam's Dask runner turns Create into a Dask bag of 128 elements a partition and Reshuffle
    into nothing, so without `--dask_partition_size=1` (or `--dask_npartitions`) every shard of
    a run with up to 128 would be made in one task, by one worker.
    """
    options = PipelineOptions(pipeline_args)
    standard = options.view_as(StandardOptions)
    if standard.runner in ("DaskRunner", DASK_RUNNER):
        standard.runner = DASK_RUNNER
        from apache_beam.runners.dask.dask_runner import DaskOptions  # needs dask: only here
        dask = options.view_as(DaskOptions)
        if dask.npartitions is None and dask.partition_size is None:
            dask.partition_size = 1
    return options


def run_beam(input_files: list[str], output_dir: str, vocab_file: str, do_lower_case: bool,
             options: PretrainingDataOptions, num_shards: int, chunk_bytes: int = CHUNK_BYTES,
             pipeline_args: list[str] | None = None) -> dict:
    """Writes `num_shards` TFRecord files and `summary.json` to `output_dir`; returns the summary.

    `pipeline_args` are Beam's flags (`--runner=...` and the runner's own), given to
    `pipeline_options`; none runs the DirectRunner.

    Raises:
      InputError: an unusable vocab or a corpus with no document.
    """
    if num_shards < 1:
        raise InputError(f"num_shards must be positive, got {num_shards}")
    special_ids(load_vocab(vocab_file), vocab_file)  # A bad vocab fails before any worker.
    corpus_shards.check_has_text(input_files)
    plan = corpus_shards.plan_shards(input_files, num_shards)
    os.makedirs(output_dir, exist_ok=True)
    remove_earlier_output(output_dir)
    remove_temp_files(output_dir)
    # Each shard's counts leave the pipeline through a file, read once it has finished: that
    # works on every runner, and summary.json is then written only after every shard file is
    # complete, as in the fast mode.
    stats_dir = os.path.join(output_dir, f".beam-stats-{uuid.uuid4().hex}")
    os.makedirs(stats_dir)
    start = time.monotonic()
    try:
        pipeline = beam.Pipeline(options=pipeline_options(pipeline_args or []))
        _ = (pipeline
             | "Shards" >> beam.Create(list(enumerate(plan)), reshuffle=False)
             # Create's elements would otherwise stay in one bundle, fused with the next step on
             # one worker; the reshuffle lets the runner spread shards over workers.
             | "Spread" >> beam.Reshuffle()
             | "MakeShards" >> beam.ParDo(_MakeShard(output_dir, stats_dir, num_shards,
                                                     vocab_file, do_lower_case, options,
                                                     chunk_bytes)))
        result = pipeline.run()
        try:
            result.wait_until_finish()
        finally:
            # The Dask runner leaves its client connected (and its LocalCluster running).
            with contextlib.suppress(AttributeError):
                result.client.close()
        stats = _read_stats(stats_dir, num_shards)
    except BaseException:
        remove_temp_files(output_dir)  # Stopped or failed: its temp files stay otherwise.
        raise
    # A retried shard's first attempt, if its worker died mid-shard, left a temp file.
    remove_temp_files(output_dir)
    if not stats.documents:
        for shard in range(num_shards):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(shard_path(output_dir, shard, num_shards))
        raise InputError(f"{', '.join(input_files)}: no document with any text")
    for path, count in sorted(stats.invalid_utf8.items()):
        logging.warning("%s: %d bytes were not UTF-8 and were replaced", path, count)
    summary = summary_dict(stats, options, input_files, num_shards, time.monotonic() - start)
    write_summary(output_dir, summary)
    return summary


def remove_temp_files(output_dir: str) -> None:
    """Deletes the counts' folders and temp shards a run of this generator left (also the
    entry point's, when a stop signal ends the run at once)."""
    for name in os.listdir(output_dir):
        path = os.path.join(output_dir, name)
        if _STATS_FOLDER.fullmatch(name) and os.path.isdir(path):
            shutil.rmtree(path, ignore_errors=True)
    remove_temp_shards(output_dir)
