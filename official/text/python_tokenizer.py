"""`PythonTokenizer`: `FullTokenizer`'s ids in plain Python (`re`, `unicodedata`, dict lookups),
without TensorFlow.

For processes that only turn text into ids: the pretraining-data workers (data_prep/
fast_generation.py, data_prep/beam_pipeline.py) start in a fraction of a second and take tens of
MB instead of TensorFlow's ~700 MB each. `FullTokenizer` stays the tokenizer of graphs (tf.data,
SavedModels); both give the original's tokens, code point for code point (tests/
test_python_tokenizer.py sweeps Unicode against google-research/bert's `tokenization.py`).

The steps are the original's (official/text/basic_tokenizer.py describes them), each run over
many lines at once by one C-level call where the original loops per character in Python:

    re.sub       delete the original's control and format characters          (_clean_text)
    str.lower    the whole text: the final-sigma context stops at a space as at a word's end
    NFD, re.sub  decompose, delete category Mn                              (_run_strip_accents)
    re.findall   words: a punctuation or CJK character alone, or a run of others up to a space
    WordPiece    greedy longest match first, once per distinct word (a bounded cache), [UNK] for
                 a word it cannot cover or one of over 200 characters

Lines are grouped as Python stores them: pure ASCII (most lines of English; tiny classes, no
NFD), other characters below U+10000, and the rest. `re` tests a character beyond U+FFFF against
a class's ranges one by one, so only the few lines that hold one pay for the full classes.
The classes are the original's, read from this Python's unicodedata (official/text/
char_classes.py), as FullTokenizer's are.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from typing import Container, Iterable

import numpy as np

from official.text import char_classes
from official.text.vocab import UNKNOWN_TOKEN, load_vocab

# The original's WordpieceTokenizer.max_input_chars_per_word: a longer word becomes [UNK] whole.
MAX_CHARS_PER_WORD = 200
# Distinct words whose pieces are kept: Zipf's law makes most words of a chunk repeats, and the
# bound keeps a worker's memory flat on any corpus (tens of MB; clearing only costs speed).
_CACHE_WORDS = 1 << 17
_TIERS = ("ascii", "bmp", "astral")
_ASCII_END, _BMP_END = 0x80, 0x10000
_ASTRAL = re.compile("[\U00010000-\U0010FFFF]")


def _class(code_points: Iterable[int], end: int) -> str:
    """The code points below `end` as the body of a `re` bracket expression (merged ranges)."""
    ranges: list[list[int]] = []
    for cp in code_points:
        if cp >= end:
            break
        if ranges and ranges[-1][1] == cp - 1:
            ranges[-1][1] = cp
        else:
            ranges.append([cp, cp])
    return "".join(f"\\U{a:08x}" if a == b else f"\\U{a:08x}-\\U{b:08x}" for a, b in ranges)


class _Patterns:
    """One tier's compiled classes: removed characters, accents, and the word pattern."""

    def __init__(self, points: char_classes.CodePoints, end: int):
        self.removed = re.compile(f"[{_class(points.removed, end)}]")
        self.marks = re.compile(f"[{_class(points.nonspacing_marks, end)}]") if end > 0x80 \
            else None
        split = _class(points.split, end)
        self.words = re.compile(f"[{split}]|[^\\s{split}]+")


class PythonTokenizer:
    """The original FullTokenizer's ids for lines of text (see the module docstring).

    Args:
      vocab_file: The checkpoint's vocab.txt; a token's id is its line index (VocabError: not
        one, as for FullTokenizer).
      do_lower_case: True for "uncased" checkpoints (lower-case and strip accents).

    Example (the uncased vocab of the released checkpoints):
        >>> tokenizer = PythonTokenizer("data/vocab/uncased_vocab.txt", do_lower_case=True)
        >>> [ids.tolist() for ids in tokenizer.tokenize_batch_ids(["John Johanson's house", ""])]
        [[2198, 13093, 3385, 1005, 1055, 2160], []]
    """

    def __init__(self, vocab_file: str, do_lower_case: bool = True):
        self.vocab_file = vocab_file
        self.do_lower_case = do_lower_case
        self.vocab = load_vocab(vocab_file)
        self._unknown = (self.vocab[UNKNOWN_TOKEN],)  # load_vocab refuses a vocab without it
        # No piece is longer than the longest entry (after its "##"): longer tries cannot match.
        self._longest = max(len(token.removeprefix("##")) for token in self.vocab)
        points = char_classes.original_code_points()
        self._patterns = {"ascii": _Patterns(points, _ASCII_END),
                          "bmp": _Patterns(points, _BMP_END),
                          "astral": _Patterns(points, 0x110000)}
        self._pieces: dict[str, tuple[int, ...]] = {}

    def tokenize_batch_ids(self, texts: list[str]) -> list[np.ndarray]:
        """Many texts -> one int32 array of vocab ids per text (`FullTokenizer`'s)."""
        ids, ends = self.tokenize_flat(texts)
        return np.split(ids, ends[:-1]) if len(texts) else []

    def tokenize_flat(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """Many texts -> (int32 [total ids] every text's ids in order, int64 [texts] where each
        text's ids end): the arrays a data generator wants, with no array per text."""
        words = self.words(texts)
        pieces = self.pieces(list(itertools.chain.from_iterable(words)))
        ids = np.fromiter(itertools.chain.from_iterable(pieces), np.int32)
        piece_ends = np.zeros(len(pieces) + 1, np.int64)
        np.cumsum(np.fromiter(map(len, pieces), np.int64, len(pieces)), out=piece_ends[1:])
        return ids, piece_ends[np.cumsum(np.fromiter(map(len, words), np.int64, len(words)))]

    def words(self, texts: list[str]) -> list[list[str]]:
        """The original BasicTokenizer's words of each text (before WordPiece)."""
        tiers: dict[str, list[int]] = {tier: [] for tier in _TIERS}
        for i, text in enumerate(texts):
            tiers["ascii" if text.isascii() else
                  "astral" if _ASTRAL.search(text) else "bmp"].append(i)
        words: list[list[str]] = [[]] * len(texts)
        for tier, rows in tiers.items():
            if rows:
                # "\n" is whitespace to the original and nothing maps to it: a safe separator.
                joined = "\n".join(texts[i].replace("\n", " ") for i in rows)
                findall = self._patterns[tier].words.findall
                for i, line in zip(rows, self._normalize(joined, tier).split("\n")):
                    words[i] = findall(line)
        return words

    def _normalize(self, text: str, tier: str) -> str:
        patterns = self._patterns[tier]
        text = patterns.removed.sub("", text)
        if self.do_lower_case:
            text = text.lower()
            if patterns.marks is not None:
                text = patterns.marks.sub("", unicodedata.normalize("NFD", text))
        return text

    def pieces(self, words: list[str]) -> list[tuple[int, ...]]:
        """Each word's WordPiece ids (words as `words` gives them), from the cache where it has
        them."""
        cache = self._pieces
        if len(cache) > _CACHE_WORDS:
            cache.clear()
        for word in dict.fromkeys(words).keys() - cache.keys():  # each new word once
            cache[word] = self._wordpiece(word)
        return list(map(cache.__getitem__, words))

    def _wordpiece(self, word: str) -> tuple[int, ...]:
        """The original WordpieceTokenizer on one word (`longest_match_pieces`)."""
        if len(word) > MAX_CHARS_PER_WORD:
            return self._unknown
        pieces = longest_match_pieces(word, self.vocab, self._longest)
        return self._unknown if pieces is None else tuple(map(self.vocab.__getitem__, pieces))


def longest_match_pieces(word: str, vocab: Container[str], longest: int,
                         continued: bool = False) -> list[str] | None:
    """The original WordpieceTokenizer's pieces of one word: the longest vocab entry from the
    start, then the longest "##" entry from where it ended, ...; None if a step finds none (the
    word is [UNK]). `longest`: no entry is longer (after its "##"), so longer tries are skipped.
    `continued`: the word continues an earlier one, so its first piece is a "##" entry too (how
    an old vocab cuts a new "##" piece).

    Example:
        >>> longest_match_pieces("unaffable", {"un", "##aff", "##able"}, longest=4)
        ['un', '##aff', '##able']
    """
    pieces, start = [], 0
    while start < len(word):
        for end in range(min(len(word), start + longest), start, -1):
            piece = word[start:end] if start == 0 and not continued else "##" + word[start:end]
            if piece in vocab:
                pieces.append(piece)
                start = end
                break
        else:
            return None
    return pieces
