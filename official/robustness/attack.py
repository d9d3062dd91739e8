"""The greedy word-substitution attack of TextFooler (Jin et al., AAAI 2020) and BAE (Garg &
Ramakrishnan, EMNLP 2020), on any classifier given as a function, and TextAttack's summary.

    attack = WordSubstitutionAttack(classify, candidates, AttackSettings(max_queries=2000),
                                    similarity=embed, pos_tagger=tagger)
    result = attack.run("a charming and often affecting journey", gold=1)
    summarize([result, ...])    -> {"Number of successful attacks": ..., ...}

`classify(texts) -> float32 [texts, classes]` is the victim (its class probabilities; every
call is one batch); `similarity(texts) -> float32 [texts, dim]` a sentence encoder whose
vectors' cosine measures how close a swap keeps the words around it (`similarity_window`);
`pos_tagger(texts) -> [[UPOS tag per word] per text]` a part-of-speech tagger
(`part_of_speech`); `candidates` a `candidates.Candidates` source. Queries count the texts
`classify` is given (TextAttack's count: a batch of 50 candidates is 50 queries); the encoder's
and the tagger's calls are not queries.

The search, for an example the classifier gets right (otherwise it is skipped):
  1. Word importance by deletion: each replaceable word that is not a stop word is deleted in
     turn (DELETIONS_PER_CALL texts a call, as far as the budget goes); its importance is the
     drop in the gold class's probability (BAE's rule, `importance="drop"`), plus, for
     TextFooler's (eq. 2, `importance="textfooler"`), when the deletion changes the prediction
     to class k, the rise of class k's probability.
  2. In that order (most important first; ties by position), the word's candidates are put in
     its place in the current text. Before any query, TextFooler's two filters drop
     candidates: the similarity constraint (`similarity_window`: the window of
     `window_size` words around the swap, cosine at least `similarity_threshold` with the
     same window of the current text; or, with `window_size=0`, the whole text with the
     original), then the part-of-speech filter (`part_of_speech`: the
     replacement's tag in its new text against the word's tag in the original). The rest are
     classified in one batch. If some flip the prediction away from the gold class, the one
     most similar wins and the attack has succeeded (TextFooler's choice).
     If none does, the one that lowers the gold probability most is kept, if it lowers it at
     all, and the search moves to the next word.
  3. The attack fails when the words run out, or when the next batch would pass `max_queries`
     (that batch is cut to what is left, and the search stops after it).
A word is replaced at most once; replaced words are never deleted for ranking again. The
result's similarity is the whole perturbed text's cosine with the original (one encoder call),
whatever window the constraint used.
"""

from __future__ import annotations

import dataclasses
from typing import Callable

import numpy as np

from official.robustness.candidates import STOP_WORDS, Candidates
from official.robustness.part_of_speech import same_part_of_speech
from official.robustness.similarity_window import (
    SIMILARITY_THRESHOLD,
    WINDOW_SIZE,
    WindowedSimilarity,
    cosines,
)
from official.robustness.text_words import WordText

SUCCEEDED, FAILED, SKIPPED = "successful", "failed", "skipped"
IMPORTANCE = ("textfooler", "drop")
# Word deletions classified per call in step 1 (a bound on the copies of a text held at once).
DELETIONS_PER_CALL = 256


@dataclasses.dataclass(frozen=True)
class AttackSettings:
    """An attack's limits.

    Attributes:
      max_candidates: candidates tried per word (TextFooler's N, 50).
      max_queries: texts classified per example, the original included (TextAttack's
        budget).
      similarity_threshold: the least cosine between a swap's window and the current text's
        (`similarity_window`); used only with a `similarity` encoder.
      importance: how deleting a word scores it (step 1 of the module docstring).
      window_size: the words around a swap the encoder compares (0: the whole texts, each
        against the original).
      noun_verb_swap: whether the part-of-speech filter lets a noun replace a verb and back
        (TextFooler's code; used only with a `pos_tagger`).
    """
    max_candidates: int = 50
    max_queries: int = 2000
    similarity_threshold: float = SIMILARITY_THRESHOLD
    importance: str = "textfooler"
    window_size: int = WINDOW_SIZE
    noun_verb_swap: bool = True

    def check(self) -> None:
        if self.max_candidates < 1:
            raise ValueError(f"--max_candidates={self.max_candidates}: must be at least 1")
        if self.max_queries < 2:
            raise ValueError(f"--max_queries={self.max_queries}: must be at least 2 (the "
                             "original's prediction and one perturbed text)")
        if self.importance not in IMPORTANCE:
            raise ValueError(f"importance must be one of {', '.join(IMPORTANCE)}, got "
                             f"{self.importance!r}")
        if not -1.0 <= self.similarity_threshold <= 1.0:
            raise ValueError(f"--similarity_threshold={self.similarity_threshold}: must be a "
                             "cosine, in [-1, 1]")
        if self.window_size < 0:
            raise ValueError(f"--similarity_window={self.window_size}: must be 0 (the whole "
                             "text) or more")


@dataclasses.dataclass
class AttackResult:
    """One example's attack.

    Attributes:
      status: "successful", "failed" or "skipped" (misclassified before any change).
      original, perturbed: the texts (perturbed equals original when nothing was kept).
      gold: the gold class's index; predicted: the perturbed text's predicted class.
      changes: (word index, original word, replacement) of each replaced word.
      words: the original's word count; queries: classifier calls made.
      similarity: cosine of the perturbed text with the original (None without an encoder).
      gold_probability: the gold class's probability, before and after.
    """
    status: str
    original: str
    perturbed: str
    gold: int
    predicted: int
    changes: list[tuple[int, str, str]]
    words: int
    queries: int
    similarity: float | None
    gold_probability: tuple[float, float]

    @property
    def perturbed_word_percent(self) -> float:
        return 100.0 * len(self.changes) / max(self.words, 1)

    def record(self, labels: list[str]) -> dict:
        """The result as one JSON object of an attack's output, classes named by `labels`."""
        return {"status": self.status, "label": labels[self.gold],
                "predicted": labels[self.predicted], "original": self.original,
                "perturbed": self.perturbed,
                "changes": [{"word": i, "original": old, "replacement": new}
                            for i, old, new in self.changes],
                "words": self.words, "queries": self.queries, "similarity": self.similarity,
                "gold_probability": list(self.gold_probability)}

    @classmethod
    def from_record(cls, record: dict, labels: list[str]) -> AttackResult:
        """`record`'s result back (raises KeyError, ValueError or TypeError if it is not one)."""
        return cls(record["status"], record["original"], record["perturbed"],
                   labels.index(record["label"]), labels.index(record["predicted"]),
                   [(c["word"], c["original"], c["replacement"]) for c in record["changes"]],
                   int(record["words"]), int(record["queries"]), record["similarity"],
                   tuple(record["gold_probability"]))


class _Budget:
    """Queries left for one example; `classify` cuts a batch to them."""

    def __init__(self, classify: Callable, limit: int):
        self._classify, self.limit, self.used = classify, limit, 0

    @property
    def left(self) -> int:
        return max(self.limit - self.used, 0)

    @property
    def exhausted(self) -> bool:
        return self.used >= self.limit

    def __call__(self, texts: list[WordText]) -> np.ndarray:
        texts = texts[:self.limit - self.used]
        if not texts:
            return np.zeros((0, 0), np.float32)
        self.used += len(texts)
        return np.asarray(self._classify([t.text for t in texts]), np.float32)


class WordSubstitutionAttack:
    """The search of the module docstring."""

    def __init__(self, classify: Callable[[list[str]], np.ndarray], candidates: Candidates,
                 settings: AttackSettings = AttackSettings(),
                 similarity: Callable[[list[str]], np.ndarray] | None = None,
                 pos_tagger: Callable[[list[str]], list[list[str | None]]] | None = None):
        settings.check()
        self._classify, self._candidates = classify, candidates
        self._settings, self._similarity, self._tagger = settings, similarity, pos_tagger
        self._window = None if similarity is None else WindowedSimilarity(
            similarity, settings.window_size, settings.similarity_threshold)

    def _importance(self, text: WordText, probabilities: np.ndarray, gold: int,
                    budget: _Budget) -> list[int]:
        """The attackable words' indices, most important first (step 1)."""
        indices = [i for i in range(len(text))
                   if text.replaceable(i) and text.words[i].lower() not in STOP_WORDS]
        scores = []
        # The deletions are made a batch at a time, never more than the budget takes: each is
        # a copy of the text, so all at once would grow as the text's words squared.
        for start in range(0, len(indices), DELETIONS_PER_CALL):
            if budget.exhausted:
                break
            for row in budget([text.deleted(i) for i in
                               indices[start:start + min(DELETIONS_PER_CALL, budget.left)]]):
                score = probabilities[gold] - row[gold]
                now = int(np.argmax(row))
                if now != gold and self._settings.importance == "textfooler":
                    score += row[now] - probabilities[now]
                scores.append(score)
        indices = indices[:len(scores)]
        order = sorted(range(len(indices)), key=lambda k: (-scores[k], indices[k]))
        return [indices[k] for k in order]

    def _filtered(self, original: str, current: WordText, index: int, words: list[str],
                  original_tag: str | None) -> tuple[list[WordText], list[str], np.ndarray]:
        """The candidates that pass both filters (step 2): their texts, their words and their
        similarities (1 without an encoder)."""
        texts = [current.replaced(index, word) for word in words]
        similarities = np.ones(len(texts), np.float32)
        if self._window is not None and texts:
            similarities, kept = self._window(original, current, index, texts)
            texts, words = ([x for x, k in zip(items, kept) if k] for items in (texts, words))
            similarities = similarities[kept]
        if self._tagger is not None and texts:
            kept = np.array([same_part_of_speech(original_tag, tags[index],
                                                 self._settings.noun_verb_swap)
                             for tags in self._tagger([t.text for t in texts])], bool)
            texts, words = ([x for x, k in zip(items, kept) if k] for items in (texts, words))
            similarities = similarities[kept]
        return texts, words, similarities

    def run(self, text: str, gold: int) -> AttackResult:
        original = WordText(text)
        budget = _Budget(self._classify, self._settings.max_queries)
        probabilities = budget([original])[0]
        start = float(probabilities[gold])

        def result(status, current, predicted, changes, gold_probability):
            similarity = None
            if self._similarity is not None:
                similarity = 1.0 if current == original else float(
                    cosines(self._similarity, text, [current.text])[0])
            return AttackResult(status, text, current.text, gold, predicted, changes,
                                len(original), budget.used, similarity,
                                (start, float(gold_probability)))

        if int(np.argmax(probabilities)) != gold:
            return AttackResult(SKIPPED, text, text, gold, int(np.argmax(probabilities)), [],
                                len(original), budget.used, None, (start, start))
        tags = None if self._tagger is None else self._tagger([text])[0]
        current, current_probability, changes = original, probabilities, []
        for index in self._importance(original, probabilities, gold, budget):
            if budget.exhausted:
                break
            words = self._candidates.propose(current, index, self._settings.max_candidates)
            texts, words, similarities = self._filtered(
                text, current, index, words, None if tags is None else tags[index])
            if not texts:
                continue
            rows = budget(texts)
            if not len(rows):
                break
            texts, words, similarities = texts[:len(rows)], words[:len(rows)], \
                similarities[:len(rows)]
            predicted = np.argmax(rows, axis=-1)
            flipped = np.flatnonzero(predicted != gold)
            if flipped.size:
                best = flipped[np.argmax(similarities[flipped])]
                changes = changes + [(index, original.words[index], words[best])]
                return result(SUCCEEDED, texts[best], int(predicted[best]), changes,
                              rows[best][gold])
            best = int(np.argmin(rows[:, gold]))
            if rows[best, gold] < current_probability[gold]:
                current, current_probability = texts[best], rows[best]
                changes = changes + [(index, original.words[index], words[best])]
        return result(FAILED, current, int(np.argmax(current_probability)), changes,
                      current_probability[gold])


def summarize(results: list[AttackResult]) -> dict[str, float | int]:
    """TextAttack's attack summary, under its names and with its meanings:

      successful / failed / skipped attacks   counts
      Original accuracy        (successful + failed) / all, in %
      Accuracy under attack    failed / all, in %
      Attack success rate      successful / (successful + failed), in %
      Average perturbed word % over successful attacks: words replaced / the original's words
      Average num. words per input   over all examples
      Avg num queries          over successful and failed attacks (skipped ones cost one)
    """
    count = {status: sum(r.status == status for r in results)
             for status in (SUCCEEDED, FAILED, SKIPPED)}
    attacked = [r for r in results if r.status != SKIPPED]
    succeeded = [r for r in results if r.status == SUCCEEDED]

    def percent(part: int, whole: int) -> float:
        return round(100.0 * part / whole, 2) if whole else 0.0

    def mean(values: list[float]) -> float:
        return round(float(np.mean(values)), 2) if values else 0.0

    return {
        "Number of successful attacks": count[SUCCEEDED],
        "Number of failed attacks": count[FAILED],
        "Number of skipped attacks": count[SKIPPED],
        "Original accuracy": percent(len(attacked), len(results)),
        "Accuracy under attack": percent(count[FAILED], len(results)),
        "Attack success rate": percent(count[SUCCEEDED], len(attacked)),
        "Average perturbed word %": mean([r.perturbed_word_percent for r in succeeded]),
        "Average num. words per input": mean([r.words for r in results]),
        "Avg num queries": mean([r.queries for r in attacked]),
    }
