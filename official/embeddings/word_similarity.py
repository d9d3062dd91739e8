"""Word-similarity evaluation: Spearman correlation of cosine similarities with human scores.

A benchmark file (WordSim-353, SimLex-999, MEN, ...) holds one pair a line,
`word1<TAB>word2<TAB>score` (or separated by spaces), with or without a header line: a first
line whose third field is not a number is a header. The score of a pair of vectors is their
cosine similarity (0 when either is all zeros), and a table is scored by Spearman's rank
correlation between those and the human scores, over the pairs whose two words both have a
vector; the other pairs are counted as out of vocabulary (`pairs_oov`), since a score over fewer
pairs is not comparable with one over all of them.

Spearman's rho is Pearson's correlation of the ranks, ties given their average rank (as
scipy.stats.spearmanr computes it; WordSim-353 has tied scores): official/tasks/glue_metrics.py's,
the rule STS-B is scored by; nan when fewer than two pairs are scored or one side is constant.

With `lower_case` (an uncased model's vectors), a benchmark's words are lower-cased before the
look-up: WordSim-353 writes "Jerusalem" and "Israel".

Example (a benchmark of four pairs with a header, and a table of three 2-d vectors as
official/embeddings/static_vectors.py writes it; "zebra" has no vector):
    >>> import os, shutil, tempfile
    >>> from official.embeddings.word2vec_files import read_word2vec
    >>> folder = tempfile.mkdtemp()
    >>> with open(os.path.join(folder, "wordsim.tsv"), "w") as f:
    ...     _ = f.write("Word 1\\tWord 2\\tHuman (mean)\\n"
    ...                 "Tiger\\tcat\\t7.35\\nTiger\\tcar\\t1.2\\n"
    ...                 "cat\\tcar\\t1.5\\ncat\\tzebra\\t4.0\\n")
    >>> with open(os.path.join(folder, "layer_03.txt"), "w") as f:
    ...     _ = f.write("3 2\\ntiger 1 0\\ncat 0.9 0.1\\ncar 0 1\\n")
    >>> pairs = read_pairs(os.path.join(folder, "wordsim.tsv"))
    >>> pairs[0]
    Pair(word1='Tiger', word2='cat', score=7.35)
    >>> result = evaluate(read_word2vec(os.path.join(folder, "layer_03.txt")), pairs,
    ...                   lower_case=True)
    >>> round(result.spearman, 4), result.pairs_scored, result.pairs_oov
    (1.0, 3, 1)
    >>> shutil.rmtree(folder)
"""

from __future__ import annotations

import dataclasses
import math
from typing import Mapping

import numpy as np

from official.tasks import glue_metrics


@dataclasses.dataclass(frozen=True)
class Pair:
    word1: str
    word2: str
    score: float


@dataclasses.dataclass(frozen=True)
class Result:
    spearman: float  # nan when fewer than two pairs are scored
    pairs_scored: int
    pairs_oov: int  # pairs with a word that has no vector

    def to_dict(self) -> dict:
        return {"spearman": None if math.isnan(self.spearman) else self.spearman,
                "pairs_scored": self.pairs_scored, "pairs_oov": self.pairs_oov}


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def read_pairs(path: str) -> list[Pair]:
    """A benchmark file -> its pairs, in order; a malformed line is an error naming it."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except FileNotFoundError:
        raise ValueError(f"{path}: no such word-similarity file") from None
    except UnicodeDecodeError as e:
        raise ValueError(f"{path}: not valid UTF-8 (byte {e.start})") from None
    pairs = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        fields = line.split("\t") if "\t" in line else line.split()
        fields = [f.strip() for f in fields]
        score = _number(fields[2]) if len(fields) >= 3 else None
        if score is None and number == 1 and len(fields) >= 3:
            continue  # the header, e.g. "word1 word2 score"
        if len(fields) < 3 or score is None or not math.isfinite(score) \
                or not fields[0] or not fields[1]:
            raise ValueError(f"{path}: line {number}: expected word1, word2 and a numeric score "
                             f"separated by tabs, got {line!r}")
        pairs.append(Pair(fields[0], fields[1], score))
    if not pairs:
        raise ValueError(f"{path}: no word pair in it")
    return pairs


def spearman(x: np.ndarray, y: np.ndarray) -> float:
    """Spearman's rho of x and y (glue_metrics': average ranks for ties); nan if fewer than two
    values (every pair out of vocabulary, say) or one is constant."""
    if len(x) != len(y):
        raise ValueError(f"spearman: {len(x)} values against {len(y)}")
    if len(x) < 2:
        return float("nan")
    return glue_metrics.spearman(x, y)


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    """Cosine similarity in float64; 0 when either vector is all zeros."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    norms = float(np.linalg.norm(a)) * float(np.linalg.norm(b))
    return float(np.dot(a, b)) / norms if norms > 0 else 0.0


def evaluate(vectors: Mapping[str, np.ndarray], pairs: list[Pair],
             lower_case: bool = False) -> Result:
    """Spearman of cosine similarity against the pairs' scores, over the pairs with vectors."""
    predicted, gold, oov = [], [], 0
    for pair in pairs:
        w1, w2 = (pair.word1.lower(), pair.word2.lower()) if lower_case else \
            (pair.word1, pair.word2)
        if w1 not in vectors or w2 not in vectors:
            oov += 1
            continue
        predicted.append(cosine(vectors[w1], vectors[w2]))
        gold.append(pair.score)
    return Result(spearman(np.array(predicted), np.array(gold)), len(gold), oov)


def evaluate_layers(words: list[str], layers: tuple[int, ...], vectors: np.ndarray,
                    benchmarks: Mapping[str, list[Pair]],
                    lower_case: bool = False) -> dict[int, dict[str, Result]]:
    """Every layer of a table (vectors [words, layers, hidden], as static_vectors' VectorTable)
    on every benchmark: {layer: {benchmark name: Result}}."""
    results = {}
    for j, layer in enumerate(layers):
        table = dict(zip(words, vectors[:, j]))
        results[layer] = {name: evaluate(table, pairs, lower_case)
                          for name, pairs in benchmarks.items()}
    return results


def markdown_table(results: Mapping[str, Mapping[int, Mapping[str, Result]]]) -> str:
    """{method: {layer: {benchmark: Result}}} -> a markdown table, a row per method and layer,
    Spearman and pairs out of vocabulary per benchmark."""
    names = list(dict.fromkeys(name for by_layer in results.values()
                               for by_name in by_layer.values() for name in by_name))
    header = "| method | layer | " + " | ".join(f"{n} Spearman | {n} pairs OOV" for n in names)
    lines = [header + " |", "|---|---:|" + "---:|---:|" * len(names)]
    for method, by_layer in results.items():
        for layer, by_name in by_layer.items():
            cells = []
            for name in names:
                r = by_name.get(name)
                cells += ["", ""] if r is None else [
                    "nan" if math.isnan(r.spearman) else f"{r.spearman:.4f}", str(r.pairs_oov)]
            lines.append(f"| {method} | {layer} | " + " | ".join(cells) + " |")
    return "\n".join(lines)
