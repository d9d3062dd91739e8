r"""The word-piece overlap of languages under one vocab (data_prep/piece_overlap.py): per
language its piece tokens, piece types and [UNK] share; per pair the shared piece types, their
Jaccard overlap (Wu & Dredze 2019) and how much of each language's text the other's pieces cover.

    python -m data_prep.wordpiece_overlap --vocab_file=vocab.txt --nodo_lower_case \
        --languages='en=text/en/*.txt*,de=text/de/*.txt*,es=text/es/*.txt*' \
        [--max_lines=100000] [--output_file=overlap.json]

prints a table and, with --output_file, writes the same as JSON. Files may be gzip-compressed
(.gz). No TensorFlow is loaded. Bad input (a glob matching nothing, a vocab that is not one, a
language given twice, fewer than two languages, an --output_file that cannot be written) is one
line on stderr, exit status 1, nothing written.
"""

import dataclasses
import itertools
import json

from absl import flags

from data_prep.corpus_shards import expand_input_files
from data_prep.input_errors import InputError, utf8_lines
from data_prep.piece_overlap import overlaps, piece_counts
from official import command_line, settings_parsing
from official.atomic_files import open_atomically
from official.output_paths import check_output_file
from official.text.python_tokenizer import PythonTokenizer

flags.DEFINE_string("vocab_file", None, "The WordPiece vocab the languages share.")
flags.DEFINE_bool("do_lower_case", False, "Lower-case the text (an uncased vocab); "
                  "multilingual vocabs are cased, as mBERT's recommended one.")
flags.DEFINE_string("languages", None, "language=files pairs, comma-separated; files is a glob.")
flags.DEFINE_integer("max_lines", None, "Read at most this many non-blank lines per language "
                     "(default: all).")
flags.DEFINE_string("output_file", None, "Also write the figures as JSON here.")
FLAGS = flags.FLAGS


def prepare() -> tuple[PythonTokenizer, dict[str, list[str]]]:
    for name in ("vocab_file", "languages"):
        if not FLAGS[name].value:
            raise InputError(f"--{name}: required")
    if FLAGS.max_lines is not None and FLAGS.max_lines < 1:
        raise InputError(f"--max_lines={FLAGS.max_lines}: must be at least 1")
    files = {language: expand_input_files(pattern) for language, pattern
             in settings_parsing.named_values(FLAGS.languages, "--languages").items()}
    if len(files) < 2:
        raise InputError(f"--languages={FLAGS.languages}: an overlap needs two languages or more")
    if FLAGS.output_file:
        check_output_file(FLAGS.output_file, "output_file")
    return PythonTokenizer(FLAGS.vocab_file, FLAGS.do_lower_case), files


def _lines(paths: list[str]):
    lines = (line for path in paths for _, line in utf8_lines(path) if line.strip())
    return itertools.islice(lines, FLAGS.max_lines)


def job(plan: tuple[PythonTokenizer, dict[str, list[str]]]) -> None:
    tokenizer, files = plan
    languages, pairs = overlaps(tokenizer, {language: piece_counts(tokenizer, _lines(paths))
                                            for language, paths in files.items()})
    print("language  piece tokens  piece types  [UNK]")
    for language, found in languages.items():
        print(f"{language:<8}  {found.tokens:>12,}  {found.types:>11,}  {found.unknown_rate:.4f}")
    print("\npair   shared types  jaccard  A covers B  B covers A")
    for (a, b), found in pairs.items():
        print(f"{a}-{b}  {found.shared_types:>12,}  {found.jaccard:.3f}    "
              f"{found.coverage_of_b:.3f}       {found.coverage_of_a:.3f}")
    if FLAGS.output_file:
        with open_atomically(FLAGS.output_file) as f:
            json.dump({"vocab_file": FLAGS.vocab_file,
                       "languages": {k: dataclasses.asdict(v) for k, v in languages.items()},
                       "pairs": {f"{a}-{b}": dataclasses.asdict(v)
                                 for (a, b), v in pairs.items()}}, f, indent=2)
            f.write("\n")


if __name__ == "__main__":
    command_line.main("wordpiece_overlap", prepare, job, tensorflow=False)
