"""The fast pretraining-data generator: shards in parallel, streaming, deterministic.

    generate(input_files, output_dir, vocab_file, do_lower_case, options, num_shards, num_workers)

The corpus is cut into `num_shards` byte ranges of whole documents (corpus_shards.py); each shard
becomes one TFRecord file, made by one worker process from a stream of ~1 MiB chunks of documents:
tokenise the chunk (official/text/python_tokenizer.py), build and mask its instances with numpy
(fast_instances.py), serialise them (example_bytes.py), append them to the shard
(tfrecord_framing.py). None of it loads TensorFlow: a worker starts in a fraction of a second
and holds tens of MB. Memory is bounded by a chunk, not by the shard or the corpus. Randomness
is seeded by (random_seed, shard, chunk), so the bytes depend on the flags and the corpus only,
not on the number of workers. Random next sentences and the instance shuffle stay within a chunk
(the original draws from the whole corpus, which needs it all in RAM).

A shard file appears under its final name only when complete, and `summary.json` (the counts) is
written last, once every shard is: a folder without it is incomplete. A run first removes what an
earlier run left in `output_dir` (its summary.json, then its shards, whatever their number; other
files stay), so the folder never mixes two runs, and a rerun after an interruption makes the same
bytes as an uninterrupted run. The names are official/pretraining_shards.py's.

Stopping: an exception in the coordinator (the entry point turns SIGTERM and ctrl-C into one) kills
the workers, waits for them and deletes their temp files before it propagates, so nothing in
`output_dir` changes once the coordinator has exited; with one worker's work to do, the
coordinator does it itself, and the same exception unwinds its shard's temp file. Workers ignore
ctrl-C (it reaches the whole process group; the coordinator stops them) and, on Linux, die with a
coordinator that is killed.
"""

from __future__ import annotations

import contextlib
import dataclasses
import multiprocessing
import os
import pickle
import queue as queue_lib
import signal
import sys
import time
import traceback
from typing import Iterator

import numpy as np
from absl import logging

from data_prep import corpus_shards
from data_prep.example_bytes import ExampleSerializer
from data_prep.fast_instances import InstanceBatch, SpecialIds, TokenizedChunk, build_instances
from data_prep.input_errors import InputError
from data_prep.pretraining_options import PretrainingDataOptions
from data_prep.tfrecord_framing import write_records
from official import console, parent_death
from official.atomic_files import TEMP_SUFFIX, atomic_path
from official.pretraining_records import FLOAT_FEATURES, INT_FEATURES
from official.pretraining_shards import SHARD_NAME, SUMMARY_FILE, shard_path, write_summary
from official.text.python_tokenizer import PythonTokenizer
from official.text.vocab import load_vocab

# Text per chunk: large enough that random next sentences have many documents to come from and
# numpy works on big arrays; small enough that a chunk's instances (dupe_factor x ~2,500 per MiB)
# take tens of MB.
CHUNK_BYTES = 1 << 20
# What the entry point turns into a clean stop; blocked while workers start (see _run_worker).
_STOP_SIGNALS = {signal.SIGINT, signal.SIGTERM}


@dataclasses.dataclass
class ShardStats:
    """Counts for the summary; additive over chunks and shards."""
    documents: int = 0
    instances: int = 0
    tokens: int = 0
    candidate_tokens: int = 0
    masked: int = 0
    replaced_with_mask: int = 0
    kept: int = 0
    replaced_with_random: int = 0
    second_sentence_label_1: int = 0
    input_bytes: int = 0
    length_histogram: dict = dataclasses.field(default_factory=dict)
    invalid_utf8: dict = dataclasses.field(default_factory=dict)

    def add(self, other: "ShardStats") -> None:
        for field in dataclasses.fields(self):
            mine, theirs = getattr(self, field.name), getattr(other, field.name)
            if isinstance(mine, dict):
                for key, value in theirs.items():
                    mine[key] = mine.get(key, 0) + value
            else:
                setattr(self, field.name, mine + theirs)


def special_ids(vocab: dict[str, int], vocab_file: str) -> SpecialIds:
    """The vocab ids instances need; InputError if `vocab_file` lacks [MASK]."""
    if "[MASK]" not in vocab:
        raise InputError(f"{vocab_file}: vocab lacks [MASK]")
    continues = np.zeros(max(vocab.values()) + 1, bool)
    for token, index in vocab.items():
        continues[index] = token.startswith("##")
    return SpecialIds(cls=vocab["[CLS]"], sep=vocab["[SEP]"], mask=vocab["[MASK]"],
                      vocab_size=len(continues), continues_word=continues)


def _tokenize_chunk(tokenizer: PythonTokenizer, documents: list[list[str]]) -> TokenizedChunk:
    """Tokenises every line of the chunk at once; empty sentences and documents are dropped."""
    ids, line_ends = tokenizer.tokenize_flat([line for document in documents
                                              for line in document])
    line_lengths = np.diff(line_ends, prepend=0)
    kept = line_lengths > 0
    # Each document's kept sentences, counted; a document with none is no document.
    document_of_line = np.repeat(np.arange(len(documents)), [len(d) for d in documents])
    sentences_per_document = np.bincount(document_of_line[kept], minlength=len(documents))
    counts = sentences_per_document[sentences_per_document > 0]
    return TokenizedChunk(ids=ids, sentence_starts=np.concatenate([[0], line_ends[kept]]),
                          doc_starts=np.concatenate([[0], np.cumsum(counts)]).astype(np.int64))


def chunks(ranges, read_stats, chunk_bytes: int) -> Iterator[tuple[list[list[str]], int]]:
    """Groups the documents of `ranges` into chunks of about chunk_bytes: (documents, bytes)."""
    documents, size = [], 0
    for document in corpus_shards.iter_documents(ranges, read_stats):
        documents.append(document)
        size += sum(len(line) + 1 for line in document) + 1
        if size >= chunk_bytes:
            yield documents, size
            documents, size = [], 0
    if documents:
        yield documents, size


def _batch_stats(batch: InstanceBatch, options: PretrainingDataOptions) -> ShardStats:
    lengths = batch.input_mask.sum(axis=1)
    bucket = max(options.max_seq_length // 8, 1)
    starts, counts = np.unique((lengths // bucket) * bucket, return_counts=True)
    special = 2 if options.objective == "none" else 3
    return ShardStats(
        instances=len(lengths), tokens=int(lengths.sum()),
        candidate_tokens=int(lengths.sum()) - special * len(lengths),
        masked=int(batch.masked_lm_weights.sum()),
        replaced_with_mask=batch.replaced_with_mask, kept=batch.kept,
        replaced_with_random=batch.replaced_with_random,
        second_sentence_label_1=int(batch.next_sentence_labels.sum()),
        length_histogram={int(s): int(c) for s, c in zip(starts, counts)})


class ChunkProcessor:
    """Turns chunks of documents into serialised records: tokenise, build, mask, serialise.

    Shared by the process-pool generator here and the Beam pipeline (beam_pipeline.py), so the
    two make instances the same way.
    """

    def __init__(self, tokenizer: PythonTokenizer, options: PretrainingDataOptions):
        self.tokenizer = tokenizer
        self.options = options
        self.special = special_ids(tokenizer.vocab, tokenizer.vocab_file)
        self.features = INT_FEATURES + FLOAT_FEATURES
        self.serializer = ExampleSerializer(list(INT_FEATURES), list(FLOAT_FEATURES))

    def records(self, documents: list[list[str]], seed: list[int]) -> tuple[Iterator[bytes],
                                                                             ShardStats]:
        """The chunk's records (an iterator, made as they are taken) and counts; `seed` (e.g.
        [random_seed, shard, chunk]) seeds it."""
        chunk = _tokenize_chunk(self.tokenizer, documents)
        if not chunk.num_documents:
            return iter(()), ShardStats()
        batch = build_instances(chunk, self.options, self.special, np.random.default_rng(seed))
        records = self.serializer.records({k: getattr(batch, k) for k in self.features})
        stats = _batch_stats(batch, self.options)
        stats.documents = chunk.num_documents
        return records, stats


def make_shard(shard: int, ranges, output_dir: str, num_shards: int, tokenizer: PythonTokenizer,
               options: PretrainingDataOptions, chunk_bytes: int = CHUNK_BYTES,
               progress=None) -> ShardStats:
    """Writes one shard file from its byte ranges; returns its counts."""
    processor = ChunkProcessor(tokenizer, options)
    read_stats = corpus_shards.ReadStats()
    stats = ShardStats()
    with atomic_path(shard_path(output_dir, shard, num_shards)) as tmp_path:
        with open(tmp_path, "wb") as file:
            for chunk_index, (documents, size) in enumerate(
                    chunks(ranges, read_stats, chunk_bytes)):
                records, chunk_stats = processor.records(
                    documents, [options.random_seed, shard, chunk_index])
                write_records(file, records)
                chunk_stats.input_bytes = size
                stats.add(chunk_stats)
                if progress is not None:
                    progress(chunk_stats)
    stats.invalid_utf8 = dict(read_stats.invalid_utf8)
    return stats


class _Progress:
    """A progress line every few seconds: MB done, documents/s, instances/s, ETA (rewritten in
    place on a terminal, plain lines in a log; official/console.py)."""

    def __init__(self, total_bytes: int, interval: float = 2.0):
        self.total_bytes, self.interval = total_bytes, interval
        self.done = ShardStats()
        self.start = self.last = time.monotonic()

    def update(self, chunk: ShardStats, final: bool = False) -> None:
        self.done.add(chunk)
        now = time.monotonic()
        if not final and now - self.last < self.interval:
            return
        self.last = now
        elapsed = max(now - self.start, 1e-9)
        rate = self.done.input_bytes / elapsed
        eta = (self.total_bytes - self.done.input_bytes) / rate if rate else float("inf")
        logging.info("%.1f/%.1f MB, %.0f documents/s, %.0f instances/s, %s %.0f s",
                     self.done.input_bytes / 1e6, self.total_bytes / 1e6,
                     self.done.documents / elapsed, self.done.instances / elapsed,
                     "done in" if final else "ETA", elapsed if final else eta,
                     extra=console.PROGRESS)


def generate(input_files: list[str], output_dir: str, vocab_file: str, do_lower_case: bool,
             options: PretrainingDataOptions, num_shards: int = 1, num_workers: int = 1,
             chunk_bytes: int = CHUNK_BYTES) -> dict:
    """Writes `num_shards` TFRecord files and `summary.json` to `output_dir`; returns the summary.

    The output depends on the corpus, `options`, `num_shards` and `chunk_bytes`, never on
    `num_workers`. The shards are made in min(num_workers, num_shards) worker processes, or in
    this process when that is one. What an earlier run left in `output_dir` (summary.json,
    shards) is removed once the inputs have been checked, before any work.

    Raises:
      InputError: a corpus with no document, or a vocab without [MASK].
      VocabError: an unusable vocab file.
    """
    if num_shards < 1 or num_workers < 1:
        raise InputError(f"num_shards and num_workers must be positive, got {num_shards} and "
                         f"{num_workers}")
    special_ids(load_vocab(vocab_file), vocab_file)  # Fail on a bad vocab before any work.
    tokenizer = PythonTokenizer(vocab_file, do_lower_case)  # forked workers share its tables
    corpus_shards.check_has_text(input_files)  # An empty corpus must not cost the earlier output.
    plan = corpus_shards.plan_shards(input_files, num_shards)
    total_bytes = sum(os.path.getsize(path) for path in input_files)
    os.makedirs(output_dir, exist_ok=True)
    remove_earlier_output(output_dir)
    progress = _Progress(total_bytes)
    stats = ShardStats()
    if min(num_workers, num_shards) == 1:
        for shard in range(num_shards):
            stats.add(make_shard(shard, plan[shard], output_dir, num_shards, tokenizer, options,
                                 chunk_bytes, progress=progress.update))
    else:
        stats = _generate_in_workers(plan, output_dir, num_shards, tokenizer, options,
                                     chunk_bytes, num_workers, progress)
    progress.update(ShardStats(), final=True)
    if not stats.documents:
        for shard in range(num_shards):
            os.unlink(shard_path(output_dir, shard, num_shards))
        raise InputError(f"{', '.join(input_files)}: no document with any text")
    for path, count in sorted(stats.invalid_utf8.items()):
        logging.warning("%s: %d bytes were not UTF-8 and were replaced", path, count)
    summary = summary_dict(stats, options, input_files, num_shards,
                           time.monotonic() - progress.start)
    write_summary(output_dir, summary)
    return summary


def remove_earlier_output(output_dir: str) -> None:
    """Deletes an earlier run's output from `output_dir`, so that it never mixes two runs.

    summary.json goes first, so a folder this is interrupted in is visibly incomplete; then every
    shard (any run's num_shards: names matching SHARD_NAME only) and the temp shards a killed run
    left. Other files are never touched. Logs one line when there was an earlier output.
    """
    summary = os.path.join(output_dir, SUMMARY_FILE)
    had_summary = os.path.isfile(summary)
    if had_summary:
        os.unlink(summary)
    shards = sorted(name for name in os.listdir(output_dir) if SHARD_NAME.fullmatch(name))
    for name in shards:
        os.unlink(os.path.join(output_dir, name))
    remove_temp_shards(output_dir)
    if had_summary or shards:
        logging.info("%s: removed the earlier run's output (%s%d shard files) before writing "
                     "this run's", output_dir, f"{SUMMARY_FILE} and " if had_summary else "",
                     len(shards))


def remove_temp_shards(output_dir: str) -> None:
    """Deletes temp shards a killed run left (a clean failure deletes its own), or a killed
    Beam worker whose shard a retry made again (beam_pipeline.py)."""
    for name in os.listdir(output_dir):
        if name.startswith(".pretraining-") and name.endswith(TEMP_SUFFIX):
            os.unlink(os.path.join(output_dir, name))


# Worker processes. Not a multiprocessing.Pool: a pool cannot always be stopped, since its
# terminate() waits for a lock that a worker killed while waiting for work may hold. Here each
# worker claims the next shard from a shared counter and reports through one queue; stopping is
# killing the processes, which nothing waits on.

def _generate_in_workers(plan, output_dir, num_shards, tokenizer, options, chunk_bytes,
                         num_workers, progress) -> ShardStats:
    """Makes the shards in min(num_workers, num_shards) processes; returns their summed counts.

    On any exception (a worker's failure, or the entry point's stop on SIGTERM or ctrl-C) the
    workers are killed and waited for, and their temp files deleted, before it propagates.
    """
    # Forking is cheap and shares the tokenizer's tables, but a child forked from a process that
    # has loaded TensorFlow inherits its threads in an undefined state; the command line never
    # loads it, a test process may.
    method = "spawn" if "tensorflow" in sys.modules else "fork"
    context = multiprocessing.get_context(method)
    messages = context.Queue()
    next_shard = context.Value("q", 0)
    args = (os.getpid(), tokenizer, output_dir, num_shards, options, chunk_bytes, plan,
            next_shard, messages)
    workers: list = []
    stats, done = ShardStats(), 0
    try:
        with _stop_signals_blocked():  # Each worker unblocks them once its handlers are set.
            for _ in range(min(num_workers, num_shards)):
                workers.append(context.Process(target=_run_worker, args=args, daemon=True))
                workers[-1].start()
        while done < num_shards:
            try:
                kind, *payload = messages.get(timeout=0.5)
            except queue_lib.Empty:
                _check_workers(workers, messages)
                continue
            if kind == "chunk":
                progress.update(payload[0])
            elif kind == "shard":
                stats.add(payload[0])
                done += 1
            else:  # "failed": the worker's exception, with its traceback as a note
                error, worker_traceback = payload
                error.add_note(f"in a worker process:\n{worker_traceback}")
                raise error
        for worker in workers:
            worker.join()
    except BaseException:
        for worker in workers:
            worker.kill()
        for worker in workers:
            worker.join()
        remove_temp_shards(output_dir)
        raise
    return stats


def _check_workers(workers, messages) -> None:
    """Raises RuntimeError when a worker died, or all ended with shards left (nothing queued)."""
    # Exit codes first, then the queue: a worker's messages are in the pipe before it exits.
    died = [w for w in workers if w.exitcode not in (None, 0)]
    ended = all(w.exitcode is not None for w in workers)
    if (died or ended) and messages.empty():
        detail = (f"worker pid {died[0].pid} ended with exit status {died[0].exitcode}" if died
                  else "the workers ended")
        raise RuntimeError(f"{detail} before every shard was made")


def _run_worker(coordinator_pid, tokenizer, output_dir, num_shards, options, chunk_bytes, plan,
                next_shard, messages) -> None:
    """A worker process: claims shards until none is left, reporting each chunk's and shard's
    counts, or its exception, through `messages`."""
    # The stop signals arrive blocked (the coordinator blocks them while starting workers), so
    # the coordinator's handlers, which a forked child inherits, never run here. Ctrl-C reaches
    # the whole process group: the coordinator stops the workers, so they ignore it. SIGTERM is
    # the default (die at once, without a traceback).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    # Killed with the coordinator (SIGKILL, a crash): no worker goes on writing shards after the
    # command has ended (official/parent_death.py; Linux only).
    parent_death.die_with(coordinator_pid, signal.SIGKILL)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOP_SIGNALS)
    try:
        while True:
            with next_shard.get_lock():
                shard = next_shard.value
                next_shard.value += 1
            if shard >= num_shards:
                return
            stats = make_shard(shard, plan[shard], output_dir, num_shards, tokenizer, options,
                               chunk_bytes, progress=lambda chunk: messages.put(("chunk", chunk)))
            messages.put(("shard", stats))
    except Exception as e:  # Reported by the coordinator, which stops the others.
        try:
            pickle.dumps(e)
        except Exception:
            e = RuntimeError(f"{type(e).__name__}: {e}")
        messages.put(("failed", e, traceback.format_exc()))


@contextlib.contextmanager
def _stop_signals_blocked():
    """SIGINT and SIGTERM held back (delivered on exit) in this thread and the processes it
    starts, where the platform can block signals."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def summary_dict(stats: ShardStats, options: PretrainingDataOptions, input_files: list[str],
                 num_shards: int, seconds: float) -> dict:
    """The contents of `summary.json`; shared with the Beam pipeline so both describe alike."""
    predictions = max(stats.masked, 1)
    return {
        "options": dataclasses.asdict(options),
        "input_files": input_files,
        "input_bytes": stats.input_bytes,
        "num_shards": num_shards,
        "documents": stats.documents,
        "instances": stats.instances,
        "tokens": stats.tokens,
        "masked_tokens": stats.masked,
        "fraction_masked": stats.masked / max(stats.candidate_tokens, 1),
        "masking_split": {"mask": stats.replaced_with_mask / predictions,
                          "kept": stats.kept / predictions,
                          "random": stats.replaced_with_random / predictions},
        "second_sentence_label_1_fraction": stats.second_sentence_label_1
        / max(stats.instances, 1),
        "length_histogram": {str(k): v for k, v in sorted(stats.length_histogram.items())},
        "invalid_utf8_bytes": stats.invalid_utf8,
        "seconds": round(seconds, 2),
    }
