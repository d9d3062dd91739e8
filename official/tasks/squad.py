"""SQuAD span labelling: the fine-tuning task, and scoring decoded answers.

    SquadTask       run_squad's task (official/tasks/base.py): `BertSpanLabeler`, the original
                    run_squad's loss (the cross-entropy of the answer's start token and of its
                    end token, averaged over the batch, halved), EM / F1 of decoded answers
                    with best/ kept by F1, the original's prediction files
    SquadSplit      what decoding a file's predictions needs besides the model's outputs
    raw_results     `Trainer.predict` outputs -> one `squad_decoding.RawResult` per feature
    check_answers   whether a SQuAD JSON file has the gold answers an evaluation needs
    evaluate        EM / F1 of decoded predictions by the official v1.1 or v2.0 evaluation

Training windows that do not hold their question's answer (and every window of an unanswerable
SQuAD 2.0 question) point both positions at [CLS] (position 0), so the loss also teaches the
model to say "not here"; `squad_decoding` uses those [CLS] logits as the no-answer score.

Example (the outputs `FinetuningRun.predict(dataset, keep=("unique_ids",))` returns for one
window of one question; stand-ins for data_prep.squad's example and feature; a predicted
"Broncos" against the gold "Broncos won": no exact match, F1 2/3):
    >>> from types import SimpleNamespace
    >>> dataset_json = {"version": "1.1", "data": [{"paragraphs": [{
    ...     "context": "The Broncos won.",
    ...     "qas": [{"id": "q1", "question": "Who won?",
    ...              "answers": [{"text": "Broncos won", "answer_start": 4}]}]}]}]}
    >>> example = SimpleNamespace(qas_id="q1", doc_tokens=["The", "Broncos", "won."])
    >>> feature = SimpleNamespace(
    ...     unique_id=1000000000, example_index=0,
    ...     tokens=["[CLS]", "who", "won", "?", "[SEP]", "the", "broncos", "won", ".", "[SEP]"],
    ...     token_to_orig_map={5: 0, 6: 1, 7: 2, 8: 2},
    ...     token_is_max_context={5: True, 6: True, 7: True, 8: True})
    >>> outputs = {"unique_ids": np.array([1000000000]),
    ...            "start_logits": np.array([[0, 0, 0, 0, 0, 1, 5, 0, 0, 0]], np.float32),
    ...            "end_logits": np.array([[0, 0, 0, 0, 0, 0, 4, 2, 1, 0]], np.float32)}
    >>> predictions = squad_decoding.decode_predictions(
    ...     [example], [feature], raw_results(outputs), n_best_size=20, max_answer_length=30,
    ...     do_lower_case=True)
    >>> predictions.predictions
    {'q1': 'Broncos'}
    >>> {name: round(value, 2) for name, value in evaluate(dataset_json, predictions).items()}
    {'exact_match': 0.0, 'f1': 66.67}
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any, Mapping

import keras
import numpy as np
import tensorflow as tf
from absl import logging

from official.modeling.encoder import BertEncoder
from official.modeling.models import BertSpanLabeler
from official.tasks import squad_decoding, squad_metrics
from official.tasks.base import Records, SoftTarget
from official.tasks.squad_decoding import RawResult, SquadPredictions
from official.tasks.squad_settings import SquadSettings

# The evaluation figure that chooses the best checkpoint (the same key in v1.1 and v2.0).
BEST_METRIC = "f1"
# --do_predict's scores, when the predicted file has gold answers.
PREDICT_RESULTS_FILE = "predict_results.txt"


@dataclasses.dataclass(frozen=True)
class SquadSplit:
    """A SQuAD file as decoding its predictions needs it (`Records.examples` of its split).

    Attributes:
      examples: its questions (data_prep.squad.SquadExample), in file order.
      features: their windows (data_prep.squad.InputFeatures, with the token maps).
      gold: the file's JSON when every question has gold answers (`check_answers`), else None.
    """
    examples: list
    features: list
    gold: Any = None


class SquadTask:
    """The loss of `BertSpanLabeler` logits against the answer's token positions.

    Args:
      settings: run_squad's flags; decoding reads n_best_size, max_answer_length,
        version_2_with_negative and null_score_diff_threshold.
      do_lower_case: the tokenizer's, which final-text recovery follows.

    Features: start_positions, end_positions int32 [batch] (0: [CLS], no answer in this window).
    Outputs: start_logits, end_logits float32 [batch, seq_len].

    The original computes, per batch, (mean(ce_start) + mean(ce_end)) / 2 over every position,
    padding included (the logits are not masked; padding learns to score low). Here the means'
    denominator is the row count of the whole global batch (`normalizers`), so accumulation and
    replicas give one big batch's loss.
    """

    best_metric = BEST_METRIC
    keep = ("unique_ids",)
    results_file = PREDICT_RESULTS_FILE

    def __init__(self, settings: SquadSettings = SquadSettings(), do_lower_case: bool = True):
        self.settings = settings
        self.do_lower_case = do_lower_case

    def build_model(self, encoder: BertEncoder) -> keras.Model:
        return BertSpanLabeler(encoder)

    def serving_spec(self) -> dict:
        return {"export_type": "squad", "task_name": "squad",
                "squad": dataclasses.asdict(self.settings)}

    def files(self) -> dict[str, str | None]:
        return {}

    def normalizers(self, features: Mapping[str, tf.Tensor]) -> dict[str, tf.Tensor]:
        """The batch's rows, a float32 scalar that adds across batches."""
        return {"examples": tf.cast(tf.shape(features["start_positions"])[0], tf.float32)}

    def soft_targets(self, outputs: Mapping[str, tf.Tensor],
                     features: Mapping[str, tf.Tensor]) -> dict[str, SoftTarget]:
        """The start and end distributions over each window's real tokens (padding, which the
        original's own loss leaves in, is masked out of both student and teacher)."""
        padding = 1.0 - tf.cast(features["input_mask"], tf.float32)
        rows = tf.ones(tf.shape(padding)[:1], tf.float32)
        return {end: SoftTarget(outputs[f"{end}_logits"] - 10000.0 * padding, rows, "examples")
                for end in ("start", "end")}

    def loss_and_stats(self, outputs: Mapping[str, tf.Tensor], features: Mapping[str, tf.Tensor],
                       normalizers: Mapping[str, tf.Tensor]) -> tuple[tf.Tensor, dict]:
        """This batch's share of the loss, and its sums: per end (start, end) the cross-entropy
        and the rows whose argmax is the labelled position; and the rows."""
        stats = {}
        for end in ("start", "end"):
            logits = outputs[f"{end}_logits"]
            labels = tf.cast(features[f"{end}_positions"], tf.int32)
            ce = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
            stats[f"{end}_loss_sum"] = tf.reduce_sum(ce)
            stats[f"{end}_correct"] = tf.reduce_sum(tf.cast(tf.equal(
                tf.argmax(logits, axis=-1, output_type=tf.int32), labels), tf.float32))
        stats["examples"] = tf.cast(tf.shape(features["start_positions"])[0], tf.float32)
        loss = (stats["start_loss_sum"] + stats["end_loss_sum"]) / (2.0 * normalizers["examples"])
        return loss, stats

    def metrics(self, stats: Mapping[str, float]) -> dict[str, float]:
        """loss (the original's), and how often the start and end argmaxes are the labels."""
        examples = max(float(stats["examples"]), 1e-12)
        return {"loss": (float(stats["start_loss_sum"]) + float(stats["end_loss_sum"]))
                / (2.0 * examples),
                "start_accuracy": float(stats["start_correct"]) / examples,
                "end_accuracy": float(stats["end_correct"]) / examples}

    def decode(self, outputs: Mapping[str, np.ndarray], split: SquadSplit) -> SquadPredictions:
        """The answers of the model's outputs on a file's windows, by the original's decoding."""
        s = self.settings
        return squad_decoding.decode_predictions(
            split.examples, split.features, raw_results(outputs), n_best_size=s.n_best_size,
            max_answer_length=s.max_answer_length, do_lower_case=self.do_lower_case,
            version_2_with_negative=s.version_2_with_negative,
            null_score_diff_threshold=s.null_score_diff_threshold)

    def evaluate(self, outputs: Mapping[str, np.ndarray], records: Records) -> dict[str, float]:
        return evaluate(records.examples.gold, self.decode(outputs, records.examples),
                        self.settings.null_score_diff_threshold)

    def write_predictions(self, outputs: Mapping[str, np.ndarray], records: Records,
                          output_dir: str | None) -> dict[str, float]:
        """predictions.json, nbest_predictions.json (and null_odds.json for 2.0); with gold
        answers, their scores (the run writes them to predict_results.txt) and as JSON on
        stdout, as the official evaluation prints them."""
        split: SquadSplit = records.examples
        predictions = self.decode(outputs, split)
        metrics = ({} if split.gold is None else
                   evaluate(split.gold, predictions, self.settings.null_score_diff_threshold))
        if output_dir is None:
            return metrics
        for path in squad_decoding.write_prediction_files(predictions, output_dir):
            logging.info("Wrote %s", path)
        if metrics:
            logging.info("%s: %s", records.source,
                         "  ".join(f"{k} {v:.4f}" for k, v in metrics.items()))
            print(json.dumps(metrics), flush=True)
        return metrics


def raw_results(outputs: Mapping[str, np.ndarray]) -> list[RawResult]:
    """`Trainer.predict(dataset, keep=("unique_ids",))` outputs -> a RawResult per row.

    The logits become Python floats (float32 values, as the original's `float(x)`), which the
    decoder sums in float64.
    """
    return [RawResult(int(unique_id), start.astype(np.float64).tolist(),
                      end.astype(np.float64).tolist())
            for unique_id, start, end in zip(outputs["unique_ids"], outputs["start_logits"],
                                             outputs["end_logits"])]


def check_answers(dataset: Any, path: str, version_2_with_negative: bool) -> None:
    """Raises a one-line ValueError naming `path` unless every question has gold answers.

    A question has them when its `answers` is a non-empty list of {"text": str}, or, in SQuAD
    2.0, when it is marked `"is_impossible": true` (then `answers` is an empty list). The
    file's layout (data / paragraphs / qas with ids) is taken as checked by its reader.
    """
    for article in dataset["data"]:
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"]:
                answers = qa.get("answers")
                impossible = version_2_with_negative and qa.get("is_impossible") is True
                well_formed = isinstance(answers, list) and all(
                    isinstance(a, dict) and isinstance(a.get("text"), str) for a in answers)
                if not well_formed or not (answers or impossible):
                    raise ValueError(
                        f"{path}: question {qa['id']}: no gold answers to evaluate against "
                        f"(evaluation needs a non-empty 'answers' list"
                        f"{' or is_impossible true' if version_2_with_negative else ''})")


def evaluate(dataset: Any, predictions: SquadPredictions,
             null_score_diff_threshold: float = 0.0) -> dict[str, float]:
    """The official evaluation of decoded predictions, in percent.

    SQuAD v1.1 (no `null_odds`): {"exact_match", "f1"}. SQuAD 2.0: exact, f1, total, the
    HasAns_ / NoAns_ breakdown and, from the null odds, best_exact(_thresh) and best_f1(_thresh):
    the best --null_score_diff_threshold on this data. The null odds are the evaluation's
    na_probs with the decoding's threshold, so it scores the answers predictions.json holds.
    """
    if predictions.null_odds is None:
        return squad_metrics.evaluate_v1(dataset, predictions.predictions)
    return squad_metrics.evaluate_v2(dataset, predictions.predictions, predictions.null_odds,
                                     na_prob_thresh=null_score_diff_threshold)
