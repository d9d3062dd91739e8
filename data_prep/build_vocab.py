"""Text files -> a WordPiece vocab.txt for BERT (the learning is in data_prep/wordpiece_vocab.py).

    python -m data_prep.build_vocab --input_file='corpus/*.txt' --vocab_size=30522 \\
        --output_file=vocab.txt [--nodo_lower_case] [--min_piece_count=10]

Input: the pretraining format, one sentence per line (blank lines are skipped). The file appears
only when complete. Bad input (a glob matching nothing, no words, a --vocab_size too small for the
special tokens and characters, an --output_file that cannot be written) ends the run with one
line on stderr and exit status 1; the output place is checked before any input is read.

The last line says how many tokens were written, and, when fewer than --vocab_size, why: a small
corpus has too few pieces seen --min_piece_count times or more (wordpiece_vocab.py).
"""

from absl import flags, logging

from data_prep.corpus_shards import expand_input_files
from data_prep.input_errors import InputError
from official import command_line
from official.output_paths import check_output_file

# The learner's default; repeated here so that --help loads no TensorFlow (the module that
# defines it does). A test checks that the two agree.
_DEFAULT_MIN_PIECE_COUNT = 10

flags.DEFINE_string("input_file", None,
                    "Input raw text file, or a comma-separated list of files and globs.")
flags.DEFINE_string("output_file", None, "The vocab file to write, one token per line.")
flags.DEFINE_integer("vocab_size", 30522, "The most tokens the vocab may hold.")
flags.DEFINE_bool("do_lower_case", True,
                  "Whether to lower case the input text. True for uncased models.")
flags.DEFINE_integer("min_piece_count", _DEFAULT_MIN_PIECE_COUNT,
                     "The lowest count threshold the learner tries: pieces seen fewer times "
                     "stay out even when --vocab_size has room (its search may end one below "
                     "this). tensorflow-text's lower_thresh. Lower it for a larger vocab from a "
                     "small corpus; rare pieces are poorly trained.")
FLAGS = flags.FLAGS


def prepare() -> list[str]:
    """The flags and the output place checked; the input files."""
    for name in ("input_file", "output_file"):
        if not FLAGS[name].value:
            raise InputError(f"--{name}: required")
    if FLAGS.min_piece_count < 1:
        raise InputError(f"--min_piece_count={FLAGS.min_piece_count}: must be at least 1")
    check_output_file(FLAGS.output_file, "output_file")
    return expand_input_files(FLAGS.input_file)


def job(input_files: list[str]) -> None:
    from data_prep.wordpiece_vocab import build_vocab
    learned = build_vocab(input_files, FLAGS.output_file, FLAGS.vocab_size,
                          FLAGS.do_lower_case, FLAGS.min_piece_count)
    why = learned.shortfall(FLAGS.vocab_size, FLAGS.min_piece_count)
    logging.info("wrote %d tokens to %s%s", len(learned.tokens), FLAGS.output_file,
                 f", fewer than --vocab_size={FLAGS.vocab_size}: {why}" if why else "")


if __name__ == "__main__":
    # TensorFlow (the tokenizer's word splits) loads only once the flags are known to be usable,
    # its C++ start-up notes held back.
    command_line.main("build_vocab", prepare, job, left=lambda: f"{FLAGS.output_file} not "
                      "written; rerunning the same command finishes the job")
