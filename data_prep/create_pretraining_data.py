"""Text files -> BERT pretraining TFRecords, with the original's flags and defaults.

Two generators behind one set of flags:
  --reproduce_original  google-research/bert's algorithm in one process, writing record for record
                        what the original writes for the same flags and seed, round-robin over the
                        comma list --output_file (data_prep/original_instances.py).
  (default)             the fast generator: --num_shards files in --output_dir, made by
                        --num_workers processes (data_prep/fast_generation.py), or with
                        --runner by an Apache Beam pipeline (data_prep/beam_pipeline.py).

Example:
  python -m data_prep.create_pretraining_data --reproduce_original \\
      --input_file='corpus/*.txt' --output_file=/tmp/pretraining.tfrecord \\
      --vocab_file=data/vocab/uncased_vocab.txt --max_seq_length=128 --dupe_factor=5

Bad input (a glob matching nothing, no documents, an unusable vocab, an option out of range) ends
the run before anything is written, with one line on stderr and exit status 1.
"""

from __future__ import annotations

import sys

from absl import app
from absl import flags
from absl import logging

from data_prep.input_errors import InputError
from data_prep.pretraining_options import OptionsError, PretrainingDataOptions
from official.text.vocab import VocabError

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
flags.DEFINE_string("output_dir", None, "Folder for the fast generator's shards.")
flags.DEFINE_integer("num_shards", 1, "Output files of the fast generator.")
flags.DEFINE_integer("num_workers", 1,
                     "Processes of the fast generator (at most --num_shards are busy).")
flags.DEFINE_string("runner", None,
                    "Run the fast generator as an Apache Beam pipeline on this runner "
                    "(DirectRunner, FlinkRunner, SparkRunner, DataflowRunner) instead of a local "
                    "process pool; the same records (data_prep/beam_pipeline.py).")
flags.DEFINE_string("beam_pipeline_options", "",
                    "Further Beam flags for --runner, space-separated, e.g. "
                    "'--flink_master=HOST:8081 --environment_type=DOCKER'.")

FLAGS = flags.FLAGS


class _FlagError(ValueError):
    """A flag is missing or unusable; the message names it."""


def main(argv: list[str]) -> int:
    try:
        if len(argv) > 1:
            raise _FlagError(f"{argv[1]}: unexpected argument")
        options = _options_from_flags()
        output_files = [path for path in (FLAGS.output_file or "").split(",") if path]
        for name, given in (("input_file", FLAGS.input_file), ("vocab_file", FLAGS.vocab_file),
                            ("output_file", output_files) if FLAGS.reproduce_original
                            else ("output_dir", FLAGS.output_dir)):
            if not given:
                raise _FlagError(f"--{name}: required")
    except (_FlagError, OptionsError) as e:
        return _fail(e)

    # Generators are imported once the flags are known to be usable: TensorFlow takes seconds to
    # start, and a mistyped flag should be reported at once. The fast generator's coordinating
    # process never loads TensorFlow; its workers do.
    try:
        if FLAGS.reproduce_original:
            from data_prep import original_instances
            from official.text.tokenizer import FullTokenizer
            input_files = original_instances.expand_input_files(FLAGS.input_file)
            tokenizer = FullTokenizer(FLAGS.vocab_file, FLAGS.do_lower_case)
            count = original_instances.generate(input_files, output_files, tokenizer, options)
            logging.info("Wrote %d instances to %s", count, ", ".join(output_files))
        else:
            # Globs expand in sorted order here (not the original's directory order), so the
            # fast generator's output depends on the corpus alone.
            from data_prep import corpus_shards, fast_generation
            input_files = corpus_shards.expand_input_files(FLAGS.input_file)
            if FLAGS.runner:
                from data_prep import beam_pipeline
                beam_pipeline.run_beam(
                    input_files, FLAGS.output_dir, FLAGS.vocab_file, FLAGS.do_lower_case,
                    options, FLAGS.num_shards, pipeline_args=[
                        f"--runner={FLAGS.runner}", *FLAGS.beam_pipeline_options.split()])
            else:
                fast_generation.generate(input_files, FLAGS.output_dir, FLAGS.vocab_file,
                                         FLAGS.do_lower_case, options,
                                         num_shards=FLAGS.num_shards,
                                         num_workers=FLAGS.num_workers)
    except (InputError, OptionsError, VocabError) as e:
        return _fail(e)
    return 0


def _options_from_flags() -> PretrainingDataOptions:
    return PretrainingDataOptions(
        max_seq_length=FLAGS.max_seq_length,
        max_predictions_per_seq=FLAGS.max_predictions_per_seq,
        masked_lm_prob=FLAGS.masked_lm_prob,
        short_seq_prob=FLAGS.short_seq_prob,
        dupe_factor=FLAGS.dupe_factor,
        random_seed=FLAGS.random_seed,
        do_whole_word_mask=FLAGS.do_whole_word_mask,
        objective=FLAGS.objective)


def _fail(error: Exception) -> int:
    print(f"create_pretraining_data: {error}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    app.run(main)
