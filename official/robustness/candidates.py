"""Words that may replace a word in an attack, from files and models the user has: no downloads.

    synonyms = SynonymCandidates(read_word_pairs("ppdb_synonyms.txt"),
                                 antonyms=read_word_pairs("ppdb_antonyms.txt"))
    synonyms.propose(text, index, limit=50)     -> ["great", "excellent", ...]
    neighbours = VectorCandidates(read_word2vec("layer_00.txt"), min_cos_sim=0.5)
    masked = MaskedLMCandidates(masked_lm)      BAE's: the head's top words at the masked word

Three sources, as the attacks that defined them use:
  - a synonym list (TextFooler's counter-fitted vectors were fitted to PPDB's synonym pairs;
    counter-fitting's `ppdb_synonyms.txt` is the list itself): one pair a line, `word1 word2`,
    both directions meant; a pair also listed as antonyms is dropped (PPDB's automatic
    paraphrases include some), and a word is never its own candidate.
Every source proposes lower-case words of two or more letters only, so that a replacement is one
word of the text (`text_words`) and the words after it keep their places.
  - nearest neighbours in static word vectors (build_static_embeddings' word2vec files), by
    cosine, at least `min_cos_sim` (TextFooler's delta, 0.5), nearest first; antonyms dropped
    too, since contextual models' static vectors put "good" next to "bad". A vector holding a
    nan or an inf is refused: its cosines are nan, and the word would silently never be
    proposed nor have candidates.
  - a masked-LM head (BAE, Garg & Ramakrishnan 2020, its R variant): the word masked in its
    context, the head's most probable whole words (no "##" piece, letters only), most probable
    first.
`CombinedCandidates` takes several sources in order, each word once. Stop words are never
replaced (`STOP_WORDS`: function words, pronouns, auxiliaries and negations; replacing "not"
would change the meaning the attack must keep).
"""

from __future__ import annotations

import re
from typing import Iterable, Protocol

import numpy as np

from official.embeddings.word2vec_files import check_finite
from official.robustness.text_words import WordText

# Function words written for this project: articles, pronouns, prepositions, conjunctions,
# auxiliaries and modals, negations, and the pieces a tokenised text splits contractions into.
STOP_WORDS = frozenset("""
a an the this that these those there here some any all each every both either neither no none
i me my mine myself we us our ours ourselves you your yours yourself yourselves he him his
himself she her hers herself it its itself they them their theirs themselves one ones who whom
whose which what whatever whoever when where why how whether than then
of in on at by for with about against between into through during before after above below to
from up down out off over under again further once onto upon within without among across
along around behind beyond near toward towards via per since until till
and or but nor so yet if because as while although though unless whereas
be am is are was were been being have has had having do does did doing done
can could may might must shall should will would ought need
not never no nothing nobody nowhere cannot ca wo n't nt don didn doesn isn wasn aren weren
hasn haven hadn won wouldn shouldn couldn mustn needn mightn
s t d ll m re ve o y
very too also just only even still already quite rather much many more most less least
such same other another own else ever
""".split())

_WHOLE_WORD = re.compile(r"[a-z]{2,}")


class Candidates(Protocol):
    """A source of replacements for word `index` of `text`, best first, at most `limit`."""

    def propose(self, text: WordText, index: int, limit: int) -> list[str]: ...


def read_word_pairs(path: str) -> list[tuple[str, str]]:
    """`word1 word2` a line (counter-fitting's lists), lower-cased; blank lines skipped.

    Raises:
      ValueError: `path:line: ...` for a line that is not two words, or bytes not UTF-8.
    """
    pairs = []
    try:
        with open(path, encoding="utf-8") as f:
            for number, line in enumerate(f, start=1):
                fields = line.split()
                if not fields:
                    continue
                if len(fields) != 2:
                    raise ValueError(f"{path}:{number}: {len(fields)} fields, expected two "
                                     "words (`word1 word2`)")
                pairs.append((fields[0].lower(), fields[1].lower()))
    except UnicodeDecodeError as e:
        raise ValueError(f"{path}: not UTF-8 text ({e.reason} at byte {e.start})") from None
    return pairs


def _pair_set(pairs: Iterable[tuple[str, str]]) -> set[frozenset]:
    return {frozenset(pair) for pair in pairs}


class SynonymCandidates:
    """A synonym list's words for a word (see the module docstring), in the list's order."""

    def __init__(self, synonyms: Iterable[tuple[str, str]],
                 antonyms: Iterable[tuple[str, str]] = ()):
        excluded = _pair_set(antonyms)
        self._table: dict[str, list[str]] = {}
        for first, second in synonyms:
            if (first == second or frozenset((first, second)) in excluded
                    or not (_WHOLE_WORD.fullmatch(first) and _WHOLE_WORD.fullmatch(second))):
                continue
            for word, other in ((first, second), (second, first)):
                known = self._table.setdefault(word, [])
                if other not in known:
                    known.append(other)

    def __len__(self) -> int:
        return len(self._table)

    def propose(self, text: WordText, index: int, limit: int) -> list[str]:
        return self._table.get(text.words[index].lower(), [])[:limit]


class VectorCandidates:
    """The nearest words by cosine in a {word: vector} table (see the module docstring).

    Only lower-case whole words are candidates (a table of an uncased model's words is that).
    The table is one normalised float32 [words, dim] matrix; a word's neighbours are computed
    when first asked and kept.
    """

    def __init__(self, vectors: dict[str, np.ndarray], min_cos_sim: float = 0.5,
                 antonyms: Iterable[tuple[str, str]] = ()):
        if not -1.0 <= min_cos_sim <= 1.0:
            raise ValueError(f"min_cos_sim must be in [-1, 1], got {min_cos_sim}")
        self._words = [word for word in vectors if _WHOLE_WORD.fullmatch(word)]
        self._row = {word: row for row, word in enumerate(self._words)}
        matrix = np.stack([vectors[word] for word in self._words]).astype(np.float32) \
            if self._words else np.zeros((0, 1), np.float32)
        check_finite(self._words, matrix, "VectorCandidates")
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        self._matrix = matrix / np.maximum(norms, 1e-12)
        self._min_cos_sim = min_cos_sim
        self._excluded = _pair_set(antonyms)
        self._known: dict[tuple[str, int], list[str]] = {}

    def propose(self, text: WordText, index: int, limit: int) -> list[str]:
        word = text.words[index].lower()
        if word not in self._row:
            return []
        if (word, limit) not in self._known:
            cosines = self._matrix @ self._matrix[self._row[word]]
            order = np.argsort(-cosines, kind="stable")
            found = []
            for row in order:
                if cosines[row] < self._min_cos_sim or len(found) == limit:
                    break
                other = self._words[row]
                if other != word and frozenset((word, other)) not in self._excluded:
                    found.append(other)
            self._known[(word, limit)] = found
        return self._known[(word, limit)]


class MaskedLMCandidates:
    """BAE-R's replacements (see the module docstring): the word masked in the current text.

    `masked_lm` is an `official.lm_scoring.masked_lm.MaskedLanguageModel`: its `tokenizer`
    splits the text around the word, and `log_probs` scores the [MASK] put in its place (one
    [MASK] for the whole word, however many pieces it had). A context longer than the model's
    rows keeps the pieces nearest the mask.
    """

    def __init__(self, masked_lm, max_seq_length: int = 128):
        self._mlm = masked_lm
        self._max_seq_length = max_seq_length
        tokenizer = masked_lm.tokenizer
        self._cls, self._sep, self._mask = tokenizer.convert_tokens_to_ids(
            ["[CLS]", "[SEP]", "[MASK]"])
        vocab = tokenizer.inv_vocab
        self._whole_word = np.array([bool(_WHOLE_WORD.fullmatch(vocab[i]))
                                     and vocab[i] not in STOP_WORDS
                                     for i in range(len(vocab))])

    def propose(self, text: WordText, index: int, limit: int) -> list[str]:
        tokenizer = self._mlm.tokenizer
        before, after = (tokenizer.convert_tokens_to_ids(tokenizer.tokenize(part))
                         for part in text.around(index))
        room = self._max_seq_length - 3
        keep_before = min(len(before), max(room // 2, room - len(after)))
        before = before[len(before) - keep_before:]
        after = after[:room - keep_before]
        ids = [self._cls, *before, self._mask, *after, self._sep]
        log_probs = self._mlm.log_probs(np.array([ids], np.int32),
                                        np.ones((1, len(ids)), np.int32),
                                        np.array([[len(before) + 1]], np.int32))[0, 0]
        log_probs = np.where(self._whole_word[:len(log_probs)], log_probs, -np.inf)
        word = text.words[index].lower()
        found = []
        for token in np.argsort(-log_probs, kind="stable"):
            if not np.isfinite(log_probs[token]) or len(found) == limit:
                break
            candidate = tokenizer.inv_vocab[int(token)]
            if candidate != word:
                found.append(candidate)
        return found


class CombinedCandidates:
    """Several sources' candidates in order, each word once, at most `limit` in all."""

    def __init__(self, sources: list[Candidates]):
        self._sources = sources

    def propose(self, text: WordText, index: int, limit: int) -> list[str]:
        found: list[str] = []
        for source in self._sources:
            for word in source.propose(text, index, limit):
                if word not in found and len(found) < limit:
                    found.append(word)
        return found
