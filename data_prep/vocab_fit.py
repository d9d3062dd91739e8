"""How well a WordPiece vocab fits a text: pieces per word, words split, [UNK]s, and the most
fragmented frequent words with their pieces.

A word is one of the original BasicTokenizer's words (punctuation split off; lower-cased and
accents stripped for an uncased vocab), cut into pieces by greedy longest-match-first WordPiece:
`PythonTokenizer`, whose ids are FullTokenizer's. So the figures are those of the ids a model
reads. "Alphabetic" words hold at least one letter (a punctuation mark is a word of one piece
and would dilute the split rate of the words that matter).

    counts = word_counts(tokenizer, texts)          # Counter {word: occurrences}
    fit = measure(tokenizer, counts, top_k=20)      # VocabFit: the figures and the words
    print(fit.table()); json.dump(fit.to_json(), f)

The same text measured with two vocabs (before and after data_prep/extend_vocab.py) shows what an
extension changed.
"""

from __future__ import annotations

import collections
import dataclasses
import itertools
from typing import Iterable

from official.text.python_tokenizer import PythonTokenizer
from official.text.vocab import UNKNOWN_TOKEN

_TEXTS_PER_BATCH = 4096


def word_counts(tokenizer: PythonTokenizer, texts: Iterable[str]) -> collections.Counter:
    """{word: occurrences} over the BasicTokenizer words of `texts`."""
    counts: collections.Counter = collections.Counter()
    texts = iter(texts)
    while batch := list(itertools.islice(texts, _TEXTS_PER_BATCH)):
        for words in tokenizer.words(batch):
            counts.update(words)
    return counts


@dataclasses.dataclass(frozen=True)
class FragmentedWord:
    """A word the vocab cuts into several pieces, and how often the text has it."""
    word: str
    count: int
    pieces: tuple[str, ...]


@dataclasses.dataclass(frozen=True)
class VocabFit:
    """One vocab's fit to one text (occurrences, not distinct words, unless named so).

    words, pieces: the text's words and the WordPieces they become
    split_words: words of two pieces or more
    alphabetic_words, alphabetic_split_words: the same among words with a letter
    unknown_words: words that became [UNK]
    distinct_words: distinct words
    fragmented: the `top_k` most frequent split words, most frequent first
    """
    vocab_file: str
    words: int
    pieces: int
    split_words: int
    alphabetic_words: int
    alphabetic_split_words: int
    unknown_words: int
    distinct_words: int
    fragmented: tuple[FragmentedWord, ...]

    @property
    def pieces_per_word(self) -> float:
        return self.pieces / self.words if self.words else 0.0

    @property
    def split_rate(self) -> float:
        return self.split_words / self.words if self.words else 0.0

    @property
    def alphabetic_split_rate(self) -> float:
        return self.alphabetic_split_words / self.alphabetic_words if self.alphabetic_words \
            else 0.0

    @property
    def unknown_rate(self) -> float:
        return self.unknown_words / self.words if self.words else 0.0

    def to_json(self) -> dict:
        """The counts, the rates and the fragmented words, as vocab_report writes them."""
        return {"vocab_file": self.vocab_file, "words": self.words, "pieces": self.pieces,
                "distinct_words": self.distinct_words, "split_words": self.split_words,
                "alphabetic_words": self.alphabetic_words,
                "alphabetic_split_words": self.alphabetic_split_words,
                "unknown_words": self.unknown_words,
                "pieces_per_word": self.pieces_per_word, "split_rate": self.split_rate,
                "alphabetic_split_rate": self.alphabetic_split_rate,
                "unknown_rate": self.unknown_rate,
                "fragmented": [{"word": w.word, "count": w.count, "pieces": list(w.pieces)}
                               for w in self.fragmented]}

    def table(self) -> str:
        """The figures and the fragmented words as aligned text, for a terminal."""
        lines = [f"vocab {self.vocab_file}",
                 f"  words            {self.words:,} ({self.distinct_words:,} distinct)",
                 f"  pieces           {self.pieces:,}",
                 f"  pieces per word  {self.pieces_per_word:.3f}",
                 f"  words split      {self.split_rate:.1%}",
                 f"  alphabetic split {self.alphabetic_split_rate:.1%}",
                 f"  [UNK] words      {self.unknown_rate:.2%}"]
        if self.fragmented:
            width = max(len(w.word) for w in self.fragmented)
            lines.append("  most frequent split words:")
            lines += [f"    {w.word:<{width}}  {w.count:>7,}  {' '.join(w.pieces)}"
                      for w in self.fragmented]
        return "\n".join(lines)


def measure(tokenizer: PythonTokenizer, counts: collections.Counter, top_k: int = 20) -> VocabFit:
    """The fit of `tokenizer`'s vocab to the text whose words `counts` counts.

    Example (the uncased vocab; "phosphorylation" is five pieces):
        >>> tokenizer = PythonTokenizer("data/vocab/uncased_vocab.txt")
        >>> fit = measure(tokenizer, word_counts(tokenizer, ["Phosphorylation of the kinase."]))
        >>> fit.words, fit.pieces, fit.split_words, fit.fragmented[0].pieces
        (5, 9, 1, ('ph', '##os', '##ph', '##ory', '##lation'))
    """
    distinct = list(counts)
    pieces = tokenizer.pieces(distinct)
    unknown = tokenizer.vocab[UNKNOWN_TOKEN]
    token_of = {i: token for token, i in tokenizer.vocab.items()}
    total = split = alphabetic = alphabetic_split = unknown_words = 0
    fragmented = []
    for word, ids in zip(distinct, pieces):
        n = counts[word]
        total += n * len(ids)
        has_letter = any(c.isalpha() for c in word)
        alphabetic += n * has_letter
        if len(ids) > 1:
            split += n
            alphabetic_split += n * has_letter
            fragmented.append(FragmentedWord(word, n, tuple(token_of[i] for i in ids)))
        elif ids == (unknown,):
            unknown_words += n
    fragmented.sort(key=lambda w: (-w.count, w.word))
    return VocabFit(tokenizer.vocab_file, sum(counts.values()), total, split, alphabetic,
                    alphabetic_split, unknown_words, len(distinct), tuple(fragmented[:top_k]))
