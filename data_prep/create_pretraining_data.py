"""Text files -> BERT pretraining TFRecords, with the original's flags and defaults.

Two generators behind one set of flags:
  --reproduce_original  google-research/bert's algorithm in one process, writing record for record
                        what the original writes for the same flags and seed, round-robin over the
                        comma list --output_file (data_prep/original_instances.py).
  (default)             the fast generator: --num_shards files in --output_dir, made by
                        --num_workers processes (data_prep/fast_generation.py), or with
                        --runner by an Apache Beam pipeline (data_prep/beam_pipeline.py),
                        e.g. on a Dask cluster: --runner=DaskRunner --dask_address=tcp://HOST:8786.

Usage (a command line, not a doctest):
  python -m data_prep.create_pretraining_data --reproduce_original \\
      --input_file='corpus/*.txt' --output_file=/tmp/pretraining.tfrecord \\
      --vocab_file=data/vocab/uncased_vocab.txt --max_seq_length=128 --dupe_factor=5

Bad input (a glob matching nothing, no documents, an unusable vocab, an option out of range, an
output place that cannot be written) ends the run before anything is written, with one line on
stderr and exit status 1; the output places are checked before any input is read.

A rerun replaces the earlier output: the fast generator first removes the summary.json and shards
an earlier run left in --output_dir (data_prep/fast_generation.py). SIGTERM or ctrl-C stops the
run, its workers with it, leaving no temp file: one line, exit status 143 or 130 (128 + the
signal), and rerunning the same command finishes the job. Log lines are plain messages, the
progress line rewritten in place on a terminal, TensorFlow's C++ notes held back unless
--verbosity=1 (official/console.py).
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import sys
from typing import Callable, NamedTuple

from absl import flags, logging

from data_prep.pretraining_options import PretrainingDataOptions
from official import command_line, console, settings_parsing
from official.atomic_files import TEMP_SUFFIX
from official.output_paths import check_output_dir, check_output_file
from official.pretraining_shards import SUMMARY_FILE

_DEFAULTS = PretrainingDataOptions()

flags.DEFINE_string("input_file", None,
                    "Input raw text file, or a comma-separated list of files and globs.")
flags.DEFINE_string("output_file", None,
                    "Output TFRecord file, or a comma-separated list of files (with "
                    "--reproduce_original).")
flags.DEFINE_string("vocab_file", None, "The vocabulary file that the BERT model was trained on.")
flags.DEFINE_bool("do_lower_case", True,
                  "Whether to lower case the input text. True for uncased models.")
flags.DEFINE_bool("do_whole_word_mask", _DEFAULTS.do_whole_word_mask,
                  "Whether to mask all of a word's WordPieces together rather than each alone.")
flags.DEFINE_integer("max_seq_length", _DEFAULTS.max_seq_length, "Maximum sequence length.")
flags.DEFINE_integer("max_predictions_per_seq", _DEFAULTS.max_predictions_per_seq,
                     "Maximum number of masked LM predictions per sequence.")
flags.DEFINE_integer("random_seed", _DEFAULTS.random_seed, "Random seed for data generation.")
flags.DEFINE_integer("dupe_factor", _DEFAULTS.dupe_factor,
                     "Number of times to duplicate the input data (with different masks).")
flags.DEFINE_float("masked_lm_prob", _DEFAULTS.masked_lm_prob, "Masked LM probability.")
flags.DEFINE_float("short_seq_prob", _DEFAULTS.short_seq_prob,
                   "Probability of creating sequences which are shorter than the maximum length.")
flags.DEFINE_bool("reproduce_original", False,
                  "Make exactly the original's records (single process, all in memory) instead "
                  "of using the fast generator.")
flags.DEFINE_string("objective", _DEFAULTS.objective,
                    "Second-sentence task: nsp (BERT), sop (ALBERT) or none (RoBERTa). Only nsp "
                    "with --reproduce_original.")
flags.DEFINE_string("masking_mix", ",".join(map(str, _DEFAULTS.masking_mix)),
                    "MASK,SAME,RANDOM: the shares of the masked-LM predictions shown as [MASK], "
                    "as the same token, or as a random token; three non-negative numbers summing "
                    "to 1 (the BERT paper's Table 8 compares mixes). Only the original's "
                    "0.8,0.1,0.1 with --reproduce_original.")
flags.DEFINE_string("output_dir", None,
                    "Folder for the fast generator's shards and summary.json. A run replaces "
                    "the shards and summary.json an earlier run left there; other files stay.")
flags.DEFINE_integer("num_shards", 1, "Output files of the fast generator.")
flags.DEFINE_integer("num_workers", 1,
                     "Worker processes of the fast generator (at most --num_shards are started).")
flags.DEFINE_string("runner", None,
                    "Run the fast generator as an Apache Beam pipeline on this runner "
                    "(DirectRunner, DaskRunner, FlinkRunner, SparkRunner, DataflowRunner) instead "
                    "of local worker processes; the same files (data_prep/beam_pipeline.py).")
flags.DEFINE_string("dask_address", None,
                    "With --runner=DaskRunner: the Dask scheduler's address, e.g. "
                    "tcp://HOST:8786, whose workers make the shards; without it, a LocalCluster "
                    "of worker processes on this machine.")
flags.DEFINE_string("beam_pipeline_options", "",
                    "Further Beam flags for --runner, space-separated, e.g. "
                    "'--flink_master=HOST:8081 --environment_type=DOCKER'.")

FLAGS = flags.FLAGS


class _FlagError(ValueError):
    """A flag is missing or unusable; the message names it."""


class _Stopped(BaseException):
    """SIGTERM or SIGINT arrived. A BaseException, as KeyboardInterrupt is, so that no library's
    `except Exception` takes it for a failure; the generators clean up on any exception."""


class _StopOnSignals:
    """What the first SIGTERM or SIGINT does (a second one is ignored: it must not cut short
    the cleanup the first one starts).

    While this process runs only its own Python code (the fast generator's coordinator, whose
    workers do the TensorFlow work), it raises _Stopped, and the generator kills its workers
    and deletes their temp files on the way up. Once `exit_at_once(cleanup)` has been called,
    this process runs TensorFlow's code itself (--reproduce_original), where an exception
    raised by a signal handler may surface inside TensorFlow's C++ callbacks as a SystemError
    with a traceback, or waits on a Beam runner's threads (a Dask client's); so the handler
    calls `cleanup()` (deleting temp files), writes the one line and exits there, without
    unwinding.
    """

    def __init__(self, stopped_message: Callable[[int], str]):
        self.signum: int | None = None
        self._message = stopped_message
        self._cleanup: Callable[[], None] | None = None
        # The real stderr, kept: import_tensorflow_quietly points fd 2 elsewhere for a while.
        self._stderr = os.dup(2)
        for stop_signal in (signal.SIGINT, signal.SIGTERM):
            signal.signal(stop_signal, self._stop)

    def exit_at_once(self, cleanup: Callable[[], None]) -> None:
        self._cleanup = cleanup

    def _stop(self, signum, frame) -> None:
        for stop_signal in (signal.SIGINT, signal.SIGTERM):
            signal.signal(stop_signal, signal.SIG_IGN)
        self.signum = signum
        console.quiet_after_error()  # Libraries log the exception on its way up (Beam does).
        if self._cleanup is None:
            raise _Stopped(signal.Signals(signum).name)
        with contextlib.suppress(OSError):  # Best effort: a rerun deletes what stays.
            self._cleanup()
        os.write(self._stderr, f"create_pretraining_data: {self._message(signum)}\n".encode())
        os._exit(128 + signum)


def _remove_temp_files_of(paths: list[str]) -> None:
    """Deletes the temp files official/atomic_files.py writes for `paths` (".NAME.<uuid>.tmp"
    beside each), where a stopped --reproduce_original leaves them."""
    for path in paths:
        folder, name = os.path.split(os.path.abspath(path))
        temp = re.compile(re.escape(f".{name}.") + "[0-9a-f]{32}" + re.escape(TEMP_SUFFIX))
        with contextlib.suppress(OSError):
            for found in os.listdir(folder):
                if temp.fullmatch(found):
                    os.unlink(os.path.join(folder, found))


class Plan(NamedTuple):
    """What the flags say, checked."""
    options: PretrainingDataOptions
    output_files: list[str]  # --reproduce_original's


def prepare() -> Plan:
    """Every flag checked, and where the output goes, before any input is read: a place that
    cannot be written would otherwise fail at the first write, after all the work."""
    output_files = [path for path in (FLAGS.output_file or "").split(",") if path]
    options = _options_from_flags()
    if FLAGS.reproduce_original:
        options.check_original()
    for name, given in (("input_file", FLAGS.input_file), ("vocab_file", FLAGS.vocab_file),
                        ("output_file", output_files) if FLAGS.reproduce_original
                        else ("output_dir", FLAGS.output_dir)):
        if not given:
            raise _FlagError(f"--{name}: required")
    for name in ("num_shards", "num_workers"):
        if FLAGS[name].value < 1:
            raise _FlagError(f"--{name}={FLAGS[name].value}: must be at least 1")
    if FLAGS.dask_address and FLAGS.runner != "DaskRunner":
        raise _FlagError("--dask_address: only with --runner=DaskRunner")
    if FLAGS.reproduce_original:
        for path in output_files:
            check_output_file(path, "output_file")
    else:
        check_output_dir(FLAGS.output_dir, "output_dir")
    return Plan(options, output_files)


def job(plan: Plan) -> None:
    """Generates; a stop by SIGTERM or ctrl-C ends here in its own line (`_StopOnSignals`)."""

    def stopped_message(signum: int) -> str:
        where = (f"{', '.join(plan.output_files)} not written" if FLAGS.reproduce_original
                 else f"{FLAGS.output_dir} is incomplete (no {SUMMARY_FILE})")
        return (f"stopped by {signal.Signals(signum).name}: {where}; rerunning the same command "
                f"finishes the job")

    stop = _StopOnSignals(stopped_message)
    try:
        _generate(plan.options, plan.output_files, stop)
    except BaseException:
        if stop.signum is not None:  # Whatever the stop became on its way up.
            command_line.fail("create_pretraining_data", stopped_message(stop.signum),
                              128 + stop.signum)
        raise


def _generate(options: PretrainingDataOptions, output_files: list[str],
              stop: _StopOnSignals) -> None:
    # Generators are imported once the flags are known to be usable: TensorFlow takes seconds to
    # start, and a mistyped flag should be reported at once. The fast generator's coordinating
    # process never loads TensorFlow; its workers do.
    if FLAGS.reproduce_original:
        stop.exit_at_once(lambda: _remove_temp_files_of(output_files))
        console.import_tensorflow_quietly(sys.argv)
        from data_prep import original_instances
        from official.text.tokenizer import FullTokenizer
        input_files = original_instances.expand_input_files(FLAGS.input_file)
        tokenizer = FullTokenizer(FLAGS.vocab_file, FLAGS.do_lower_case)
        logging.info("Reading %d input file(s): --reproduce_original holds the corpus in memory "
                     "and works in one process", len(input_files))
        count = original_instances.generate(input_files, output_files, tokenizer, options)
        logging.info("Wrote %d instances to %s", count, ", ".join(output_files))
        return
    # Globs expand in sorted order here (not the original's directory order), so the fast
    # generator's output depends on the corpus alone.
    from data_prep import corpus_shards
    input_files = corpus_shards.expand_input_files(FLAGS.input_file)
    if FLAGS.runner:
        # The pipeline never loads TensorFlow: its workers frame the TFRecords themselves.
        from data_prep import beam_pipeline
        stop.exit_at_once(lambda: beam_pipeline.remove_temp_files(FLAGS.output_dir))
        beam_pipeline.run_beam(
            input_files, FLAGS.output_dir, FLAGS.vocab_file, FLAGS.do_lower_case, options,
            FLAGS.num_shards, pipeline_args=[
                f"--runner={FLAGS.runner}",
                *([f"--dask_client_address={FLAGS.dask_address}"] if FLAGS.dask_address else []),
                *FLAGS.beam_pipeline_options.split()])
    else:
        from data_prep import fast_generation
        fast_generation.generate(input_files, FLAGS.output_dir, FLAGS.vocab_file,
                                 FLAGS.do_lower_case, options, num_shards=FLAGS.num_shards,
                                 num_workers=FLAGS.num_workers)


def _options_from_flags() -> PretrainingDataOptions:
    try:
        masking_mix = settings_parsing.shares(FLAGS.masking_mix, "--masking_mix", 3)
    except ValueError as e:
        raise _FlagError(str(e)) from None
    return PretrainingDataOptions(
        max_seq_length=FLAGS.max_seq_length,
        max_predictions_per_seq=FLAGS.max_predictions_per_seq,
        masked_lm_prob=FLAGS.masked_lm_prob,
        short_seq_prob=FLAGS.short_seq_prob,
        dupe_factor=FLAGS.dupe_factor,
        random_seed=FLAGS.random_seed,
        do_whole_word_mask=FLAGS.do_whole_word_mask,
        objective=FLAGS.objective,
        masking_mix=masking_mix)


if __name__ == "__main__":
    # The fast generator's coordinating process never loads TensorFlow (_generate).
    command_line.main("create_pretraining_data", prepare, job, tensorflow=False)
