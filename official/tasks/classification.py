"""Sentence (pair) classification and regression: the fine-tuning task, and its results.

    ClassificationTask   run_classifier's task (official/tasks/base.py): `BertClassifier`, the
                         original's mean cross-entropy loss (mean squared error for a regression
                         task such as STS-B), dev metrics, best/ by the task's GLUE score, and the
                         test split's test_results.tsv and GLUE submission file
    evaluation_metrics   dev-set figures from predicted logits: eval_loss and the task's GLUE
                         metrics (official/tasks/glue_metrics.py) with the original's eval_ prefix
    write_test_results   the original's test_results.tsv: each example's class probabilities
    write_submission     a GLUE leaderboard file: index and predicted label per test example

Records carry `is_real_example` (0 for the original's padding examples), which weights every
sum, as the original's metric_fn does.

A document longer than a row (official/tasks/long_doc_settings.py) is still one example: with
--long_doc=windows the model is `BertDocumentClassifier`, its records one per document
(data_prep/classifier_features.py), so the loss, the metrics, eval_results.txt and
test_results.tsv count documents. With --window_loss=window the loss is taken on every window
with its document's label instead (a mean over the windows); the metrics stay the documents'.
"""

from __future__ import annotations

import json
import os
from typing import Mapping, Sequence

import keras
import numpy as np
import tensorflow as tf
from absl import logging

from official.atomic_files import open_atomically
from official.modeling.encoder import BertEncoder
from official.modeling.models import BertClassifier, BertDocumentClassifier
from official.records import to_json
from official.tasks import glue_metrics
from official.tasks.base import Records, SoftTarget
from official.tasks.long_doc_settings import RECORD_FILE, LongDocSettings

TEST_RESULTS_FILE = "test_results.tsv"


class ClassificationTask:
    """Classifying a sentence or a pair with `BertClassifier` (float32 [batch, num_labels]
    logits) against `label_ids`.

    Args:
      task_name: the GLUE task (or "tsv"), which names its metrics (glue_metrics); None for a
        model that is only served (`serving_module`).
      labels: the label strings in id order; None for regression (one logit: the score).
      submission_file: the GLUE leaderboard file --do_predict writes beside test_results.tsv,
        e.g. "MRPC.tsv"; None writes none.
      pair: the task's texts come in pairs (what its export takes, see `serving_spec`).
      long_doc: how a document longer than a row is read (resolved), the original's truncate by
        default.

    Features: label_ids int32 [batch] (float32 for regression), is_real_example int32 [batch]
    (batch: documents); with windows, window_document int32 [windows] (the model's input).
    """

    keep = ("label_ids", "is_real_example")
    results_file = None  # GLUE's test labels are hidden

    def __init__(self, task_name: str | None, labels: Sequence[str] | None,
                 submission_file: str | None = None, pair: bool = False,
                 long_doc: LongDocSettings = LongDocSettings()):
        self.task_name = task_name
        self.labels = None if labels is None else list(labels)
        self.regression = labels is None
        self.submission_file = submission_file
        self.pair = pair
        self.long_doc = long_doc
        self._window_loss = long_doc.windows and long_doc.window_loss == "window"

    @property
    def best_metric(self) -> str:
        return "eval_" + glue_metrics.score_metric(self.task_name)

    def build_model(self, encoder: BertEncoder) -> keras.Model:
        num_labels = 1 if self.labels is None else len(self.labels)
        if self.long_doc.windows:
            return BertDocumentClassifier(encoder, num_labels, self.long_doc.window_pool)
        return BertClassifier(encoder, num_labels)

    def serving_spec(self) -> dict:
        spec = {"export_type": "classifier", "task_name": self.task_name,
                "labels": self.labels, "pair": self.pair}
        if self.long_doc.long_doc != "truncate":
            spec["long_doc"] = json.loads(to_json(self.long_doc))
        return spec

    def files(self) -> dict[str, str | None]:
        """long_documents.json, the reading of long documents the export serves (none for
        truncate, the original's)."""
        if self.long_doc.long_doc == "truncate":
            return {RECORD_FILE: None}
        return {RECORD_FILE: to_json(self.long_doc)}

    def normalizers(self, features: Mapping[str, tf.Tensor]) -> dict[str, tf.Tensor]:
        """The batch's real examples (the loss is a mean over the whole global batch's) and
        its rows (a distillation's soft targets also cover the unlabelled rows of its transfer
        data, which carry is_real_example 0); with --window_loss=window, the real examples'
        windows."""
        real = tf.cast(features["is_real_example"], tf.float32)
        normalizers = {"examples": tf.reduce_sum(real), "rows": tf.cast(tf.shape(real)[0],
                                                                         tf.float32)}
        if self._window_loss:
            normalizers["windows"] = tf.reduce_sum(tf.gather(real, features["window_document"]))
        return normalizers

    def soft_targets(self, logits, features: Mapping[str, tf.Tensor]) -> dict[str, SoftTarget]:
        """Every row's logits (the score, for regression), labelled or not; a document's
        pooled logits with windows."""
        if isinstance(logits, Mapping):
            logits = logits["logits"]
        rows = tf.ones(tf.shape(logits)[:1], tf.float32)
        if self.regression:
            return {"logits": SoftTarget(logits[:, 0], rows, "rows", kind="score")}
        return {"logits": SoftTarget(logits, rows, "rows")}

    def loss_and_stats(self, outputs, features: Mapping[str, tf.Tensor],
                       normalizers: Mapping[str, tf.Tensor]) -> tuple[tf.Tensor, dict]:
        """This batch's share of the mean loss, and its sums (loss, correct, examples; the
        windows too with --window_loss=window). `outputs`: the logits, or the document model's
        outputs."""
        logits = outputs["logits"] if isinstance(outputs, Mapping) else outputs
        real = tf.cast(features["is_real_example"], tf.float32)
        stats = {"examples": tf.reduce_sum(real)}
        if self._window_loss:
            documents = features["window_document"]
            weights = tf.gather(real, documents)
            per_window = example_losses(outputs["window_logits"],
                                        tf.gather(features["label_ids"], documents),
                                        self.regression)
            stats.update(loss_sum=tf.reduce_sum(weights * per_window),
                         windows=tf.reduce_sum(weights))
            loss = stats["loss_sum"] / tf.maximum(normalizers["windows"], 1.0)
        else:
            per_example = example_losses(logits, features["label_ids"], self.regression)
            stats["loss_sum"] = tf.reduce_sum(real * per_example)
            loss = stats["loss_sum"] / tf.maximum(normalizers["examples"], 1.0)
        if not self.regression:
            correct = tf.equal(tf.argmax(logits, axis=-1, output_type=tf.int32),
                               tf.cast(features["label_ids"], tf.int32))
            stats["correct"] = tf.reduce_sum(real * tf.cast(correct, tf.float32))
        return loss, stats

    def metrics(self, stats: Mapping[str, float]) -> dict[str, float]:
        examples = max(float(stats["examples"]), 1e-12)
        result = {"loss": float(stats["loss_sum"]) / max(float(stats.get("windows", examples)),
                                                         1e-12)}
        if not self.regression:
            result["accuracy"] = float(stats["correct"]) / examples
        return result

    def evaluate(self, outputs: Mapping[str, np.ndarray], records: Records) -> dict[str, float]:
        return evaluation_metrics(self.task_name, outputs["logits"], outputs["label_ids"],
                                  outputs["is_real_example"])

    def write_predictions(self, outputs: Mapping[str, np.ndarray], records: Records,
                          output_dir: str | None) -> dict[str, float]:
        """test_results.tsv (the original's probabilities) and the submission file (label
        strings, or scores for regression); GLUE's test labels are hidden, so no scores."""
        if output_dir is None:
            return {}
        logits = outputs["logits"]
        write_test_results(os.path.join(output_dir, TEST_RESULTS_FILE), logits)
        if self.submission_file is not None:
            predicted = ([str(float(score)) for score in logits[:, 0]] if self.labels is None
                         else [self.labels[i] for i in logits.argmax(axis=-1)])
            path = os.path.join(output_dir, self.submission_file)
            write_submission(path, predicted)
            logging.info("Wrote %d test predictions to %s", len(predicted), path)
        return {}


def example_losses(logits: tf.Tensor, labels: tf.Tensor, regression: bool) -> tf.Tensor:
    """float32 [batch]: cross-entropy of the label, or the squared error of the score."""
    if regression:
        return tf.square(logits[:, 0] - tf.cast(labels, tf.float32))
    return tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.cast(labels, tf.int32),
                                                          logits=logits)


def evaluation_metrics(task_name: str, logits: np.ndarray, labels: np.ndarray,
                       is_real_example: np.ndarray) -> dict[str, float]:
    """The original's eval_results.txt figures for the real examples, plus GLUE's metrics.

    Args:
      logits: float [examples, num_labels] (num_labels 1: regression scores).
      labels: the label ids (scores for regression).
    Returns:
      {"eval_loss", "loss" (the same mean, as the original's Estimator reported it),
       "eval_<metric>" for each of glue_metrics.task_metrics(task_name, ...)}: e.g. eval_accuracy,
      eval_f1, eval_matthews_corrcoef, eval_pearson.
    """
    real = np.asarray(is_real_example) > 0
    logits, labels = np.asarray(logits)[real], np.asarray(labels)[real]
    regression = logits.shape[-1] == 1
    loss = float(np.mean(example_losses(tf.constant(logits, tf.float32), tf.constant(labels),
                                        regression).numpy()))
    predictions = logits[:, 0] if regression else np.argmax(logits, axis=-1)
    result = {"eval_loss": loss, "loss": loss}
    for name, value in glue_metrics.task_metrics(task_name, labels, predictions).items():
        result[f"eval_{name}"] = value
    return result


def probabilities(logits: np.ndarray) -> np.ndarray:
    """Row-wise softmax of float [examples, num_labels] logits, computed stably in float64."""
    shifted = np.asarray(logits, np.float64) - np.max(logits, axis=-1, keepdims=True)
    exp = np.exp(shifted)
    return exp / exp.sum(axis=-1, keepdims=True)


def write_test_results(path: str, logits: np.ndarray) -> None:
    """The original's test_results.tsv: one line per example, its class probabilities separated
    by tabs (for regression, the predicted score alone)."""
    values = np.asarray(logits) if np.shape(logits)[-1] == 1 else probabilities(logits)
    with open_atomically(path) as f:
        for row in values:
            f.write("\t".join(str(float(v)) for v in row) + "\n")


def write_submission(path: str, predictions: Sequence[str]) -> None:
    """A GLUE leaderboard file: "index<TAB>prediction", then one line per test example in file
    order (a label string, or the score of a regression task)."""
    with open_atomically(path) as f:
        f.write("index\tprediction\n")
        for index, prediction in enumerate(predictions):
            f.write(f"{index}\t{prediction}\n")
