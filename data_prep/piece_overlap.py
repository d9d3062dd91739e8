"""How much of a vocab two languages share: the word-piece overlap that Wu & Dredze (2019) and
K et al. (2020) relate to how well a multilingual BERT transfers between them.

Each language's text is cut into pieces by the vocab (`PythonTokenizer`: FullTokenizer's ids;
each distinct word cut once, weighted by its count); a language's pieces are the ids its text
uses, [UNK] left out. For languages A and B:

    shared_types  |pieces(A) & pieces(B)|, the piece types both use
    jaccard       shared_types / |pieces(A) | pieces(B)|, Wu & Dredze's overlap of subword
                  vocabularies
    coverage      of B by A: the share of B's piece tokens whose piece A also uses (the
                  text's view: frequent shared pieces, digits and punctuation, weigh as often
                  as they occur)

    counts = piece_counts(tokenizer, lines)          # Counter {piece id: tokens}, [UNK] apart
    table = overlaps({"en": en_counts, "de": de_counts})

Example (hand-made counts of piece ids):
    >>> import collections
    >>> a, b = collections.Counter({1: 5, 2: 3}), collections.Counter({2: 4, 3: 4})
    >>> found = overlap(a, b)
    >>> found.shared_types, found.jaccard, found.coverage_of_b, found.coverage_of_a
    (1, 0.3333333333333333, 0.5, 0.375)
"""

from __future__ import annotations

import collections
import dataclasses
import itertools
from typing import Iterable, Mapping

from data_prep.vocab_fit import word_counts
from official.text.python_tokenizer import PythonTokenizer
from official.text.vocab import UNKNOWN_TOKEN


@dataclasses.dataclass(frozen=True)
class LanguagePieces:
    """One language's text as pieces: the tokens, the piece types used, the [UNK] share."""
    tokens: int
    types: int
    unknown_rate: float


@dataclasses.dataclass(frozen=True)
class PairOverlap:
    """Two languages' overlap (the module docstring): coverage_of_b is B's tokens covered by
    A's pieces, coverage_of_a the other way."""
    shared_types: int
    jaccard: float
    coverage_of_b: float
    coverage_of_a: float


def piece_counts(tokenizer: PythonTokenizer, lines: Iterable[str]) -> collections.Counter:
    """{piece id: tokens} over the lines' words (each distinct word cut once), [UNK] included
    under its id."""
    counts: collections.Counter = collections.Counter()
    words = word_counts(tokenizer, lines)
    distinct = list(words)
    for word, pieces in zip(distinct, tokenizer.pieces(distinct)):
        for piece in pieces:
            counts[piece] += words[word]
    return counts


def _known(counts: collections.Counter, unknown: int) -> collections.Counter:
    return collections.Counter({piece: n for piece, n in counts.items() if piece != unknown})


def overlap(a: collections.Counter, b: collections.Counter) -> PairOverlap:
    """The overlap of two languages' piece counts ([UNK] already left out)."""
    shared = a.keys() & b.keys()
    union = a.keys() | b.keys()
    return PairOverlap(len(shared), len(shared) / len(union) if union else 0.0,
                       sum(b[p] for p in shared) / max(1, sum(b.values())),
                       sum(a[p] for p in shared) / max(1, sum(a.values())))


def describe(counts: collections.Counter, unknown: int) -> LanguagePieces:
    total = sum(counts.values())
    return LanguagePieces(total, len(_known(counts, unknown)), counts[unknown] / max(1, total))


def overlaps(tokenizer: PythonTokenizer, counts: Mapping[str, collections.Counter]
             ) -> tuple[dict[str, LanguagePieces], dict[tuple[str, str], PairOverlap]]:
    """Each language's pieces, and the overlap of every pair (in the languages' order)."""
    unknown = tokenizer.vocab[UNKNOWN_TOKEN]
    languages = {language: describe(found, unknown) for language, found in counts.items()}
    pairs = {(a, b): overlap(_known(counts[a], unknown), _known(counts[b], unknown))
             for a, b in itertools.combinations(counts, 2)}
    return languages, pairs
