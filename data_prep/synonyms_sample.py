r"""How `data/synonyms_sample/` was made: counter-fitting's PPDB synonym pairs for the words of a
text sample, so that the demo and tests can attack a classifier on a fresh clone.

    S=../shared/data/robustness/synonyms
    python -m data_prep.synonyms_sample --synonyms_file=$S/ppdb_synonyms.txt \
      --antonyms_files=$S/ppdb_antonyms.txt,$S/wordnet_antonyms.txt \
      --texts_file=data/gutenberg/authorship/test.tsv \
      --output_file=data/synonyms_sample/synonyms.txt

Keeps a pair (`word1 word2`, lower case) when word1 is a word of --texts_file (its lower-cased
runs of letters) and the two differ, and drops it when either antonym list holds the two words
as a pair (PPDB's automatic paraphrases include some antonyms). Both directions of a pair are in
the source, so each kept word's synonyms are all there. Lines are sorted and unique, so the same
inputs give the same bytes.
"""

from __future__ import annotations

import re

from absl import flags

from data_prep.input_errors import utf8_lines
from official import command_line
from official.atomic_files import open_atomically
from official.robustness.candidates import read_word_pairs

FLAGS = flags.FLAGS


def define_flags() -> None:
    """The entry point's flags; defined when it runs, not on import, so that a process that
    imports this module and another data maker (the tests) meets no flag twice."""
    flags.DEFINE_string("synonyms_file", None, "Synonym pairs, `word1 word2` a line.")
    flags.DEFINE_list("antonyms_files", [], "Antonym pairs in the same format, dropped.")
    flags.DEFINE_string("texts_file", None, "The text whose words' synonyms are kept.")
    flags.DEFINE_string("output_file", None, "The sample's pairs.")
    flags.mark_flags_as_required(["synonyms_file", "texts_file", "output_file"])


def sample(synonyms: list[tuple[str, str]], antonyms: set[frozenset], words: set[str]
           ) -> list[str]:
    """The kept pairs' lines (see the module docstring), sorted."""
    return sorted({f"{a} {b}" for a, b in synonyms
                   if a in words and a != b and frozenset((a, b)) not in antonyms})


def job(_: None) -> None:
    words = {word for _, line in utf8_lines(FLAGS.texts_file)
             for word in re.findall(r"[a-z]+", line.lower())}
    antonyms = {frozenset(pair) for path in FLAGS.antonyms_files for pair in read_word_pairs(path)}
    lines = sample(read_word_pairs(FLAGS.synonyms_file), antonyms, words)
    with open_atomically(FLAGS.output_file) as f:
        f.write("".join(line + "\n" for line in lines))
    print(f"{len(lines)} pairs of {len({line.split()[0] for line in lines})} words "
          f"-> {FLAGS.output_file}")


if __name__ == "__main__":
    define_flags()
    command_line.main("synonyms_sample", lambda: None, job, tensorflow=False)
