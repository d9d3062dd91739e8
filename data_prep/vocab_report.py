"""How well a vocab fits a text: WordPiece pieces per word, words split, [UNK]s, and the most
fragmented frequent words with their pieces (data_prep/vocab_fit.py).

    python -m data_prep.vocab_report --vocab_file=data/vocab/uncased_vocab.txt \\
        --input_file=chemprot/train.txt --text_field=text [--top_k=20] [--output_file=fit.json]

prints a table and, with --output_file, writes the same as JSON. Run it on the same text with the
vocab extend_vocab wrote to see what the extension changed. No TensorFlow is loaded. Bad input (a
glob matching nothing, a vocab that is not one, a JSON line without --text_field) is one line on
stderr naming the file (and line), exit status 1, nothing written.
"""

import json

from absl import flags

from data_prep.corpus_shards import expand_input_files
from data_prep.domain_text import read_texts
from data_prep.input_errors import InputError
from data_prep.vocab_fit import measure, word_counts
from official import command_line
from official.atomic_files import open_atomically
from official.output_paths import check_output_file
from official.text.python_tokenizer import PythonTokenizer

flags.DEFINE_string("vocab_file", None, "The WordPiece vocab to measure.")
flags.DEFINE_string("input_file", None, "Text files, a comma-separated list of files and globs: "
                    "one text a line, or JSON lines with --text_field.")
flags.DEFINE_string("text_field", None, "Read the input as JSON lines and take this field of "
                    "each as its text (the SciBERT tasks' files: text).")
flags.DEFINE_bool("do_lower_case", True, "Lower-case and strip accents (uncased vocabs).")
flags.DEFINE_integer("top_k", 20, "How many of the most frequent split words to list.")
flags.DEFINE_string("output_file", None, "Also write the figures as JSON here.")
FLAGS = flags.FLAGS


def prepare() -> None:
    """The flags checked, the output place writable, before any text is read."""
    for name in ("vocab_file", "input_file"):
        if not FLAGS[name].value:
            raise InputError(f"--{name}: required")
    if FLAGS.top_k < 0:
        raise InputError(f"--top_k={FLAGS.top_k}: must be at least 0")
    if FLAGS.output_file:
        check_output_file(FLAGS.output_file, "output_file")


def job(_: None) -> None:
    files = expand_input_files(FLAGS.input_file)
    tokenizer = PythonTokenizer(FLAGS.vocab_file, FLAGS.do_lower_case)
    counts = word_counts(tokenizer, read_texts(files, FLAGS.text_field))
    if not counts:
        raise InputError(f"{FLAGS.input_file}: no words")
    fit = measure(tokenizer, counts, FLAGS.top_k)
    if FLAGS.output_file:
        with open_atomically(FLAGS.output_file, "w") as f:
            json.dump(fit.to_json(), f, indent=1, ensure_ascii=False)
    print(fit.table())


if __name__ == "__main__":
    command_line.main("vocab_report", prepare, job, tensorflow=False, left="nothing written")
