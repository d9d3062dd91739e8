"""SQuAD's exact match and F1, as its official v1.1 and v2.0 evaluation scripts define them.

Both compare a predicted answer text with each gold answer text after `normalize_answer` (lower
case, no punctuation, no English articles, single spaces) and keep the best gold:

- exact match: 1 if the normalised strings are equal, else 0;
- F1: over the bags of whitespace tokens of the normalised strings, with
  precision = |common| / |predicted tokens|, recall = |common| / |gold tokens|.

and average over every question, as percentages (0-100, the numbers papers print).

SQuAD 2.0 adds unanswerable questions (`answers` empty; the file's `is_impossible` says the same):
their only gold answer is "", so predicting "" scores 1 and anything else 0. A model gives, per
question, a no-answer score ("na_prob": a probability, or the original BERT's null-score
difference); a question whose na_prob exceeds `na_prob_thresh` is answered with "". `evaluate_v2`
can also sweep that threshold and report the best one (`best_exact`, `best_exact_thresh`, ...),
which is how the original run_squad's `--null_score_diff_threshold` is chosen on dev.

Where this differs from the official scripts, on purpose:
- A question without a prediction scores 0 and stays in every denominator, in v1 (as official) and
  in v2 (whose script leaves it out of `total` and then fails on the HasAns breakdown). The count
  is logged as a warning.
- The threshold sweep moves past all questions of a tied na_prob at once, and its starting point
  (every question answered "") is reported as threshold -inf, so that evaluating at the returned
  threshold reproduces the returned best score. The official sweep can stop inside a tie, and
  returns 0.0 for the start, which a threshold on null-score differences (often negative) does
  not reproduce. With distinct na_probs above 0 the two agree.
- In the sweep an unanswerable question's change is its own score ("the" normalises to "", so it
  counts as correct), where the official sweep treats every non-empty string as wrong.
"""

from __future__ import annotations

import collections
import re
import string
from typing import Any, Iterator, Mapping

from absl import logging

_PUNCTUATION = frozenset(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")


def normalize_answer(text: str) -> str:
    """Lower case, drop ASCII punctuation, drop the words a/an/the, collapse whitespace.

    In this order: punctuation goes first, so "the-end" -> "theend" keeps its article-like
    prefix while "(the) end" -> "end". Only `string.punctuation` is removed (not Unicode
    punctuation), as in the official scripts.
    """
    text = "".join(character for character in text.lower() if character not in _PUNCTUATION)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def exact_match(prediction: str, gold: str) -> float:
    """1.0 if the two normalise to the same string, else 0.0."""
    return float(normalize_answer(prediction) == normalize_answer(gold))


def token_f1(prediction: str, gold: str, *, empty_scores_zero: bool = False) -> float:
    """F1 of the normalised tokens as bags: a repeated token counts as often as both sides have it.

    When either side normalises to no tokens, the score is 1.0 if both do and 0.0 otherwise (v2.0:
    "" is the correct answer to an unanswerable question). `empty_scores_zero=True` gives v1.1's
    0.0 even when both are empty, a case only answers like "the" or "." reach.
    """
    prediction_tokens = normalize_answer(prediction).split()
    gold_tokens = normalize_answer(gold).split()
    if not prediction_tokens or not gold_tokens:
        return 0.0 if empty_scores_zero else float(prediction_tokens == gold_tokens)
    common = collections.Counter(prediction_tokens) & collections.Counter(gold_tokens)
    shared = sum(common.values())
    if shared == 0:
        return 0.0
    precision, recall = shared / len(prediction_tokens), shared / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)


def _questions(dataset: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    """Every `qas` entry of a SQuAD JSON file's contents, in file order."""
    for article in dataset["data"]:
        for paragraph in article["paragraphs"]:
            yield from paragraph["qas"]


def _warn_missing(missing: int, total: int) -> None:
    if missing:
        logging.warning("%d of %d questions have no prediction; each scores 0.", missing, total)


def evaluate_v1(dataset: Mapping[str, Any], predictions: Mapping[str, str]) -> dict[str, float]:
    """SQuAD v1.1's `{"exact_match", "f1"}` in percent.

    Args:
      dataset: a SQuAD JSON file's contents, `{"data": [{"paragraphs": [{"qas": [{"id",
        "answers": [{"text", "answer_start"}, ...]}, ...]}, ...]}, ...]}`.
      predictions: question id -> predicted answer text.
    """
    total = missing = 0
    exact = f1 = 0.0
    for question in _questions(dataset):
        total += 1
        if question["id"] not in predictions:
            missing += 1
            continue
        prediction = predictions[question["id"]]
        golds = [answer["text"] for answer in question["answers"]]
        exact += max(exact_match(prediction, gold) for gold in golds)
        f1 += max(token_f1(prediction, gold, empty_scores_zero=True) for gold in golds)
    _warn_missing(missing, total)
    return {"exact_match": 100.0 * exact / total, "f1": 100.0 * f1 / total}


def _scores_v2(dataset: Mapping[str, Any], predictions: Mapping[str, str]
               ) -> tuple[dict[str, tuple[float, float] | None], dict[str, bool]]:
    """Per question: (exact, f1) against its golds, or None when unpredicted; and has-answer."""
    raw: dict[str, tuple[float, float] | None] = {}
    has_answer: dict[str, bool] = {}
    for question in _questions(dataset):
        qid = question["id"]
        has_answer[qid] = bool(question["answers"])
        # Golds that normalise to nothing are dropped; none left means the gold is "" (no answer).
        golds = [answer["text"] for answer in question["answers"]
                 if normalize_answer(answer["text"])] or [""]
        if qid not in predictions:
            raw[qid] = None
            continue
        raw[qid] = (max(exact_match(predictions[qid], gold) for gold in golds),
                    max(token_f1(predictions[qid], gold) for gold in golds))
    return raw, has_answer


def _score_at(raw: tuple[float, float] | None, has_answer: bool, answers_nothing: bool
              ) -> tuple[float, float]:
    """A question's (exact, f1) when its prediction is replaced by "" if `answers_nothing`."""
    if raw is None:
        return 0.0, 0.0
    if answers_nothing:
        return (0.0, 0.0) if has_answer else (1.0, 1.0)
    return raw


def _best_threshold(raw: Mapping[str, tuple[float, float] | None], has_answer: Mapping[str, bool],
                    na_probs: Mapping[str, float], metric: int) -> tuple[float, float]:
    """The na_prob threshold maximising the total of `metric` (0: exact, 1: f1), and that total.

    Threshold t answers "" where na_prob > t. Start below every na_prob (everything answered "":
    the unanswerable questions score 1 each), then raise t past the questions in na_prob order;
    each one passed switches from "" to its own prediction, changing the total by its own score
    minus its "" score. Only the totals after a whole run of equal na_probs are reachable.
    """
    predicted = sorted((qid for qid in raw if raw[qid] is not None), key=lambda q: na_probs[q])
    total = sum(_score_at(raw[qid], has_answer[qid], True)[metric] for qid in predicted)
    best_total, best_threshold = total, float("-inf")
    for position, qid in enumerate(predicted):
        total += (_score_at(raw[qid], has_answer[qid], False)[metric]
                  - _score_at(raw[qid], has_answer[qid], True)[metric])
        run_continues = (position + 1 < len(predicted)
                         and na_probs[predicted[position + 1]] == na_probs[qid])
        if not run_continues and total > best_total:
            best_total, best_threshold = total, float(na_probs[qid])
    return best_total, best_threshold


def evaluate_v2(dataset: Mapping[str, Any], predictions: Mapping[str, str],
                na_probs: Mapping[str, float] | None = None,
                na_prob_thresh: float = 1.0) -> dict[str, float]:
    """SQuAD v2.0's evaluation, in percent, with the official output's keys.

    Args:
      dataset: a SQuAD 2.0 JSON file's contents (see `evaluate_v1`); a question with no
        `answers` is unanswerable.
      predictions: question id -> predicted text, "" for "no answer".
      na_probs: question id -> no-answer score, higher meaning more likely unanswerable; needed
        for every predicted question. None: never override a prediction, and no threshold sweep.
      na_prob_thresh: questions with na_prob above this are answered "".

    Returns:
      exact, f1, total; HasAns_exact, HasAns_f1, HasAns_total and NoAns_* over the answerable and
      unanswerable questions (each group only when present); with na_probs, also best_exact,
      best_exact_thresh, best_f1, best_f1_thresh from the threshold sweep (see module docstring).
    """
    raw, has_answer = _scores_v2(dataset, predictions)
    if na_probs is not None:
        unscored = [qid for qid in raw if raw[qid] is not None and qid not in na_probs]
        if unscored:
            raise ValueError(f"na_probs lacks {len(unscored)} predicted questions, e.g. "
                             f"{unscored[0]!r}")
    scores = {qid: _score_at(raw[qid], has_answer[qid],
                             na_probs is not None and raw[qid] is not None
                             and na_probs[qid] > na_prob_thresh)
              for qid in raw}
    _warn_missing(sum(score is None for score in raw.values()), len(raw))

    def breakdown(qids: list[str], prefix: str) -> dict[str, float]:
        return {f"{prefix}exact": 100.0 * sum(scores[q][0] for q in qids) / len(qids),
                f"{prefix}f1": 100.0 * sum(scores[q][1] for q in qids) / len(qids),
                f"{prefix}total": len(qids)}

    result = breakdown(list(raw), "")
    answerable = [qid for qid in raw if has_answer[qid]]
    unanswerable = [qid for qid in raw if not has_answer[qid]]
    if answerable:
        result.update(breakdown(answerable, "HasAns_"))
    if unanswerable:
        result.update(breakdown(unanswerable, "NoAns_"))
    if na_probs is not None:
        for metric, name in enumerate(("exact", "f1")):
            best_total, threshold = _best_threshold(raw, has_answer, na_probs, metric)
            result[f"best_{name}"] = 100.0 * best_total / len(raw)
            result[f"best_{name}_thresh"] = threshold
    return result
