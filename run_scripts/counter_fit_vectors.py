r"""Counter-fits static word vectors to synonym and antonym lists (Mrkšić et al., NAACL 2016).

    python -m run_scripts.counter_fit_vectors --vectors_file=static/layer_06.txt \
      --synonyms_file=ppdb_synonyms.txt \
      --antonyms_files=ppdb_antonyms.txt,wordnet_antonyms.txt \
      --output_file=static/layer_06.counter_fitted.txt --evaluate=simlex999.tsv

Reads word2vec text vectors (build_static_embeddings' files), pulls each synonym pair together
and pushes each antonym pair apart while keeping every word's close neighbourhood
(official/embeddings/counter_fitting.py: the paper's cost and hyperparameters), and writes the
new unit-length vectors in the same format, the same words in the same order. These are the
candidates TextFooler draws from: `attack_classifier --word_vectors_file=<output_file>`.
The summary line says how many synonym and antonym pairs were used (both words among the
vectors); a list none of whose pairs is usable is refused, as is a nan or inf in the vectors
or a word given two vectors (official/embeddings/word2vec_files.py).
--evaluate scores word-similarity files (word1<TAB>word2<TAB>score) before and after, Spearman
of cosine (the paper's check: SimLex-999 rose from 0.41 to 0.58 for GloVe).
"""

import os
from typing import NamedTuple

from absl import flags, logging

from official import command_line
from official.embeddings import word_similarity
from official.embeddings.counter_fitting_settings import CounterFitting, pair_rows
from official.embeddings.word2vec_files import read_word2vec
from official.output_paths import check_output_file
from official.robustness.candidates import read_word_pairs

flags.DEFINE_string("vectors_file", None, "Word vectors, word2vec text format.")
flags.DEFINE_string("synonyms_file", None, "Synonym pairs, `word1 word2` a line.")
flags.DEFINE_list("antonyms_files", [], "Antonym pairs, the same format.")
flags.DEFINE_string("output_file", None, "The counter-fitted vectors (word2vec text format).")
flags.DEFINE_integer("epochs", 20, "Gradient steps over all the constraints (the paper's 20).")
flags.DEFINE_float("learning_rate", 1.0, "The steps' size.")
flags.DEFINE_list("evaluate", [], "Word-similarity files to score before and after.")
FLAGS = flags.FLAGS


class Plan(NamedTuple):
    """The lists read and checked, the settings, the benchmarks."""
    vectors: dict
    synonyms: list
    antonyms: list
    pairs_used: tuple[int, int]  # synonym and antonym pairs with both words in `vectors`
    settings: CounterFitting
    benchmarks: dict


def prepare() -> Plan:
    """Every check that needs no TensorFlow (official/command_line.py)."""
    settings = CounterFitting(epochs=FLAGS.epochs, learning_rate=FLAGS.learning_rate)
    settings.check()
    vectors = read_word2vec(FLAGS.vectors_file)
    words = list(vectors)
    synonyms = _read_constraints(FLAGS.synonyms_file, words)
    antonyms = [pair for path in FLAGS.antonyms_files for pair in _read_constraints(path, words)]
    benchmarks = {os.path.basename(path): word_similarity.read_pairs(path)
                  for path in FLAGS.evaluate}
    check_output_file(FLAGS.output_file)
    used = (len(pair_rows(words, synonyms)), len(pair_rows(words, antonyms)))
    return Plan(vectors, synonyms, antonyms, used, settings, benchmarks)


def _read_constraints(path: str, words: list[str]) -> list[tuple[str, str]]:
    """The file's pairs, refused if none has two different words both among `words`: a list
    made for other vectors would leave these merely normalised, without a word."""
    pairs = read_word_pairs(path)
    if not len(pair_rows(words, pairs)):
        raise ValueError(f"{path}: none of its {len(pairs)} pairs has two different words both "
                         f"in --vectors_file {FLAGS.vectors_file}")
    return pairs


def job(plan: Plan) -> dict:
    """The vectors fitted and written; returns the benchmarks' scores before and after."""
    import numpy as np

    from official.embeddings.counter_fitting import counter_fit
    from official.embeddings.word2vec_files import write_word2vec_file

    table = plan.vectors
    words = list(table)
    fitted = counter_fit(words, np.stack([table[w] for w in words]), plan.synonyms,
                         plan.antonyms, plan.settings)
    write_word2vec_file(FLAGS.output_file, words, fitted)
    logging.info("Wrote %d counter-fitted vectors to %s: %d synonym and %d antonym pairs used "
                 "(both words among the vectors)", len(words), FLAGS.output_file,
                 *plan.pairs_used)
    scores = {}
    for name, pairs in plan.benchmarks.items():
        before = word_similarity.evaluate(table, pairs, lower_case=True)
        after = word_similarity.evaluate(dict(zip(words, fitted)), pairs, lower_case=True)
        scores[name] = {"before": before.spearman, "after": after.spearman,
                        "pairs": after.pairs_scored, "pairs_oov": after.pairs_oov}
        print(f"{name}: Spearman {before.spearman:.4f} -> {after.spearman:.4f} "
              f"({after.pairs_scored} pairs, {after.pairs_oov} out of vocabulary)")
    return scores


if __name__ == "__main__":
    command_line.main("counter_fit_vectors", prepare, job,
                       required=["vectors_file", "synonyms_file", "output_file"])
