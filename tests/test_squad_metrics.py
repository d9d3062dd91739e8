"""SQuAD exact match and F1 on cases worked out by hand from the official scripts' definitions."""

from unittest import mock

import numpy as np
import pytest

from official.tasks import squad_metrics
from official.tasks.squad_metrics import (
    evaluate_v1,
    evaluate_v2,
    exact_match,
    normalize_answer,
    token_f1,
)


def _dataset(*questions):
    """A SQuAD JSON structure: one article, one paragraph per question ((id, [gold texts]))."""
    paragraphs = [{"context": "...", "qas": [{
        "id": qid, "question": "?", "is_impossible": not golds,
        "answers": [{"text": text, "answer_start": 0} for text in golds]}]}
        for qid, golds in questions]
    return {"version": "v2.0", "data": [{"title": "t", "paragraphs": paragraphs}]}


@pytest.mark.parametrize("text, normalised", [
    ("The  Quick, brown fox!", "quick brown fox"),
    ("an apple a day", "apple day"),
    ("theatre anthem", "theatre anthem"),  # articles only as whole words
    ("A.B.C.", "abc"),
    ("the-end", "theend"),  # punctuation goes before articles do
    ("(the) end", "end"),
    ("  Über\tcafé \n", "über café"),
    ("\u201cquoted\u201d", "\u201cquoted\u201d"),  # only ASCII punctuation is removed
    ("", ""),
])
def test_normalize_answer(text, normalised):
    assert normalize_answer(text) == normalised


def test_exact_match_after_normalisation():
    assert exact_match("the Broncos!", "Broncos") == 1.0
    assert exact_match("Denver Broncos", "Broncos") == 0.0
    assert exact_match("", "a") == 1.0  # both normalise to ""


@pytest.mark.parametrize("prediction, gold, f1", [
    ("the cat sat", "a cat sat on the mat", 2 / 3),  # P = 2/2, R = 2/4
    ("cat cat cat", "cat dog", 0.4),  # bags: one shared cat; P = 1/3, R = 1/2
    ("Santa Clara", "Santa Clara, California", 0.8),  # P = 1, R = 2/3
    ("dog", "cat", 0.0),
    ("Cat!", "the cat", 1.0),
    ("", "", 1.0),  # v2.0: a correct no-answer
    ("the", "", 1.0),
    ("", "cat", 0.0),
    ("cat", "", 0.0),
])
def test_token_f1(prediction, gold, f1):
    assert token_f1(prediction, gold) == pytest.approx(f1)


def test_v1_scores_empty_pairs_zero():
    assert token_f1("", "", empty_scores_zero=True) == 0.0
    assert token_f1("cat", "the cat", empty_scores_zero=True) == 1.0


def test_evaluate_v1_takes_the_best_gold_and_counts_missing_as_zero():
    dataset = _dataset(("q1", ["Denver Broncos", "Broncos"]),
                       ("q2", ["Santa Clara, California"]),
                       ("q3", ["Levi's Stadium"]))
    predictions = {"q1": "the Broncos!", "q2": "Santa Clara"}  # q3 missing
    with mock.patch.object(squad_metrics.logging, "warning") as warning:
        result = evaluate_v1(dataset, predictions)
    # q1: EM 1, F1 1 (against "Broncos"); q2: EM 0, F1 0.8; q3: 0 and 0.
    assert result == pytest.approx({"exact_match": 100 / 3, "f1": 180 / 3})
    assert warning.call_args.args[1:] == (1, 3)


def test_evaluate_v1_keeps_the_official_empty_quirk():
    # Gold "the" and prediction "a" both normalise to "": exact match 1 but F1 0 in v1.1.
    assert evaluate_v1(_dataset(("q", ["the"])), {"q": "a"}) == {"exact_match": 100.0, "f1": 0.0}


# Five questions; the comments give each one's raw (exact, f1) and its na_prob.
_V2_DATASET = _dataset(
    ("q1", ["Denver Broncos", "the Broncos"]),  # "Broncos": (1, 1), 0.1
    ("q2", ["Santa Clara, California"]),  # "Santa Clara": (0, 0.8), 0.4
    ("q3", []),  # unanswerable, "Levi's Stadium": (0, 0), 0.7
    ("q4", []),  # unanswerable, "": (1, 1), 0.2
    ("q5", ["gold"]),  # "silver": (0, 0), 0.9
)
_V2_PREDICTIONS = {"q1": "Broncos", "q2": "Santa Clara", "q3": "Levi's Stadium", "q4": "",
                   "q5": "silver"}
_V2_NA_PROBS = {"q1": 0.1, "q2": 0.4, "q3": 0.7, "q4": 0.2, "q5": 0.9}


def test_evaluate_v2_breaks_down_answerable_and_not():
    result = evaluate_v2(_V2_DATASET, _V2_PREDICTIONS)
    assert result == pytest.approx({
        "exact": 40.0, "f1": 56.0, "total": 5,  # (1+0+0+1+0)/5, (1+.8+0+1+0)/5
        "HasAns_exact": 100 / 3, "HasAns_f1": 60.0, "HasAns_total": 3,  # q1, q2, q5
        "NoAns_exact": 50.0, "NoAns_f1": 50.0, "NoAns_total": 2})  # q3, q4


def test_evaluate_v2_threshold_answers_nothing_above_it():
    # Above 0.5: q3 (right to answer nothing: now 1) and q5 (wrong either way: 0).
    result = evaluate_v2(_V2_DATASET, _V2_PREDICTIONS, _V2_NA_PROBS, na_prob_thresh=0.5)
    assert result["exact"] == pytest.approx(60.0)  # q1 + q3 + q4
    assert result["f1"] == pytest.approx(76.0)  # 1 + .8 + 1 + 1
    assert result["NoAns_exact"] == 100.0


def test_evaluate_v2_finds_the_best_threshold():
    # Everything answered "" scores the two unanswerable questions: 2. Raising the threshold past
    # q1 (0.1) +1 -> 3, q4 (0.2) +0 -> 3, q2 (0.4) exact +0 / f1 +0.8 -> 3 / 3.8, q3 (0.7) -1,
    # q5 (0.9) +0. Best exact 3/5 at 0.1 (the first to reach it), best F1 3.8/5 at 0.4.
    result = evaluate_v2(_V2_DATASET, _V2_PREDICTIONS, _V2_NA_PROBS)
    assert result["best_exact"] == pytest.approx(60.0)
    assert result["best_exact_thresh"] == 0.1
    assert result["best_f1"] == pytest.approx(76.0)
    assert result["best_f1_thresh"] == 0.4
    assert result["exact"] == pytest.approx(40.0)  # the default threshold 1.0 overrides nothing


def test_best_threshold_moves_past_a_tie_at_once():
    # a (+1 if answered) and b (-1 if answered) share na_prob 0.5: no threshold answers only a,
    # so the best is answering neither (b right, a wrong: 50%) at -inf; answering both also
    # gives 50% but is not better.
    dataset = _dataset(("a", ["x"]), ("b", []))
    result = evaluate_v2(dataset, {"a": "x", "b": "y"}, {"a": 0.5, "b": 0.5})
    assert result["best_exact"] == 50.0
    assert result["best_exact_thresh"] == float("-inf")


def test_unanswerable_prediction_normalising_to_empty_is_correct():
    dataset = _dataset(("q", []))
    assert evaluate_v2(dataset, {"q": "The."})["exact"] == 100.0
    result = evaluate_v2(dataset, {"q": "The."}, {"q": 0.3})
    assert result["best_exact"] == 100.0  # answering it scores 1, the same as answering ""


@pytest.mark.parametrize("seed", range(10))
def test_best_scores_are_what_their_thresholds_give(seed):
    rng = np.random.default_rng(seed)
    words = ["cat", "dog", "the", "red", "big"]
    questions, predictions, na_probs = [], {}, {}
    for index in range(30):
        golds = [" ".join(rng.choice(words, rng.integers(1, 4)))
                 for _ in range(rng.integers(0, 3))]
        questions.append((f"q{index}", golds))
        predictions[f"q{index}"] = ("" if rng.random() < 0.3
                                    else " ".join(rng.choice(words, rng.integers(1, 4))))
        na_probs[f"q{index}"] = float(rng.integers(0, 8)) / 8  # coarse: many ties
    dataset = _dataset(*questions)
    result = evaluate_v2(dataset, predictions, na_probs)
    for name in ("exact", "f1"):
        at_best = evaluate_v2(dataset, predictions, na_probs,
                              na_prob_thresh=result[f"best_{name}_thresh"])
        assert at_best[name] == pytest.approx(result[f"best_{name}"])
        for threshold in [-1.0, *na_probs.values()]:
            at_other = evaluate_v2(dataset, predictions, na_probs, na_prob_thresh=threshold)
            assert at_other[name] <= result[f"best_{name}"] + 1e-9


def test_evaluate_v2_counts_missing_predictions_as_zero():
    dataset = _dataset(("q1", ["cat"]), ("q2", []), ("q3", []))
    with mock.patch.object(squad_metrics.logging, "warning") as warning:
        result = evaluate_v2(dataset, {"q1": "cat", "q2": ""}, {"q1": 0.9, "q2": 0.1})
    assert warning.call_args.args[1:] == (1, 3)
    assert result["total"] == 3 and result["exact"] == pytest.approx(200 / 3)
    assert result["NoAns_exact"] == 50.0  # q3 stays wrong at every threshold
    assert result["best_exact"] == pytest.approx(200 / 3)


def test_evaluate_v2_needs_na_probs_for_every_prediction():
    with pytest.raises(ValueError, match="na_probs lacks 4 predicted questions"):
        evaluate_v2(_V2_DATASET, _V2_PREDICTIONS, {"q1": 0.1})
