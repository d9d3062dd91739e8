"""official/robustness/behavioral.py and suite.py: CheckList's rules on hand-made predictions.

Every expected count below is worked out by hand in the comments; the two-class band is also
checked against a transcription of CheckList's tutorial (`pred_and_conf`, notebooks/tutorials,
"Testing transformer pipelines") in numpy.
"""

import json

import numpy as np
import pytest

from official.robustness import behavioral
from official.robustness.suite import SuiteError, SuiteTest, read_suite

CLASSES = ("negative", "neutral", "positive")


def make_test(test_type, expectation, cases, labels=None, name="t", capability="C"):
    return SuiteTest(name, capability, test_type, "", CLASSES, cases, labels, expectation, "",
                     1)


def tutorial_pred_and_conf(pr):
    """CheckList's tutorial, transcribed: P(positive) -> (preds, three-class confs)."""
    pp = np.zeros((pr.shape[0], 3))
    margin_neutral = 1 / 3.
    mn = margin_neutral / 2.
    neg = pr < 0.5 - mn
    pp[neg, 0] = 1 - pr[neg]
    pp[neg, 2] = pr[neg]
    pos = pr > 0.5 + mn
    pp[pos, 0] = 1 - pr[pos]
    pp[pos, 2] = pr[pos]
    neutral_pos = (pr >= 0.5) * (pr < 0.5 + mn)
    pp[neutral_pos, 1] = 1 - (1 / margin_neutral) * np.abs(pr[neutral_pos] - 0.5)
    pp[neutral_pos, 2] = 1 - pp[neutral_pos, 1]
    neutral_neg = (pr < 0.5) * (pr > 0.5 - mn)
    pp[neutral_neg, 1] = 1 - (1 / margin_neutral) * np.abs(pr[neutral_neg] - 0.5)
    pp[neutral_neg, 0] = 1 - pp[neutral_neg, 1]
    return np.argmax(pp, axis=1), pp


def test_a_two_class_export_is_read_with_the_tutorials_neutral_band():
    p = np.array([0.1, 0.3, 0.4, 0.5, 0.6, 0.8, 1 / 3, 2 / 3])
    preds, confs = behavioral.suite_predictions(np.stack([1 - p, p], 1), [0, 2], 3)
    # Outside [1/3, 2/3]: (1 - p, 0, p); inside: neutral 1 - 3|p - 1/2|, the rest on p's side.
    np.testing.assert_allclose(confs, [[0.9, 0, 0.1], [0.7, 0, 0.3], [0.3, 0.7, 0],
                                       [0, 1, 0], [0, 0.7, 0.3], [0.2, 0, 0.8],
                                       [0.5, 0.5, 0], [0, 0.5, 0.5]], atol=1e-12)
    assert preds.tolist() == [0, 0, 1, 1, 1, 2, 1, 1]  # the band's ends are neutral here

    # Away from the two ends, exactly the tutorial's, in either column order.
    p = np.random.default_rng(0).uniform(size=1000)
    p = p[(np.abs(p - 1 / 3) > 1e-9) & (np.abs(p - 2 / 3) > 1e-9)]
    want_preds, want_confs = tutorial_pred_and_conf(p)
    for columns, probabilities in (([0, 2], np.stack([1 - p, p], 1)),
                                   ([2, 0], np.stack([p, 1 - p], 1))):
        preds, confs = behavioral.suite_predictions(probabilities, columns, 3)
        np.testing.assert_array_equal(preds, want_preds)
        np.testing.assert_allclose(confs, want_confs, atol=1e-12)


def test_a_three_class_export_is_reordered_to_the_suites_classes():
    probabilities = np.array([[0.7, 0.2, 0.1], [0.1, 0.3, 0.6]])  # positive, negative, neutral
    preds, confs = behavioral.suite_predictions(probabilities, [2, 0, 1], 3)
    np.testing.assert_allclose(confs, [[0.2, 0.1, 0.7], [0.3, 0.6, 0.1]])
    assert preds.tolist() == [2, 1]


def _judge(test, case, confs):
    confs = np.array(confs, np.float64)
    return behavioral.judge(test, case, confs.argmax(1), confs)


def test_mft_passes_on_the_label_or_an_allowed_class():
    label = make_test("MFT", {"kind": "label"}, ["a", "b"], [2, 0])
    assert _judge(label, 0, [[0.1, 0.2, 0.7]]) == [True]
    assert _judge(label, 1, [[0.1, 0.2, 0.7]]) == [False]
    qa_no = make_test("MFT", {"kind": "label", "allowed": {"1": [1, 2]}}, ["a", "b"], [1, 0])
    assert _judge(qa_no, 0, [[0.1, 0.2, 0.7]]) == [True]  # label 1: not negative
    assert _judge(qa_no, 1, [[0.1, 0.2, 0.7]]) == [False]  # label 0: negative only
    not_negative = make_test("MFT", {"kind": "allowed", "allowed": [1, 2]}, ["a"])
    assert _judge(not_negative, 0, [[0.5, 0.2, 0.3]]) == [False]
    assert _judge(not_negative, 0, [[0.3, 0.5, 0.2]]) == [True]


def test_inv_keeps_the_prediction_or_moves_its_probability_within_the_tolerance():
    inv = make_test("INV", {"kind": "inv", "tolerance": 0.1}, [["o", "p1", "p2", "p3"]])
    verdicts = _judge(inv, 0, [[0.2, 0.35, 0.45],    # the original: positive, 0.45
                               [0.1, 0.3, 0.6],      # still positive
                               [0.1, 0.48, 0.42],    # neutral now, P(positive) moved 0.03
                               [0.5, 0.2, 0.3]])     # negative, P(positive) moved 0.15
    assert verdicts == [True, True, True, False]
    strict = make_test("INV", {"kind": "inv", "tolerance": 0}, [["o", "p"]])
    assert _judge(strict, 0, [[0.2, 0.35, 0.45], [0.1, 0.48, 0.42]]) == [True, False]


def test_dir_monotonic_with_its_filters():
    up = make_test("DIR", {"kind": "monotonic", "label": None, "increasing": True,
                           "tolerance": 0.1, "skip_original": [1]}, [["o", "p", "q"]])
    # P(positive) 0.7 -> 0.85 and 0.65 (>= 0.7 - 0.1): both pass; -> 0.55 fails.
    assert _judge(up, 0, [[0.1, 0.2, 0.7], [0.05, 0.1, 0.85], [0.2, 0.15, 0.65]]) == [
        True, True, True]
    assert _judge(up, 0, [[0.1, 0.2, 0.7], [0.3, 0.15, 0.55], [0.05, 0.1, 0.85]]) == [
        True, False, True]
    assert _judge(up, 0, [[0.2, 0.5, 0.3], [0.9, 0.05, 0.05], [0.9, 0.05, 0.05]]) is None
    fixed = make_test("DIR", {"kind": "monotonic", "label": 2, "increasing": True,
                              "tolerance": 0.1}, [["o", "p"]])
    # The original's P(positive) is 0.05 <= 0.1: it cannot fall by more than 0.1.
    assert _judge(fixed, 0, [[0.85, 0.1, 0.05], [0.99, 0.01, 0.0]]) is None
    down = make_test("DIR", {"kind": "monotonic", "label": None, "increasing": False,
                             "tolerance": 0.1}, [["o", "p", "q"]])
    assert _judge(down, 0, [[0.05, 0.0, 0.95], [0, 0, 1], [0, 0, 1]]) is None  # 0.95 >= 0.9
    # 0.8 -> 0.95 rises by 0.15 > 0.1 (fails); -> 0.88 by 0.08 (passes).
    assert _judge(down, 0, [[0.1, 0.1, 0.8], [0.05, 0.0, 0.95], [0.1, 0.02, 0.88]]) == [
        True, False, True]


def test_dir_shift_of_positive_minus_negative():
    up = make_test("DIR", {"kind": "shift", "up": 2, "down": 0, "increasing": True,
                           "tolerance": 0.1}, [["o", "p", "q"]])
    # P(pos) - P(neg): 0.2 originally; 0.0 (fell 0.2: fails), 0.12 (fell 0.08: passes).
    assert _judge(up, 0, [[0.3, 0.2, 0.5], [0.4, 0.2, 0.4], [0.34, 0.2, 0.46]]) == [
        True, False, True]
    down = make_test("DIR", {"kind": "shift", "up": 2, "down": 0, "increasing": False,
                             "tolerance": 0.1}, [["o", "p"]])
    assert _judge(down, 0, [[0.3, 0.2, 0.5], [0.2, 0.2, 0.6]]) == [True, False]  # rose 0.2


# A two-class model whose P(positive) is given per text, through run_suite.
P_POSITIVE = {"a": 0.9, "b": 0.2, "c": 0.5, "d": 0.6, "e": 0.1, "f": 0.4, "g": 0.99,
              "k": 0.9, "l": 0.85, "m": 0.62, "n": 0.95, "o": 0.97, "p": 0.55, "q": 0.1,
              "r": 0.15}
SUITE = [
    # a positive ok, b negative ok, c neutral ok, d neutral (label positive): 1 of 4 fails.
    make_test("MFT", {"kind": "label"}, ["a", "b", "c", "d"], [2, 0, 1, 2], "words", "Vocab"),
    # e negative fails; f neutral, g positive pass: 1 of 3.
    make_test("MFT", {"kind": "allowed", "allowed": [1, 2]}, ["e", "f", "g"], None,
              "not negative", "Negation"),
    # k/l positive; m (0.62) neutral with P(positive) 3(0.62 - 0.5) = 0.36, moved 0.54: fails.
    # n/o positive: passes. 1 of 2.
    make_test("INV", {"kind": "inv", "tolerance": 0.1}, [["k", "l", "m"], ["n", "o"]], None,
              "typos", "Robustness"),
    # From q (negative, P(negative) 0.9) to r (0.85 >= 0.9 - 0.1): passes; from f (neutral):
    # left out; from a (positive, 0.9) to p (neutral, P(positive) 3(0.55 - 0.5) = 0.15):
    # fails. 1 of 2 evaluated, 1 filtered.
    make_test("DIR", {"kind": "monotonic", "label": None, "increasing": True,
                      "tolerance": 0.1, "skip_original": [1]},
              [["q", "r"], ["f", "a"], ["a", "p"]], None, "intensifiers", "Vocab"),
]


def test_run_suite_counts_failures_per_test_and_capability():
    asked = []

    def model(texts):
        asked.append(list(texts))
        p = np.array([P_POSITIVE[t] for t in texts], np.float32)
        return np.stack([1 - p, p], 1)

    results = behavioral.run_suite(SUITE, model, [0, 2])
    assert [(r["run"], r["filtered"], r["failed"]) for r in results] == [
        (4, 0, 1), (3, 0, 1), (2, 0, 1), (3, 1, 1)]
    assert [r["failure_rate"] for r in results] == [0.25, 1 / 3, 0.5, 0.5]
    assert sorted(asked[0]) == sorted(P_POSITIVE)  # every text once, in one call

    words, _, typos, intensifiers = results
    assert words["examples"] == [{"case": 4, "label": "positive", "texts": [
        {"text": "d", "prediction": "neutral",
         "probabilities": [0.0, round(1 - 3 * (0.6 - 0.5), 4), round(3 * (0.6 - 0.5), 4)]}]}]
    assert [t["text"] for t in typos["examples"][0]["texts"]] == ["k", "m"]  # original, failing
    assert [t["prediction"] for t in typos["examples"][0]["texts"]] == ["positive", "neutral"]
    assert intensifiers["examples"][0]["case"] == 3

    summary = behavioral.capability_summary(results)
    assert [(c["capability"], c["tests"], c["run"], c["filtered"], c["failed"])
            for c in summary] == [("Vocab", 2, 7, 1, 2), ("Negation", 1, 3, 0, 1),
                                  ("Robustness", 1, 2, 0, 1)]
    assert summary[0]["failure_rate"] == 2 / 6 and summary[0]["mean_test_failure_rate"] == 0.375
    report = {"export": "/e/1", "suite": "s.jsonl", "sample": None, "seed": 0,
              "label_map": {"0": "negative", "1": "positive"}, "tests": results,
              "capabilities": summary}
    text = behavioral.markdown(report)
    assert "| Vocab | words | MFT | 4 | 4 | 0 | 1 | 25.0% |" in text
    assert "| Vocab | 2 | 7 | 1 | 2 | 33.3% | 37.5% |" in text
    assert "  - `d` -> neutral (0.00 0.70 0.30)" in text


def test_sampling_is_reproducible_without_replacement_in_suite_order():
    test = make_test("MFT", {"kind": "allowed", "allowed": [1]}, [str(i) for i in range(50)])
    first = behavioral.sample_cases(test, 3, 10, seed=7)
    assert first == behavioral.sample_cases(test, 3, 10, seed=7)
    assert len(set(first)) == 10 and first == sorted(first) and max(first) < 50
    assert first != behavioral.sample_cases(test, 3, 10, seed=8)
    assert first != behavioral.sample_cases(test, 4, 10, seed=7)  # each test its own draw
    assert behavioral.sample_cases(test, 3, 50, seed=7) == list(range(50))
    assert behavioral.sample_cases(test, 3, None, seed=7) == list(range(50))


@pytest.mark.parametrize("labels, mapping, error", [
    (["0", "1"], {"0": "negative"}, "the export's label '1' is not in the label map"),
    (["0", "1"], {"0": "negative", "1": "positive", "2": "neutral"},
     "the label map names '2', not one of the export's labels"),
    (["0", "1"], {"0": "negative", "1": "happy"}, "names the class 'happy', which the suite"),
    (["a"], {"a": "negative"}, "cover 1 of the suite's 3 classes"),
    (["0", "1"], {"0": "negative", "1": "neutral"},
     "must map to the suite's outer classes .negative, positive.: the band between them is "
     "neutral, not positive"),
])
def test_label_maps_that_do_not_fit_are_refused(labels, mapping, error):
    with pytest.raises(ValueError, match=error):
        behavioral.export_columns(labels, mapping, CLASSES)


def test_label_map_parsing_and_defaults():
    assert behavioral.parse_label_map("0:negative, 1:positive") == {"0": "negative",
                                                                     "1": "positive"}
    for bad in ("0=negative", "0:negative,0:positive", "0:negative,1:negative"):
        with pytest.raises(ValueError):
            behavioral.parse_label_map(bad)
    assert behavioral.default_label_map(["0", "1"], CLASSES) == {"0": "negative",
                                                                  "1": "positive"}
    assert behavioral.default_label_map(["positive", "negative"], CLASSES) == {
        "positive": "positive", "negative": "negative"}
    with pytest.raises(ValueError, match="say which is which with --label_map"):
        behavioral.default_label_map(["pos", "neg"], CLASSES)


GOOD = {"name": "t", "capability": "C", "type": "MFT", "classes": list(CLASSES),
        "cases": ["a"], "labels": 1, "expectation": {"kind": "label"}}


@pytest.mark.parametrize("change, error", [
    ({"type": "XYZ"}, "type 'XYZ' is not one of MFT, INV, DIR"),
    ({"cases": [["a", "b"]]}, "case 1 is not a text"),
    ({"type": "INV", "expectation": {"kind": "inv", "tolerance": 0.1}, "cases": ["a"]},
     "case 1 is not a list of texts"),
    ({"labels": [1, 2]}, "'labels' must hold one label id (0-2) per case"),
    ({"labels": 3}, "'labels' must be a label id (0-2)"),
    ({"labels": None}, "a label expectation needs labels"),
    ({"expectation": {"kind": "inv", "tolerance": 0.1}}, "a MFT expectation's kind is one of"),
    ({"type": "DIR", "cases": [["a", "b"]], "labels": None,
      "expectation": {"kind": "monotonic", "label": None, "tolerance": 0.1}},
     'needs "increasing"'),
    ({"name": 5}, "'name' missing or not a str"),
])
def test_suite_lines_are_checked_with_file_and_line(tmp_path, change, error):
    second = dict(GOOD, name="u")
    second.update(change)
    path = tmp_path / "suite.jsonl"
    path.write_text(json.dumps(GOOD) + "\n\n" + json.dumps(second) + "\n")
    with pytest.raises(SuiteError) as raised:
        read_suite(str(path))
    assert str(raised.value).startswith(f"{path}:3: ") and error in str(raised.value)


def test_suite_files_as_a_whole_are_checked(tmp_path):
    path = tmp_path / "suite.jsonl"
    path.write_text(json.dumps(GOOD) + "\n" + json.dumps(GOOD) + "\n")
    with pytest.raises(SuiteError, match=r":2: test 't' again \(first on line 1\)"):
        read_suite(str(path))
    path.write_text(json.dumps(GOOD) + "\n" + json.dumps(dict(GOOD, name="u",
                                                              classes=["neg", "pos"])) + "\n")
    with pytest.raises(SuiteError, match=r":2: classes \['neg', 'pos'\] differ from line 1"):
        read_suite(str(path))
    path.write_text("{not json\n")
    with pytest.raises(SuiteError, match=r":1: not JSON"):
        read_suite(str(path))
    with pytest.raises(SuiteError, match="no such file"):
        read_suite(str(tmp_path / "missing.jsonl"))
