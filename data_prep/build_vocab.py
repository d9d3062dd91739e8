"""Text files -> a WordPiece vocab.txt for BERT (the learning is in data_prep/wordpiece_vocab.py).

    python -m data_prep.build_vocab --input_file='corpus/*.txt' --vocab_size=30522 \\
        --output_file=vocab.txt [--nodo_lower_case]

Input: the pretraining format, one sentence per line (blank lines are skipped). The file appears
only when complete. Bad input (a glob matching nothing, no words, a --vocab_size too small for the
special tokens and characters) ends the run with one line on stderr and exit status 1.
"""

import sys

from absl import app
from absl import flags

from data_prep.corpus_shards import expand_input_files
from data_prep.input_errors import InputError
from data_prep.wordpiece_vocab import build_vocab

flags.DEFINE_string("input_file", None,
                    "Input raw text file, or a comma-separated list of files and globs.")
flags.DEFINE_string("output_file", None, "The vocab file to write, one token per line.")
flags.DEFINE_integer("vocab_size", 30522, "The most tokens the vocab may hold.")
flags.DEFINE_bool("do_lower_case", True,
                  "Whether to lower case the input text. True for uncased models.")
FLAGS = flags.FLAGS


def main(argv: list[str]) -> int:
    try:
        if len(argv) > 1:
            raise InputError(f"{argv[1]}: unexpected argument")
        for name in ("input_file", "output_file"):
            if not FLAGS[name].value:
                raise InputError(f"--{name}: required")
        vocab = build_vocab(expand_input_files(FLAGS.input_file), FLAGS.output_file,
                            FLAGS.vocab_size, FLAGS.do_lower_case)
    except InputError as e:
        print(f"build_vocab: {e}", file=sys.stderr)
        return 1
    print(f"build_vocab: wrote {len(vocab)} tokens to {FLAGS.output_file}")
    return 0


if __name__ == "__main__":
    app.run(main)
