"""The metrics GLUE (and XNLI) report for each task, from predictions already decoded.

GLUE's leaderboard reports, per task:

    CoLA                            Matthews correlation ("mcc")
    SST-2, QNLI, RTE, WNLI, MNLI    accuracy              (XNLI, PAWS-X, 20ng and tsv too)
    MRPC, QQP                       F1 of class 1 and accuracy
    STS-B                           Pearson and Spearman correlation

and, for SciBERT's classification tasks ("scibert_jsonl": ChemProt, ACL-ARC), micro-F1 (which
for one gold label an example is accuracy: ChemProt's metric) and macro-F1 (the unweighted mean
of each label's F1: ACL-ARC's), the checkpoint chosen by macro-F1, so rare labels count.

A GLUE task with two metrics enters the GLUE score as their mean, given here as "combined".
Values are fractions in [0, 1] (correlations in [-1, 1]), not percentages.

Labels and predictions are class ids as the classifier emits them (the index into the task's label
list, so for MRPC and QQP id 1 is the label "1": paraphrase, duplicate) or, for STS-B, floats.
Plain numpy, no TensorFlow: these run on gathered predictions after evaluation.

Degenerate inputs follow scikit-learn and scipy, so numbers agree with the references people
check against:
- F1 with no positive label and no positive prediction is 0.0 (scikit-learn's default).
- Matthews correlation is 0.0 when a row or column of the confusion matrix is empty, e.g. a
  constant prediction (scikit-learn's convention: no information, not undefined).
- Pearson and Spearman are nan when either input is constant (scipy's convention): a correlation
  with a constant is undefined, and nan makes a collapsed regressor visible instead of reading as
  "no correlation".
"""

from __future__ import annotations

import re
from typing import Callable

import numpy as np
from numpy.typing import ArrayLike


def _pair(labels: ArrayLike, predictions: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Both inputs as 1-D arrays of one non-zero length."""
    labels, predictions = np.asarray(labels).ravel(), np.asarray(predictions).ravel()
    if labels.shape != predictions.shape:
        raise ValueError(f"{labels.size} labels but {predictions.size} predictions")
    if labels.size == 0:
        raise ValueError("a metric of no examples is undefined")
    return labels, predictions


def accuracy(labels: ArrayLike, predictions: ArrayLike) -> float:
    """The fraction of predictions equal to their label."""
    labels, predictions = _pair(labels, predictions)
    return float(np.mean(labels == predictions))


def f1(labels: ArrayLike, predictions: ArrayLike, positive_label: int = 1) -> float:
    """Binary F1 of `positive_label`: 2TP / (2TP + FP + FN); 0.0 when that is 0/0."""
    labels, predictions = _pair(labels, predictions)
    is_label, is_predicted = labels == positive_label, predictions == positive_label
    true_positives = np.sum(is_label & is_predicted)
    denominator = np.sum(is_label) + np.sum(is_predicted)  # = 2TP + FP + FN
    return float(2 * true_positives / denominator) if denominator else 0.0


def macro_f1(labels: ArrayLike, predictions: ArrayLike) -> float:
    """The unweighted mean over labels of each label's F1 (`f1` with it as the positive label),
    over the labels that occur in `labels` or `predictions` (scikit-learn's average="macro")."""
    labels, predictions = _pair(labels, predictions)
    present = np.unique(np.concatenate([labels, predictions]))
    return float(np.mean([f1(labels, predictions, positive_label=c) for c in present]))


def matthews_corrcoef(labels: ArrayLike, predictions: ArrayLike) -> float:
    """Matthews correlation coefficient, for two or more classes.

    For two classes this is (TP*TN - FP*FN) / sqrt((TP+FP)(TP+FN)(TN+FP)(TN+FN)). The same number,
    for any number of classes, is the correlation of the one-hot label and prediction matrices
    (Gorodkin's R_K): with C the confusion matrix, n = sum(C), t and p its row and column sums,

        (n * trace(C) - t.p) / sqrt((n^2 - p.p) * (n^2 - t.t))

    which is what this computes; 0.0 when the denominator is 0 (see the module docstring).
    """
    labels, predictions = _pair(labels, predictions)
    classes, index = np.unique(np.concatenate([labels, predictions]), return_inverse=True)
    label_ids, prediction_ids = index[:labels.size], index[labels.size:]
    confusion = np.zeros((classes.size, classes.size), dtype=np.float64)
    np.add.at(confusion, (label_ids, prediction_ids), 1.0)
    n = float(labels.size)
    label_counts, prediction_counts = confusion.sum(axis=1), confusion.sum(axis=0)
    covariance = n * np.trace(confusion) - label_counts @ prediction_counts
    variance_product = (n * n - prediction_counts @ prediction_counts) * (
        n * n - label_counts @ label_counts)
    return float(covariance / np.sqrt(variance_product)) if variance_product else 0.0


def pearson(x: ArrayLike, y: ArrayLike) -> float:
    """Pearson's linear correlation; nan when x or y is constant."""
    x, y = _pair(x, y)
    x = x.astype(np.float64) - np.mean(x, dtype=np.float64)
    y = y.astype(np.float64) - np.mean(y, dtype=np.float64)
    norms = np.linalg.norm(x) * np.linalg.norm(y)
    if norms == 0.0:
        return float("nan")
    # Clipped: rounding can take the ratio just past +-1 for (anti)proportional inputs.
    return float(np.clip(x @ y / norms, -1.0, 1.0))


def average_ranks(values: ArrayLike) -> np.ndarray:
    """Ranks 1..n of `values`, tied values sharing the mean of the ranks they span.

    E.g. [10, 20, 20, 5] -> [2, 3.5, 3.5, 1]: the two 20s take ranks 3 and 4, so 3.5 each.
    """
    values = np.asarray(values).ravel()
    order = np.argsort(values, kind="stable")
    sorted_values = values[order]
    # Tied runs in sorted order: a run starts where the value differs from the one before.
    run_starts = np.flatnonzero(np.r_[True, sorted_values[1:] != sorted_values[:-1]])
    run_ends = np.r_[run_starts[1:], values.size]  # exclusive
    run_of_position = np.repeat(np.arange(run_starts.size), run_ends - run_starts)
    # Positions start..end-1 hold ranks start+1..end, whose mean is (start + 1 + end) / 2.
    mean_rank = (run_starts + 1 + run_ends) / 2.0
    ranks = np.empty(values.size, dtype=np.float64)
    ranks[order] = mean_rank[run_of_position]
    return ranks


def spearman(x: ArrayLike, y: ArrayLike) -> float:
    """Spearman's rank correlation: Pearson of the average ranks; nan when x or y is constant."""
    x, y = _pair(x, y)
    return pearson(average_ranks(x), average_ranks(y))


def _accuracy_metrics(labels: ArrayLike, predictions: ArrayLike) -> dict[str, float]:
    return {"accuracy": accuracy(labels, predictions)}


def _f1_and_accuracy(labels: ArrayLike, predictions: ArrayLike) -> dict[str, float]:
    metrics = {"f1": f1(labels, predictions), "accuracy": accuracy(labels, predictions)}
    return {**metrics, "combined": (metrics["f1"] + metrics["accuracy"]) / 2}


def _correlations(labels: ArrayLike, predictions: ArrayLike) -> dict[str, float]:
    metrics = {"pearson": pearson(labels, predictions), "spearman": spearman(labels, predictions)}
    return {**metrics, "combined": (metrics["pearson"] + metrics["spearman"]) / 2}


def _micro_and_macro_f1(labels: ArrayLike, predictions: ArrayLike) -> dict[str, float]:
    return {"micro_f1": accuracy(labels, predictions),
            "macro_f1": macro_f1(labels, predictions)}


def _mcc(labels: ArrayLike, predictions: ArrayLike) -> dict[str, float]:
    return {"mcc": matthews_corrcoef(labels, predictions)}


# Keyed by the name lower-cased with everything but letters and digits removed, so "SST-2",
# "sst2", "glue/sst2" and "STS-B"/"stsb" all resolve; MNLI's two dev sets are both accuracy.
_TASK_METRICS: dict[str, Callable[[ArrayLike, ArrayLike], dict[str, float]]] = {
    "cola": _mcc,
    "sst2": _accuracy_metrics,
    "mrpc": _f1_and_accuracy,
    "qqp": _f1_and_accuracy,
    "stsb": _correlations,
    "mnli": _accuracy_metrics,
    "mnlim": _accuracy_metrics,
    "mnlimm": _accuracy_metrics,
    "mnlimatched": _accuracy_metrics,
    "mnlimismatched": _accuracy_metrics,
    "qnli": _accuracy_metrics,
    "rte": _accuracy_metrics,
    "wnli": _accuracy_metrics,
    "xnli": _accuracy_metrics,
    "pawsx": _accuracy_metrics,
    # A classification task of one's own (data_prep/glue.py's "tsv").
    "tsv": _accuracy_metrics,
    "20ng": _accuracy_metrics,
    "scibertjsonl": _micro_and_macro_f1,
}


# The one figure each kind of task enters the GLUE score with.
_SCORE_METRIC = {_mcc: "mcc", _accuracy_metrics: "accuracy", _f1_and_accuracy: "combined",
                 _correlations: "combined", _micro_and_macro_f1: "macro_f1"}


def _metrics_fn(task_name: str) -> Callable[[ArrayLike, ArrayLike], dict[str, float]]:
    key = re.sub(r"[^a-z0-9]", "", task_name.lower().removeprefix("glue/"))
    for multilingual in ("xnli", "pawsx"):  # every language: "xnli-fr", "pawsx-de", ...
        if key.startswith(multilingual):
            key = multilingual
    if key not in _TASK_METRICS:
        raise ValueError(f"no GLUE metrics for task {task_name!r}; known: "
                         f"{', '.join(sorted(_TASK_METRICS))}")
    return _TASK_METRICS[key]


def score_metric(task_name: str) -> str:
    """The name of the metric `task_metrics` gives that GLUE scores the task by ("mcc" for
    CoLA, "combined" for MRPC, QQP and STS-B, else "accuracy"): the one to pick a checkpoint by."""
    return _SCORE_METRIC[_metrics_fn(task_name)]


def task_metrics(task_name: str, labels: ArrayLike, predictions: ArrayLike) -> dict[str, float]:
    """The metrics GLUE reports for `task_name`, by name (see the module docstring).

    Example:
        >>> metrics = task_metrics("MRPC", [1, 0, 1, 1], [1, 0, 0, 1])
        >>> {name: round(value, 4) for name, value in metrics.items()}
        {'f1': 0.8, 'accuracy': 0.75, 'combined': 0.775}
        >>> score_metric("MRPC")
        'combined'
    """
    return _metrics_fn(task_name)(labels, predictions)
