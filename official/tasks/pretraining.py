"""The pretraining task: the original's masked-LM + next-sentence loss, and its metrics; or the
left-to-right language model's next-token loss.

The original (run_pretraining.py) computes, per batch,

    masked_lm_loss     = sum(w * ce_mlm) / (sum(w) + 1e-5)     w = masked_lm_weights
    next_sentence_loss = mean(ce_nsp)
    loss               = masked_lm_loss + next_sentence_loss

Both are ratios over the whole batch. So that gradient accumulation and data parallelism give the
update of one big batch exactly, the training loop first sums the denominators over every
micro-batch and replica (`normalizers`), and each micro-batch then contributes its numerators
divided by those global sums (`loss_and_stats`). On one device without accumulation this is the
original's loss to the last bit; the original on several TPU cores averaged per-core ratios
instead, which differs slightly when cores hold different numbers of predictions.

Statistics are returned as sums (numerators and counts), which add across micro-batches, replicas
and steps; `metrics` turns a sum into the reported ratios.

The left-to-right objective (run_pretraining --objective=ltr, the BERT paper's "LTR & No NSP")
is the same masked-LM loss over other features: official/training/pretraining_input.py's
`next_token_batch` makes every position predict the next token (masked_lm_weights 1 for a real
next token), so masked_lm_loss is the mean next-token cross-entropy. Its figures are reported
under their own names: next_token_loss, next_token_accuracy, and perplexity = exp(loss).
"""

from __future__ import annotations

import math
import os
from typing import Mapping, Sequence

import tensorflow as tf

from official import pretraining_shards
from official.modeling.encoder import BertEncoder
from official.modeling.models import BertPretrainer
from official.tasks.base import SoftTarget

# The original's denominator guard, kept so the loss is the same number.
_MLM_EPSILON = 1e-5
# math.exp of this or more overflows (a diverged run's loss): its perplexity is inf.
_EXP_OVERFLOWS = 709.0


class PretrainingTask:
    """Loss and metrics of masked-LM pretraining, with or without a second-sentence objective,
    or of a left-to-right language model.

    Args:
      next_sentence: include the next-sentence (or sentence-order) loss; False for data made with
        `--objective=none`, whose labels carry no information.
      next_token: the features are next-token predictions (`next_token_batch`): the metrics are
        named for them. Takes no next_sentence: the paper's left-to-right model is trained
        without one, and its records' second-sentence labels (of any objective) are not read.

    Features (from official.training.pretraining_input): masked_lm_ids int32 [batch, predictions],
    masked_lm_weights float32 [batch, predictions], next_sentence_labels int32 [batch].
    Outputs (of BertPretrainer): masked_lm_logits float32 [batch, predictions, vocab],
    next_sentence_logits float32 [batch, 2].
    """

    def __init__(self, next_sentence: bool = True, next_token: bool = False):
        if next_sentence and next_token:
            raise ValueError("a left-to-right language model is trained without a "
                             "second-sentence objective")
        self.next_sentence = next_sentence
        self.next_token = next_token

    def build_model(self, encoder: BertEncoder) -> BertPretrainer:
        return BertPretrainer(encoder)

    def soft_targets(self, outputs: Mapping[str, tf.Tensor],
                     features: Mapping[str, tf.Tensor]) -> dict[str, SoftTarget]:
        """The vocabulary distribution at every masked position (a distillation's, DistilBERT's
        L_ce), weighted as the masked-LM loss."""
        return {"masked_lm": SoftTarget(outputs["masked_lm_logits"],
                                        features["masked_lm_weights"], "masked_lm_weight")}

    def normalizers(self, features: Mapping[str, tf.Tensor]) -> dict[str, tf.Tensor]:
        """This batch's share of the loss denominators: float32 scalars that add across batches."""
        return {
            "masked_lm_weight": tf.reduce_sum(features["masked_lm_weights"]),
            "examples": tf.cast(tf.shape(features["masked_lm_weights"])[0], tf.float32),
        }

    def loss_and_stats(self, outputs: Mapping[str, tf.Tensor], features: Mapping[str, tf.Tensor],
                       normalizers: Mapping[str, tf.Tensor]) -> tuple[tf.Tensor, dict]:
        """This batch's part of the global loss, and its statistics as sums.

        Args:
          normalizers: `normalizers` summed over every batch of the update (all micro-batches and
            replicas); with this batch's alone the loss is exactly the original's.
        Returns:
          (loss, stats): a float32 scalar to differentiate, and float32 scalar sums.
        """
        weights = features["masked_lm_weights"]
        mlm_ce = tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=features["masked_lm_ids"], logits=outputs["masked_lm_logits"])
        mlm_correct = tf.cast(tf.equal(
            tf.argmax(outputs["masked_lm_logits"], axis=-1, output_type=tf.int32),
            features["masked_lm_ids"]), tf.float32)
        stats = {
            "masked_lm_loss_sum": tf.reduce_sum(weights * mlm_ce),
            "masked_lm_correct": tf.reduce_sum(weights * mlm_correct),
            "masked_lm_weight": tf.reduce_sum(weights),
            "examples": tf.cast(tf.shape(weights)[0], tf.float32),
        }
        loss = stats["masked_lm_loss_sum"] / (normalizers["masked_lm_weight"] + _MLM_EPSILON)
        if self.next_sentence:
            labels = features["next_sentence_labels"]
            logits = outputs["next_sentence_logits"]
            nsp_ce = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
            stats["next_sentence_loss_sum"] = tf.reduce_sum(nsp_ce)
            stats["next_sentence_correct"] = tf.reduce_sum(tf.cast(tf.equal(
                tf.argmax(logits, axis=-1, output_type=tf.int32), labels), tf.float32))
            loss += stats["next_sentence_loss_sum"] / normalizers["examples"]
        return loss, stats

    def metrics(self, stats: Mapping[str, float]) -> dict[str, float]:
        """The reported figures from summed stats: the original's eval metric names, plus `loss`.

        masked_lm_loss and masked_lm_accuracy are weighted by masked_lm_weights, as the original's
        `tf.metrics.mean(..., weights)` and `tf.metrics.accuracy(..., weights)`. A next-token
        task reports the same two as next_token_loss and next_token_accuracy (per predicted
        token), and perplexity, exp(next_token_loss).
        """
        weight = max(float(stats["masked_lm_weight"]), 1e-12)
        examples = max(float(stats["examples"]), 1e-12)
        result = {
            "masked_lm_accuracy": stats["masked_lm_correct"] / weight,
            "masked_lm_loss": stats["masked_lm_loss_sum"] / weight,
        }
        loss = result["masked_lm_loss"]
        if self.next_token:
            loss = float(loss)
            return {"next_token_accuracy": float(result["masked_lm_accuracy"]),
                    "next_token_loss": loss,
                    "perplexity": math.exp(loss) if loss < _EXP_OVERFLOWS else math.inf,
                    "loss": loss}
        if self.next_sentence:
            result["next_sentence_accuracy"] = stats["next_sentence_correct"] / examples
            result["next_sentence_loss"] = stats["next_sentence_loss_sum"] / examples
            loss += result["next_sentence_loss"]
        result["loss"] = loss
        return {name: float(value) for name, value in result.items()}


def data_objective(input_files: Sequence[str]) -> str:
    """The second-sentence objective ("nsp", "sop" or "none") the input files were made with.

    data_prep writes a summary.json beside its shards naming the objective; files from the original
    create_pretraining_data have none and are next-sentence data.

    Raises:
      ValueError: the files' summaries name different objectives.
    """
    objectives = {}
    for directory in sorted({os.path.dirname(os.path.abspath(f)) for f in input_files}):
        summary = pretraining_shards.read_summary(directory)
        if summary is not None:
            objectives[os.path.join(directory, pretraining_shards.SUMMARY_FILE)] = \
                summary["options"]["objective"]
    if len(set(objectives.values())) > 1:
        raise ValueError("input files mix objectives: " + ", ".join(
            f"{path} says {objective}" for path, objective in objectives.items()))
    return next(iter(objectives.values()), "nsp")
