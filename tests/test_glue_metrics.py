"""GLUE metrics against scikit-learn and scipy, and against formulas worked out by hand."""

import math
import warnings

import numpy as np
import pytest
import scipy.stats
import sklearn.metrics

from official.tasks import glue_metrics


def _random_pairs(seeds=range(5), size=50, classes=2):
    for seed in seeds:
        rng = np.random.default_rng(seed)
        yield rng.integers(0, classes, size), rng.integers(0, classes, size)


# Edge cases: perfect, inverted, constant predictions, constant labels, no positives at all, one
# row.
_EDGE_CASES = [
    ([0, 1, 1, 0], [0, 1, 1, 0]),
    ([0, 1, 1, 0], [1, 0, 0, 1]),
    ([0, 1, 1, 0], [1, 1, 1, 1]),
    ([0, 1, 1, 0], [0, 0, 0, 0]),
    ([1, 1, 1, 1], [1, 0, 1, 1]),
    ([0, 0, 0], [0, 0, 0]),
    ([1], [0]),
]


@pytest.mark.parametrize("labels, predictions", list(_random_pairs()) + _EDGE_CASES)
def test_binary_metrics_match_scikit_learn(labels, predictions):
    assert glue_metrics.accuracy(labels, predictions) == pytest.approx(
        sklearn.metrics.accuracy_score(labels, predictions))
    assert glue_metrics.f1(labels, predictions) == pytest.approx(
        sklearn.metrics.f1_score(labels, predictions, labels=[0, 1], zero_division=0.0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scikit-learn warns on the constant cases
        reference = sklearn.metrics.matthews_corrcoef(labels, predictions)
    assert glue_metrics.matthews_corrcoef(labels, predictions) == pytest.approx(reference)


@pytest.mark.parametrize("labels, predictions", list(_random_pairs(classes=3)))
def test_multiclass_matthews_matches_scikit_learn(labels, predictions):
    assert glue_metrics.matthews_corrcoef(labels, predictions) == pytest.approx(
        sklearn.metrics.matthews_corrcoef(labels, predictions))


def test_matthews_of_a_two_by_two_table_by_hand():
    # TP=6, TN=3, FP=1, FN=2: (6*3 - 1*2) / sqrt((6+1)(6+2)(3+1)(3+2)) = 16 / sqrt(1120).
    labels = [1] * 6 + [0] * 3 + [0] * 1 + [1] * 2
    predictions = [1] * 6 + [0] * 3 + [1] * 1 + [0] * 2
    assert glue_metrics.matthews_corrcoef(labels, predictions) == pytest.approx(
        16 / math.sqrt(1120))
    # The same table: precision 6/7, recall 6/8, F1 = 2*6 / (2*6 + 1 + 2) = 0.8; accuracy 9/12.
    assert glue_metrics.f1(labels, predictions) == pytest.approx(0.8)
    assert glue_metrics.accuracy(labels, predictions) == pytest.approx(0.75)


def test_f1_positive_label_is_configurable():
    # With 0 as the positive class the table flips: TP=3, FP=2, FN=1 -> 6 / 9.
    labels = [1] * 6 + [0] * 3 + [0] * 1 + [1] * 2
    predictions = [1] * 6 + [0] * 3 + [1] * 1 + [0] * 2
    assert glue_metrics.f1(labels, predictions, positive_label=0) == pytest.approx(6 / 9)


def _random_scores(seed, size=40, decimals=None):
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 5, size)
    y = x + rng.normal(0, 1.5, size)
    if decimals is not None:  # STS-B's gold scores have few distinct values: many ties
        x, y = np.round(x, decimals), np.round(y, decimals)
    return x, y


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("decimals", [None, 0])
def test_correlations_match_scipy(seed, decimals):
    x, y = _random_scores(seed, decimals=decimals)
    assert glue_metrics.pearson(x, y) == pytest.approx(scipy.stats.pearsonr(x, y).statistic)
    assert glue_metrics.spearman(x, y) == pytest.approx(scipy.stats.spearmanr(x, y).statistic)


def test_average_ranks_share_ties():
    assert glue_metrics.average_ranks([10, 20, 20, 5]).tolist() == [2.0, 3.5, 3.5, 1.0]
    values = np.random.default_rng(0).integers(0, 6, 100)
    np.testing.assert_array_equal(glue_metrics.average_ranks(values),
                                  scipy.stats.rankdata(values, method="average"))


def test_spearman_by_hand_with_ties():
    # x ranks [1, 2.5, 2.5, 4], y ranks [1, 2, 3, 4]; centred: [-1.5, 0, 0, 1.5], [-1.5, -.5, .5,
    # 1.5]; dot 4.5, norms sqrt(4.5) and sqrt(5): 4.5 / sqrt(22.5).
    assert glue_metrics.spearman([1, 2, 2, 3], [10, 20, 30, 40]) == pytest.approx(
        4.5 / math.sqrt(22.5))


def test_correlation_with_a_constant_is_nan():
    assert math.isnan(glue_metrics.pearson([1.0, 1.0, 1.0], [1.0, 2.0, 3.0]))
    assert math.isnan(glue_metrics.spearman([1.0, 2.0, 3.0], [2.0, 2.0, 2.0]))


def test_perfect_correlation_stays_within_one():
    for seed in range(20):
        x = np.random.default_rng(seed).uniform(0.1, 0.3, 7)
        correlation = glue_metrics.pearson(x, 3 * x)
        assert correlation <= 1.0 and correlation == pytest.approx(1.0, abs=1e-12)
        assert -1.0 <= glue_metrics.pearson(x, -0.7 * x) < -1.0 + 1e-12


@pytest.mark.parametrize("labels, predictions", list(_random_pairs(classes=5)))
def test_micro_and_macro_f1_match_scikit_learn(labels, predictions):
    metrics = glue_metrics.task_metrics("scibert_jsonl", labels, predictions)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert metrics["macro_f1"] == pytest.approx(
            sklearn.metrics.f1_score(labels, predictions, average="macro"))
        assert metrics["micro_f1"] == pytest.approx(
            sklearn.metrics.f1_score(labels, predictions, average="micro"))
    assert glue_metrics.score_metric("scibert_jsonl") == "macro_f1"


@pytest.mark.parametrize("name, keys", [
    ("CoLA", {"mcc"}),
    ("SST-2", {"accuracy"}), ("qnli", {"accuracy"}), ("RTE", {"accuracy"}),
    ("WNLI", {"accuracy"}), ("MNLI", {"accuracy"}), ("mnli_mismatched", {"accuracy"}),
    ("xnli", {"accuracy"}), ("xnli-de", {"accuracy"}), ("pawsx", {"accuracy"}),
    ("pawsx-ja", {"accuracy"}),
    ("MRPC", {"f1", "accuracy", "combined"}), ("glue/qqp", {"f1", "accuracy", "combined"}),
    ("STS-B", {"pearson", "spearman", "combined"}),
])
def test_task_metrics_report_what_glue_reports(name, keys):
    assert set(glue_metrics.task_metrics(name, [0, 1, 1, 0], [0, 1, 0, 0])) == keys


def test_task_metrics_values():
    assert glue_metrics.task_metrics("MRPC", [1, 0, 1, 1], [1, 0, 0, 1]) == pytest.approx(
        {"f1": 0.8, "accuracy": 0.75, "combined": 0.775})
    stsb = glue_metrics.task_metrics("stsb", [0.0, 1.0, 2.5, 5.0], [0.5, 1.0, 2.0, 4.0])
    assert stsb["combined"] == pytest.approx((stsb["pearson"] + stsb["spearman"]) / 2)
    assert stsb["spearman"] == pytest.approx(1.0)


def test_bad_inputs_are_refused():
    with pytest.raises(ValueError, match="no GLUE metrics"):
        glue_metrics.task_metrics("squad", [0], [0])
    with pytest.raises(ValueError, match="3 labels but 2 predictions"):
        glue_metrics.accuracy([0, 1, 1], [0, 1])
    with pytest.raises(ValueError, match="no examples"):
        glue_metrics.f1([], [])
