"""A text as the words an attack may replace, and the text with one of them replaced or deleted.

    text = WordText("The film's ending is superb.")
    text.words                 ["The", "film's", "ending", "is", "superb"]
    text.replaced(4, "great")  WordText("The film's ending is great.")
    text.deleted(2)            WordText("The film's is superb.")
    text.first(2)              WordText("The film's")

A word is a run of letters and digits of any script, with inner apostrophes or hyphens
("film's", "well-made", "amélie": an accented letter does not split a word); everything
between words (spaces, punctuation) is kept as it was, so a replaced text differs from the
original only in that word. Words are what an attack's summary counts
("words per input", "perturbed word %"). A word may be replaced when it is ASCII letters only
and at least two of them (`replaceable`): the other rules (stop words) belong to the attack.

A replacement takes the casing of the word it replaces (all capitals, a capital first, or as
given), so that "Superb" becomes "Great" and a cased model is not told by the case alone.
"""

from __future__ import annotations

import re

_WORD = re.compile(r"[^\W_]+(?:['\u2019-][^\W_]+)*")
_LETTERS = re.compile(r"[A-Za-z]{2,}")


def _cased_like(word: str, original: str) -> str:
    if original.isupper() and len(original) > 1:
        return word.upper()
    if original[0].isupper():
        return word[0].upper() + word[1:]
    return word


class WordText:
    """A text and its words' character spans (see the module docstring)."""

    def __init__(self, text: str):
        self.text = text
        self.spans = [match.span() for match in _WORD.finditer(text)]
        self.words = [text[start:end] for start, end in self.spans]

    def __len__(self) -> int:
        return len(self.words)

    def __eq__(self, other) -> bool:
        return isinstance(other, WordText) and other.text == self.text

    def __hash__(self) -> int:
        return hash(self.text)

    def __repr__(self) -> str:
        return f"WordText({self.text!r})"

    def replaceable(self, index: int) -> bool:
        return bool(_LETTERS.fullmatch(self.words[index]))

    def replaced(self, index: int, word: str) -> WordText:
        """The text with word `index` replaced by `word`, cased like it."""
        start, end = self.spans[index]
        return WordText(self.text[:start] + _cased_like(word, self.words[index])
                        + self.text[end:])

    def deleted(self, index: int) -> WordText:
        """The text without word `index` and the space before it (after it, for the first)."""
        start, end = self.spans[index]
        if start > 0 and self.text[start - 1] == " ":
            start -= 1
        elif end < len(self.text) and self.text[end] == " ":
            end += 1
        return WordText(self.text[:start] + self.text[end:])

    def first(self, count: int) -> WordText:
        """The text up to the end of its `count`-th word (itself when it has no more words)."""
        if count >= len(self.words):
            return self
        return WordText(self.text[:self.spans[count - 1][1]] if count else "")

    def around(self, index: int) -> tuple[str, str]:
        """The text before word `index` and after it (a masked-LM's context)."""
        start, end = self.spans[index]
        return self.text[:start], self.text[end:]
