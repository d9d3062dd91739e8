"""Extending a WordPiece vocab for a domain: which pieces to add, and where they go.

    counts = vocab_fit.word_counts(tokenizer, texts)       # the domain text's words
    pool = candidates(counts, base_vocab, min_count)        # the learner's pieces the base lacks
    chosen = choose(counts, base_vocab, pool, max_new_tokens, min_count)
    tokens = layout(base_tokens, [c.token for c in chosen], "unused" | "append")

Candidates come from build_vocab's learner (data_prep/wordpiece_vocab.py, tensorflow-text's
WordPiece learner on our exact words), run on the domain text alone: whole words and "##" pieces
it learns that the base vocab does not have. They are chosen greedily by how many WordPieces they
save on the text: a candidate's saving is the sum, over the text's words, of (pieces now - pieces
with it added) times the word's count, under the same greedy longest-match-first WordPiece the
model's tokenizer runs. Savings interact (adding "phosphorylation" leaves little for "##ory"), so
each pick re-scores the best remaining candidate against the vocab as extended so far before
taking it (a lazy greedy: a candidate whose saving fell goes back in line). A candidate is kept
only if the words that would use it occur at least `min_count` times.

Layouts: "unused" writes the new tokens over the base vocab's `[unusedN]` lines in id order, so
the embedding matrix keeps its shape; "append" adds them after the last line (vocab_size grows).
Either way no existing token changes its id: a checkpoint's rows stay where its vocab says.
"""

from __future__ import annotations

import contextlib
import dataclasses
import heapq
import re
from typing import Iterator, Mapping

from data_prep.input_errors import InputError
from official.text.python_tokenizer import MAX_CHARS_PER_WORD, longest_match_pieces

STRATEGIES = ("unused", "append")
UNUSED_TOKEN = re.compile(r"\[unused\d+\]")
_SUFFIX = "##"


def unused_slots(tokens: list[str]) -> list[int]:
    """The ids of the `[unusedN]` lines, in id order."""
    return [i for i, token in enumerate(tokens) if UNUSED_TOKEN.fullmatch(token)]


def candidates(counts: Mapping[str, int], base_vocab: Mapping[str, int],
               min_count: int) -> list[str]:
    """The learner's tokens for the text of `counts` (its threshold no lower than `min_count`)
    that `base_vocab` lacks: whole words and "##" pieces, in the learner's order."""
    # The learner's package loads TensorFlow: imported here, after extend_vocab's checks.
    from data_prep.wordpiece_vocab import SPECIAL_TOKENS, learn

    learned = learn(dict(counts), vocab_size=len(base_vocab), min_piece_count=min_count).tokens
    return [token for token in learned
            if token not in base_vocab and token not in SPECIAL_TOKENS]


@dataclasses.dataclass(frozen=True)
class Choice:
    """A chosen piece: the WordPieces it saved on the text when it was taken (given those taken
    before it), and how often the text's words use it then."""
    token: str
    saved_pieces: int
    uses: int


class _Extended:
    """The base vocab plus the pieces taken so far (and one on trial): a WordPiece vocab."""

    def __init__(self, base: Mapping[str, int]):
        self.base, self.added = base, set()
        self.longest = max(len(t.removeprefix(_SUFFIX)) for t in base)

    def __contains__(self, piece: str) -> bool:
        return piece in self.base or piece in self.added

    @contextlib.contextmanager
    def trying(self, token: str) -> Iterator[None]:
        """`token` in the vocab for the duration of the block."""
        longest = self.longest
        self.add(token)
        try:
            yield
        finally:
            self.added.discard(token)
            self.longest = longest

    def add(self, token: str) -> None:
        self.added.add(token)
        # A piece longer than every entry so far must be tried, or it never matches.
        self.longest = max(self.longest, len(token.removeprefix(_SUFFIX)))

    def pieces(self, word: str) -> list[str] | None:
        """The word's pieces, None for [UNK] (a word over the tokenizer's length limit too)."""
        if len(word) > MAX_CHARS_PER_WORD:
            return None
        return longest_match_pieces(word, self, self.longest)


class _Scorer:
    """Savings of candidates on the text's split words under the vocab extended so far."""

    def __init__(self, counts: Mapping[str, int], base: Mapping[str, int]):
        self.vocab = _Extended(base)
        self.counts = counts
        self.current: dict[str, int] = {}  # split word -> its pieces now
        for word in counts:
            pieces = self.vocab.pieces(word)
            if pieces is not None and len(pieces) > 1:
                self.current[word] = len(pieces)

    def _affected(self, token: str) -> list[str]:
        """The split words `token` could be a piece of: as their start, or ("##") inside."""
        if token.startswith(_SUFFIX):
            body = token[len(_SUFFIX):]
            return [w for w in self.current if body in w[1:]]
        return [w for w in self.current if w.startswith(token)]

    def score(self, token: str) -> tuple[int, int]:
        """(pieces saved on the text, occurrences of words that would use it) if `token` were
        added now."""
        saved = uses = 0
        with self.vocab.trying(token):
            for word in self._affected(token):
                pieces = self.vocab.pieces(word)
                if pieces is not None and token in pieces:
                    saved += self.counts[word] * (self.current[word] - len(pieces))
                    uses += self.counts[word]
        return saved, uses

    def take(self, token: str) -> None:
        affected = self._affected(token)
        self.vocab.add(token)
        for word in affected:
            pieces = self.vocab.pieces(word)
            if pieces is not None and len(pieces) > 1:
                self.current[word] = len(pieces)
            else:
                del self.current[word]


def choose(counts: Mapping[str, int], base_vocab: Mapping[str, int], pool: list[str],
           max_new_tokens: int, min_count: int) -> list[Choice]:
    """At most `max_new_tokens` of `pool`, by the pieces they save on the text (see the module
    docstring), largest first; ties go to the token that sorts first, so the choice depends on
    the counts alone."""
    scorer = _Scorer(counts, base_vocab)
    queue = []
    for token in pool:
        saved, uses = scorer.score(token)
        if saved > 0 and uses >= min_count:
            queue.append((-saved, token))
    heapq.heapify(queue)
    chosen: list[Choice] = []
    while queue and len(chosen) < max_new_tokens:
        _, token = heapq.heappop(queue)
        saved, uses = scorer.score(token)
        if saved <= 0 or uses < min_count:
            continue
        if queue and (-saved, token) > queue[0]:  # another now saves more: back in line
            heapq.heappush(queue, (-saved, token))
            continue
        scorer.take(token)
        chosen.append(Choice(token, saved, uses))
    return chosen


def layout(base_tokens: list[str], new_tokens: list[str], strategy: str) -> list[str]:
    """The extended vocab's lines: `new_tokens` over the `[unusedN]` lines in id order
    ("unused") or after the last line ("append").

    Raises:
      InputError: an unknown strategy, or more new tokens than unused lines.
    """
    if strategy not in STRATEGIES:
        raise InputError(f"--strategy={strategy}: must be one of {', '.join(STRATEGIES)}")
    if strategy == "append":
        return base_tokens + new_tokens
    slots = unused_slots(base_tokens)
    if len(new_tokens) > len(slots):
        raise InputError(f"{len(new_tokens)} new tokens but the vocab has {len(slots)} "
                         f"[unusedN] lines; use --strategy=append or fewer --max_new_tokens")
    tokens = list(base_tokens)
    for slot, token in zip(slots, new_tokens):
        tokens[slot] = token
    return tokens

