"""The original tokenizer's character classes, read from Python's `unicodedata`, as RE2 patterns.

google-research/bert decides what to delete, what is whitespace, what is punctuation and what is an
accent with `unicodedata` categories, and lower-cases with `str.lower`. TensorFlow's tables follow
other Unicode versions than Python 3.11's `unicodedata` (14.0): in TF 2.21 RE2's `\\p{..}` classes
are Unicode 15 (they differ from Python's on 23 P, 35 Mn and 7 Cf code points) and the ICU behind
`tf.strings.lower` is Unicode 13 (it leaves the 40 capitals Unicode 14 added). So nothing here
trusts a library's tables: every class is built by asking the running Python about each code
point, the same questions the original asks, and is written out as explicit RE2 ranges
(`[\\x{21}-\\x{2F}...]`). The result agrees with the original run by the same Python, whatever
Unicode version that Python ships.

Building the tables asks `unicodedata` about all 1.1M code points, too slow to repeat per
tokenizer; `original_char_classes` does it once per process.
"""

from __future__ import annotations

import dataclasses
import functools
import sys
import unicodedata
from typing import Iterable

import numpy as np

# `BasicTokenizer._is_chinese_char`: the CJK ideograph blocks, which the original makes one word
# each. (Hangul, Hiragana and Katakana are not in them: those scripts put spaces between words.)
CJK_RANGES = ((0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F),
              (0x2B740, 0x2B81F), (0x2B820, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F))

# ASCII characters the original calls punctuation although Unicode does not ("$", "+", "^", ...):
# every ASCII character that is not a letter, digit, space or control.
_ASCII_PUNCTUATION_RANGES = ((33, 47), (58, 64), (91, 96), (123, 126))

_CAPITAL_SIGMA = "\u03a3"


@dataclasses.dataclass(frozen=True)
class CharClasses:
    """RE2 bracket expressions (e.g. "[\\x{21}-\\x{2F}]") and tables for the basic tokenizer.

    Attributes:
      removed: what `_clean_text` deletes: U+0000, U+FFFD and categories Cc and Cf (which hold
        zero-width and format characters such as U+200B, U+200D, U+00AD, U+FEFF), except
        \\t \\n \\r.
      whitespace: what ends a word, other than " " itself: \\t \\n \\r and category Zs (which
        `_clean_text` maps to " "), and the two characters Python's `str.split()` also splits at,
        U+2028 (Zl) and U+2029 (Zp).
      split: characters that become a word of their own: punctuation (`_is_punctuation`: the
        ASCII symbols and categories P*) and the CJK ideographs.
      nonspacing_marks: category Mn, what `_run_strip_accents` drops after NFD.
      final_sigma: a pattern matching a "Σ" that `str.lower` makes final "ς", with its context
        in groups 1 (before) and 2 (after), to be put back around the "ς".
      lower: [max code point with a one-character lower case + 1] int32, code point -> the code
        point of its `str.lower()` (itself where that is not one other character).
      multi_char_lower: {character: its `str.lower()`} where that is longer than one character
        ("İ" -> "i̇", "i" + U+0307).
    """
    removed: str
    whitespace: str
    split: str
    nonspacing_marks: str
    final_sigma: str
    lower: np.ndarray
    multi_char_lower: dict[str, str]


def re2_class(code_points: Iterable[int], negate: bool = False) -> str:
    """Sorted code points -> an RE2 bracket expression of merged ranges ("[^...]" if negate)."""
    ranges: list[list[int]] = []
    for cp in sorted(set(code_points)):
        if ranges and ranges[-1][1] == cp - 1:
            ranges[-1][1] = cp
        else:
            ranges.append([cp, cp])
    body = "".join(f"\\x{{{a:X}}}" if a == b else f"\\x{{{a:X}}}-\\x{{{b:X}}}" for a, b in ranges)
    return f"[{'^' if negate else ''}{body}]"


@functools.cache
def general_categories() -> tuple[str, ...]:
    """The unicodedata category of every code point (index = code point; cached: 1.1M calls).
    Interned: 30 distinct strings, not 1.1M copies (~70 MB a process would keep)."""
    return tuple(map(sys.intern, map(unicodedata.category, map(chr, range(0x110000)))))


@dataclasses.dataclass(frozen=True)
class CodePoints:
    """The original's classes as sorted code points (`CharClasses` says what each holds), for
    tokenizers that render them in their own regex syntax (official/text/python_tokenizer.py)."""
    removed: tuple[int, ...]
    whitespace: tuple[int, ...]
    split: tuple[int, ...]
    nonspacing_marks: tuple[int, ...]


@functools.cache
def original_code_points() -> CodePoints:
    """The classes of google-research/bert's `tokenization.py`, from this Python's unicodedata."""
    removed, whitespace, punctuation, marks = [0, 0xFFFD], [], [], []
    categories = general_categories()
    # Unassigned, private-use and surrogate code points (the last cannot occur in UTF-8 text) are
    # in none of the classes.
    for cp, category in enumerate(categories):
        char = chr(cp)
        if category in ("Cn", "Co", "Cs"):
            continue
        if category in ("Cc", "Cf") and char not in "\t\n\r":
            removed.append(cp)
        elif (category == "Zs" or char.isspace()) and char != " ":
            whitespace.append(cp)
        elif category.startswith("P"):
            punctuation.append(cp)
        elif category == "Mn":
            marks.append(cp)
    for first, last in _ASCII_PUNCTUATION_RANGES + CJK_RANGES:
        punctuation.extend(range(first, last + 1))
    return CodePoints(*(tuple(sorted(set(points)))
                        for points in (removed, whitespace, punctuation, marks)))


@functools.cache
def _assigned() -> tuple[int, ...]:
    return tuple(cp for cp, category in enumerate(general_categories())
                 if category not in ("Cn", "Co", "Cs"))


@functools.cache
def unassigned() -> str:
    """Every code point this Python's unicodedata calls unassigned (category Cn), in order: what
    another library's newer Unicode tables may treat otherwise (official/text/basic_tokenizer.py's
    NFD)."""
    return "".join(chr(cp) for cp, category in enumerate(general_categories())
                   if category == "Cn")


@functools.cache
def original_char_classes() -> CharClasses:
    """`original_code_points` as RE2 classes, with the lower-casing tables `str.lower` gives."""
    points = original_code_points()
    lower_case, multi_char_lower = {}, {}
    for cp in _assigned():
        char = chr(cp)
        lowered = char.lower()
        if len(lowered) > 1:
            multi_char_lower[char] = lowered
        elif lowered != char:
            lower_case[cp] = ord(lowered)
    lower = np.arange(max(lower_case) + 1, dtype=np.int32)
    lower[list(lower_case)] = list(lower_case.values())
    return CharClasses(
        removed=re2_class(points.removed), whitespace=re2_class(points.whitespace),
        split=re2_class(points.split), nonspacing_marks=re2_class(points.nonspacing_marks),
        final_sigma=_final_sigma_pattern(list(_assigned())), lower=lower,
        multi_char_lower=multi_char_lower)


def _final_sigma_pattern(assigned: list[int]) -> str:
    """The `final_sigma` pattern: "Σ" after a cased character and not before one, skipping
    case-ignorable characters both ways (Unicode's Final_Sigma, as `str.lower` applies it).

    RE2 has no lookaround, so the context is matched and put back. Matches cannot hide one
    another: one ends at a character that is not cased, and the next begins at a cased one.
    """
    cased, ignorable = _final_sigma_properties(assigned)
    before = f"{re2_class(cased)}{re2_class(ignorable)}*"
    after = f"{re2_class(ignorable)}*(?:{re2_class(cased + ignorable, negate=True)}|$)"
    return f"({before}){_CAPITAL_SIGMA}({after})"


def _final_sigma_properties(assigned: list[int]) -> tuple[list[int], list[int]]:
    """(cased and not case-ignorable, case-ignorable) code points, found by asking `str.lower`.

    Cased characters that are also case-ignorable (such as "ʰ") never decide a context: the
    scan for context skips every case-ignorable character.

    Python does not expose the Cased and Case_Ignorable properties, but `str.lower` shows them:
    "Σ" after a cased letter becomes final "ς" unless, skipping case-ignorable characters, a cased
    character follows. So with c after "ΑΣ": "σ" means c is cased and not ignorable; "ς" alone
    and "σ" once a cased "Α" follows c means c was skipped, i.e. case-ignorable. Unassigned and
    private-use code points have neither property.
    """
    cased, case_ignorable = [], []
    for cp in assigned:
        c = chr(cp)
        if ("\u0391" + _CAPITAL_SIGMA + c).lower()[1] == "\u03c3":
            cased.append(cp)
        elif ("\u0391" + _CAPITAL_SIGMA + c + "\u0391").lower()[1] == "\u03c3":
            case_ignorable.append(cp)
    return cased, case_ignorable
