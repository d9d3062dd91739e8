"""TextFooler's similarity constraint: the words around a swap, before and after it, must stay
close in a sentence encoder's eyes.

    check = WindowedSimilarity(encoder, size=15, threshold=SIMILARITY_THRESHOLD)
    cosines, kept = check(original, current, index, candidates)
                                                float32 [candidates], bool [candidates]

TextFooler (Jin et al., AAAI 2020, sec. 3.2 step 2) encodes a window of words around the
swapped word, not the whole text, so that a long text does not hide a change in one sentence of
it; its code and TextAttack's recipe (`UniversalSentenceEncoder(window_size=15, ...)`) agree on
the rule, which is this one:

  - The window is `size` words (TextFooler's 15): the swapped word and (size - 1) // 2 words on
    each side (7 for 15). Near an end the window is shifted, not shrunk: it is the first `size`
    words when the swap is fewer than 7 words from the start, the last `size` when it is fewer
    than 7 from the end (`window`).
  - A text of fewer words than the window is not checked at all (TextFooler sets its threshold
    to 0.1 there; TextAttack's `skip_text_shorter_than_window=True` scores it 1): every
    candidate passes, and the whole texts' cosines only rank the candidates (the attack keeps
    the most similar of those that flip the prediction, as TextFooler's code does).
  - The reference is the text the swap is made in (the current perturbed text, not the
    original: TextAttack's `compare_against_original=False`, TextFooler's `text_prime`), cut
    to the same window, so the check measures this swap alone.
  - The window's text is the text from its first word's first character to its last word's
    last character, punctuation between words kept.
  - `size=0` is the constraint this project's attack used before TextFooler's window: the
    whole candidate text against the original text (not the current one), every text checked.
    Each swap is then measured with all the swaps before it, where TextFooler's window
    measures one swap at a time and lets a text drift from the original step by step.

The threshold is a cosine. TextFooler's code and TextAttack compare the angular similarity
1 - arccos(cos) / pi with 0.840845057 (TextAttack's reading of TextFooler's 0.5 rad), which is
the same test as cos >= cos(0.5 rad) = 0.8776 (`SIMILARITY_THRESHOLD`).
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

from official.robustness.text_words import WordText

WINDOW_SIZE = 15
# TextAttack's TextFooler recipe keeps a text whose angular similarity 1 - angle / pi is at
# least 0.840845057, an angle of at most 0.5 rad: a cosine of at least cos(0.5).
SIMILARITY_THRESHOLD = math.cos(0.5)


def window(words: int, index: int, size: int) -> tuple[int, int] | None:
    """The [start, end) word indices of the window of `size` words (at least 1) around word
    `index` of a text of `words` words (see the module docstring); None when the text is
    shorter than the window (it is not checked)."""
    if words < size:
        return None
    start = min(max(index - (size - 1) // 2, 0), words - size)
    return start, start + size


def window_text(text: WordText, start: int, end: int) -> str:
    """The text from word `start`'s first character to word `end - 1`'s last."""
    if start == 0 and end == len(text):
        return text.text
    return text.text[text.spans[start][0]:text.spans[end - 1][1]]


def _unit(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, np.float32)
    return vectors / np.maximum(np.linalg.norm(vectors, axis=-1, keepdims=True), 1e-12)


def cosines(encoder: Callable[[list[str]], np.ndarray], reference: str,
            texts: list[str]) -> np.ndarray:
    """float32 [texts]: each text's cosine with `reference` under `encoder` (one call)."""
    vectors = _unit(encoder([reference, *texts]))
    return vectors[1:] @ vectors[0]


class WindowedSimilarity:
    """The constraint of the module docstring, with `encoder(texts) -> float32 [texts, dim]`.

    Args:
      encoder: a sentence encoder (its vectors' cosine is the similarity).
      size: words in the window (0: the whole texts, against the original).
      threshold: the least cosine a candidate's window keeps with the reference's.
    Both are checked where they are settings (`attack.AttackSettings.check`).
    """

    def __init__(self, encoder: Callable[[list[str]], np.ndarray], size: int = WINDOW_SIZE,
                 threshold: float = SIMILARITY_THRESHOLD):
        self.encoder, self.size, self.threshold = encoder, size, threshold

    def __call__(self, original: str, current: WordText, index: int,
                 candidates: list[WordText]) -> tuple[np.ndarray, np.ndarray]:
        """(float32 [candidates], bool [candidates]): each candidate's cosine with `current`,
        where word `index` was swapped (a candidate has `current`'s words but that one), on the
        window, and whether it passes; a text too short to be checked passes whole, with its
        whole texts' cosines. With `size=0`, the whole candidates' cosines with `original`."""
        if self.size == 0:
            values = cosines(self.encoder, original, [text.text for text in candidates])
            return values, values >= self.threshold
        bounds = window(len(current), index, self.size)
        if bounds is None:
            values = cosines(self.encoder, current.text, [text.text for text in candidates])
            return values, np.ones(len(candidates), bool)
        values = cosines(self.encoder, window_text(current, *bounds),
                         [window_text(text, *bounds) for text in candidates])
        return values, values >= self.threshold
