"""The fast generator (fast_generation.py) as an Apache Beam pipeline, for corpora past one machine.

    run_beam(input_files, output_dir, vocab_file, do_lower_case, options, num_shards,
             chunk_bytes, pipeline_args)

When to use it: the process-pool generator (`fast_generation.generate`) is the faster choice while
the corpus fits one machine's disk and its cores finish in acceptable time. Beam adds costs the pool
does not have: every record is encoded and shuffled between steps (fixing the number of output
files groups all records by file), and a cluster's workers take minutes to start. Switch to Beam
when one machine is not enough: a corpus larger than its disk, or more text than its cores can
process in the time you have.

Same records, other files: the work items are the shards of `corpus_shards.plan_shards` and each is
cut into the same chunks, seeded by the same (random_seed, shard, chunk) and turned into records by
the same `ChunkProcessor`. So the records are exactly the multiset the fast generator makes with
the same options, `num_shards` and `chunk_bytes`. Which output file holds a record, and the order
within a file, are Beam's choice and differ from run to run; pretraining shuffles anyway.
Parallelism is `num_shards` (one worker reads one shard), so choose several shards per worker.

Running on a cluster: pass Beam's own flags as `pipeline_args` (Dataflow needs apache-beam[gcp]),
e.g.

    --runner=FlinkRunner --flink_master=HOST:8081 --environment_type=DOCKER
    --runner=SparkRunner --spark_master_url=spark://HOST:7077 --environment_type=DOCKER
    --runner=DataflowRunner --project=P --region=R --temp_location=gs://BUCKET/tmp

The workers import this repo's `data_prep` and `official` packages and need numpy, absl-py and
apache-beam with google-crc32c (which its TFRecord writer uses for checksums), not TensorFlow:
give them a container image with the repo and requirements installed (`--sdk_container_image=IMAGE`
on Dataflow, `--environment_type=DOCKER --environment_config=IMAGE` on Flink and Spark), or
`--setup_file=./setup.py` with a setup.py that packages them. The corpus is read with plain
file calls (corpus_shards.py) and `summary.json` is written the same way, so the input files and
`output_dir` must be on a file system mounted at the same path by the launcher and every worker
(NFS, a FUSE-mounted bucket).

A run first removes an earlier run's output from `output_dir` (as the fast generator does:
`remove_earlier_output`) and Beam's temp folders a killed run left; an interrupted or failed run
deletes its own.

The plain DirectRunner tries Beam's Prism runner first, which it downloads from GitHub; offline it
logs the failure and falls back to running in-process.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import re
import shutil
import time
import uuid

import apache_beam as beam
from absl import logging
from apache_beam.options.pipeline_options import PipelineOptions

from data_prep import corpus_shards
from data_prep.fast_generation import (
    CHUNK_BYTES,
    ChunkProcessor,
    ShardStats,
    chunks,
    remove_earlier_output,
    special_ids,
    summary_dict,
)
from data_prep.input_errors import InputError
from data_prep.pretraining_options import PretrainingDataOptions
from official.pretraining_shards import shard_path, write_summary
from official.text.python_tokenizer import PythonTokenizer
from official.text.vocab import load_vocab

_STATS = "stats"
# What a run leaves beside the shards until it ends: the combined counts' file, and the temp
# folders Beam's file sinks write in ("beam-temp-" + the file prefix + "-" + a uuid).
_STATS_FILE = re.compile(r"\.beam-stats-[0-9a-f]{32}\.json")
_BEAM_TEMP = re.compile(r"beam-temp-(pretraining|\.beam-stats-[0-9a-f]{32}\.json)-[0-9a-f]{32}")


class _GenerateShard(beam.DoFn):
    """(shard, byte ranges) in; the shard's records out, and its counts as the `stats` output."""

    def __init__(self, vocab_file: str, do_lower_case: bool, options: PretrainingDataOptions,
                 chunk_bytes: int):
        self._vocab_file, self._do_lower_case = vocab_file, do_lower_case
        self._options, self._chunk_bytes = options, chunk_bytes

    def setup(self):
        # Built on the worker (its word cache grows there) rather than pickled with the DoFn.
        tokenizer = PythonTokenizer(self._vocab_file, self._do_lower_case)
        self._processor = ChunkProcessor(tokenizer, self._options)

    def process(self, work: tuple[int, list[corpus_shards.ByteRange]]):
        shard, ranges = work
        read_stats = corpus_shards.ReadStats()
        stats = ShardStats()
        for chunk_index, (documents, size) in enumerate(
                chunks(ranges, read_stats, self._chunk_bytes)):
            # The fast generator's seed for this chunk, hence its records.
            records, chunk_stats = self._processor.records(
                documents, [self._options.random_seed, shard, chunk_index])
            yield from records
            chunk_stats.input_bytes = size
            stats.add(chunk_stats)
        stats.invalid_utf8 = dict(read_stats.invalid_utf8)
        yield beam.pvalue.TaggedOutput(_STATS, stats)


class _AddStats(beam.CombineFn):
    """Sums ShardStats: the corpus's counts, from one element per shard."""

    def create_accumulator(self) -> ShardStats:
        return ShardStats()

    def add_input(self, total: ShardStats, stats: ShardStats) -> ShardStats:
        total.add(stats)
        return total

    def merge_accumulators(self, totals) -> ShardStats:
        merged = ShardStats()
        for total in totals:
            merged.add(total)
        return merged

    def extract_output(self, total: ShardStats) -> ShardStats:
        return total


def _stats_from_json(text: str) -> ShardStats:
    fields = json.loads(text)
    # JSON keys are strings; the histogram's are bucket starts, and the summary sorts them as ints.
    fields["length_histogram"] = {int(k): v for k, v in fields["length_histogram"].items()}
    return ShardStats(**fields)


def run_beam(input_files: list[str], output_dir: str, vocab_file: str, do_lower_case: bool,
             options: PretrainingDataOptions, num_shards: int, chunk_bytes: int = CHUNK_BYTES,
             pipeline_args: list[str] | None = None) -> dict:
    """Writes `num_shards` TFRecord files and `summary.json` to `output_dir`; returns the summary.

    `pipeline_args` are Beam's flags (`--runner=...` and the runner's own), given to
    PipelineOptions; none runs the DirectRunner.

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
    # The combined counts leave the pipeline through this file, read back once it has finished:
    # that works on every runner, and summary.json is then written only after every shard file
    # is committed, as in the fast mode.
    stats_path = os.path.join(output_dir, f".beam-stats-{uuid.uuid4().hex}.json")
    start = time.monotonic()
    try:
        with beam.Pipeline(options=PipelineOptions(pipeline_args or [])) as pipeline:
            generated = (
                pipeline
                | "Shards" >> beam.Create(list(enumerate(plan)), reshuffle=False)
                # Create's elements would otherwise stay in one bundle, fused with the generation
                # step on one worker; the reshuffle lets the runner spread shards over workers.
                | "Spread" >> beam.Reshuffle()
                | "Generate" >> beam.ParDo(
                    _GenerateShard(vocab_file, do_lower_case, options, chunk_bytes)
                ).with_outputs(_STATS, main="records"))
            # Beam's file sink writes each file under a temporary name and renames it into place
            # when the whole write is done, so each output file appears atomically, complete.
            _ = generated.records | "Write" >> beam.io.WriteToTFRecord(
                os.path.join(output_dir, "pretraining"), file_name_suffix=".tfrecord",
                num_shards=num_shards)
            _ = (generated[_STATS]
                 | "AddStats" >> beam.CombineGlobally(_AddStats())
                 | "StatsJson" >> beam.Map(lambda stats: json.dumps(dataclasses.asdict(stats)))
                 | "WriteStats" >> beam.io.WriteToText(stats_path, shard_name_template=""))
        with open(stats_path, encoding="utf-8") as f:
            stats = _stats_from_json(f.read())
    except BaseException:
        remove_temp_files(output_dir)  # Stopped or failed: Beam's temp folders stay otherwise.
        raise
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(stats_path)
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
    """Deletes the stats files and Beam temp folders of this generator that a run left (also
    the entry point's, when a stop signal ends the run at once)."""
    for name in os.listdir(output_dir):
        path = os.path.join(output_dir, name)
        if _BEAM_TEMP.fullmatch(name) and os.path.isdir(path):
            shutil.rmtree(path, ignore_errors=True)
        elif _STATS_FILE.fullmatch(name):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
