"""A multilingual pretraining corpus with each language's share smoothed as mBERT's was.

mBERT (google-research/bert, multilingual.md) sampled its pretraining data and its WordPiece
vocab's text by exponentially smoothed language frequencies: with q_l the share of language l
in the data, each language is drawn with probability

    p_l = q_l^S / sum_k q_k^S,   S = SMOOTHING (0.7, mBERT's exponent)

so a language with little text is over-sampled and one with much under-sampled (S = 1 keeps the
data's shares, S = 0 gives every language the same). Here the unit drawn is a passage: lines of
one document in their order, at most `passage_words` words (a line longer than that is a passage
alone), so the contexts a model reads stay whole. A language's passages are taken in a seeded
shuffle until its target, p_l times the words written, is reached; a language whose target
exceeds its text starts another shuffled pass (over-sampling repeats text, as mBERT's did). The
passages of every language are then written in one seeded shuffle, each as a document (a
blank line after it): the pretraining format, which build_vocab and create_pretraining_data read.

    read_passages(files, passage_words) -> [Passage]
    smoothed_shares({language: words}, exponent) -> {language: p}
    mix(passages_by_language, exponent, total_words, seed) -> Mix (.passages, .languages)

Example (English with three times German's words: shares 0.75 / 0.25 smoothed to 0.68 / 0.32):
    >>> shares = smoothed_shares({"en": 300, "de": 100}, 0.7)
    >>> {language: round(share, 2) for language, share in shares.items()}
    {'en': 0.68, 'de': 0.32}
"""

from __future__ import annotations

import dataclasses
import random
from typing import Mapping, Sequence

from data_prep.input_errors import InputError, utf8_lines

SMOOTHING = 0.7


@dataclasses.dataclass(frozen=True)
class Passage:
    """Consecutive lines of one document."""
    lines: tuple[str, ...]

    @property
    def words(self) -> int:
        return sum(len(line.split()) for line in self.lines)


@dataclasses.dataclass(frozen=True)
class LanguageShare:
    """One language in a mix: the words its text has, its share of them (q), its smoothed share
    (p), the words written of it and how many passes over its text they took."""
    words: int
    share: float
    smoothed_share: float
    words_written: int
    passes: int


@dataclasses.dataclass(frozen=True)
class Mix:
    """The passages written, in order, and each language's part."""
    passages: list[Passage]
    languages: dict[str, LanguageShare]


def read_passages(files: Sequence[str], passage_words: int) -> list[Passage]:
    """The passages of the files (gzip-compressed when named .gz), in order: a document's lines
    (a blank line ends a document, and so does a file's end) cut into passages of at most
    `passage_words` words.

    Raises:
      InputError: a file that cannot be read (one line naming it).
    """
    passages = []
    for path in files:
        lines: list[str] = []
        words = 0
        for _, line in utf8_lines(path):
            text = line.strip()
            length = len(text.split())
            if lines and (not text or words + length > passage_words):
                passages.append(Passage(tuple(lines)))
                lines, words = [], 0
            if text:
                lines.append(text)
                words += length
        if lines:
            passages.append(Passage(tuple(lines)))
    return passages


def smoothed_shares(words: Mapping[str, int], exponent: float) -> dict[str, float]:
    """{language: p_l}, the data's shares raised to `exponent` and normalised (module
    docstring); the languages in their given order."""
    total = sum(words.values())
    raised = {language: (count / total) ** exponent for language, count in words.items()}
    norm = sum(raised.values())
    return {language: value / norm for language, value in raised.items()}


def _take(passages: list[Passage], target: int, rng: random.Random) -> tuple[list[Passage], int]:
    """Passages in shuffled passes until `target` words; (taken, passes begun)."""
    taken, words, passes = [], 0, 0
    while words < target:
        order = list(passages)
        rng.shuffle(order)
        passes += 1
        for passage in order:
            if words >= target:
                break
            taken.append(passage)
            words += passage.words
    return taken, passes


def mix(passages: Mapping[str, list[Passage]], exponent: float, total_words: int | None,
        seed: int) -> Mix:
    """The smoothed mix of each language's passages (module docstring): `total_words` words in
    all (None: as many as the languages have together).

    Raises:
      InputError: a language without words.
    """
    words = {language: sum(p.words for p in found) for language, found in passages.items()}
    empty = [language for language, count in words.items() if count == 0]
    if empty:
        raise InputError(f"language {empty[0]}: its files hold no words")
    total = total_words or sum(words.values())
    shares = smoothed_shares(words, exponent)
    written, parts = [], {}
    for language, found in passages.items():
        rng = random.Random(f"{seed}:{language}")
        taken, passes = _take(found, round(shares[language] * total), rng)
        written += taken
        parts[language] = LanguageShare(words[language], words[language] / sum(words.values()),
                                        shares[language], sum(p.words for p in taken), passes)
    random.Random(seed).shuffle(written)
    return Mix(written, parts)
