"""The distillation losses, as sums over a batch (the Trainer divides by global normalizers).

    soft_cross_entropy   T^2 * -sum_c softmax(t/T)_c log softmax(s/T)_c per row (Hinton et al.)
    squared_error        (s - t)^2 per row: a regression's soft target is the teacher's score
    mean_squared_error   mean over the last axis of (s - t)^2 per row: a vector's (a sentence
                         encoder's), as sentence-transformers' MSELoss
    hidden_mse           mean over the teacher's width of (proj(h_s) - h_t)^2, summed over real
                         tokens and mapped layers
    attention_kl         KL(teacher || student) of each head's attention over the keys, summed
                         over real queries, heads and mapped layers (TinyBERT)
    cosine_distance      1 - cos(h_s, h_t) of the last layers, summed over real tokens
                         (DistilBERT's L_cos)

Every function returns float32 sums weighted by 0/1 (or fractional) weights, never means: the
caller divides by the weights summed over the whole global batch, so a loss does not depend on
how a batch is split over micro-batches and replicas (official/training/trainer.py).
"""

from __future__ import annotations

from typing import Sequence

import tensorflow as tf


def soft_cross_entropy(student_logits: tf.Tensor, teacher_logits: tf.Tensor, weights: tf.Tensor,
                       temperature: float) -> tf.Tensor:
    """sum over rows of weights * T^2 * H(softmax(teacher / T), softmax(student / T)).

    Args:
      student_logits, teacher_logits: float [..., classes].
      weights: float32 [...], the rows that count (0 for padding).
    Returns a float32 scalar sum.
    """
    student = tf.cast(student_logits, tf.float32) / temperature
    teacher = tf.stop_gradient(tf.cast(teacher_logits, tf.float32)) / temperature
    per_row = -tf.reduce_sum(tf.nn.softmax(teacher, axis=-1)
                             * tf.nn.log_softmax(student, axis=-1), axis=-1)
    return temperature ** 2 * tf.reduce_sum(weights * per_row)


def squared_error(student_scores: tf.Tensor, teacher_scores: tf.Tensor,
                  weights: tf.Tensor) -> tf.Tensor:
    """sum of weights * (student - teacher)^2 over rows ([...] scores); float32 scalar."""
    difference = (tf.cast(student_scores, tf.float32)
                  - tf.stop_gradient(tf.cast(teacher_scores, tf.float32)))
    return tf.reduce_sum(weights * tf.square(difference))


def mean_squared_error(student: tf.Tensor, teacher: tf.Tensor, weights: tf.Tensor) -> tf.Tensor:
    """sum over rows of weights * mean over the last axis of (student - teacher)^2.

    Args:
      student, teacher: float [..., dims], the same shape.
      weights: float32 [...], the rows that count.
    Returns a float32 scalar sum (divide by the weights' sum for the mean over rows and dims).
    """
    difference = tf.cast(student, tf.float32) - tf.stop_gradient(tf.cast(teacher, tf.float32))
    return tf.reduce_sum(tf.cast(weights, tf.float32)
                         * tf.reduce_mean(tf.square(difference), axis=-1))


def hidden_mse(student_layers: Sequence[tf.Tensor], teacher_layers: Sequence[tf.Tensor],
               token_mask: tf.Tensor) -> tf.Tensor:
    """sum over layer pairs and real tokens of the mean squared difference over the width.

    Args:
      student_layers: [batch, seq_len, hidden_teacher] per mapped layer (already projected).
      teacher_layers: the matching teacher layers, [batch, seq_len, hidden_teacher] each.
      token_mask: [batch, seq_len], 1 for real tokens, 0 for padding.
    Returns a float32 scalar sum (divide by real tokens x layers for the mean).
    """
    total = tf.constant(0.0)
    for student, teacher in zip(student_layers, teacher_layers, strict=True):
        total += mean_squared_error(student, teacher, token_mask)
    return total


def attention_kl(student_probs: Sequence[tf.Tensor], teacher_probs: Sequence[tf.Tensor],
                 token_mask: tf.Tensor) -> tf.Tensor:
    """sum over layer pairs, heads and real queries of KL(teacher || student) over the keys.

    Args:
      student_probs, teacher_probs: float32 [batch, heads, seq_len, seq_len] per mapped layer,
        the softmax over keys (0 at padding keys, where the teacher's terms vanish).
      token_mask: [batch, seq_len], 1 for real tokens: the queries that count.
    Returns a float32 scalar sum (divide by real tokens x heads x layers for the mean).
    """
    mask = tf.cast(token_mask, tf.float32)[:, tf.newaxis, :]  # [batch, 1, query]
    total = tf.constant(0.0)
    for student, teacher in zip(student_probs, teacher_probs, strict=True):
        teacher = tf.stop_gradient(tf.cast(teacher, tf.float32))
        student = tf.cast(student, tf.float32)
        # xlogy: a key the teacher gives 0 (padding) adds 0, whatever the student gives it; a
        # student probability that underflowed to 0 is floored so the sum stays finite.
        per_query = tf.reduce_sum(
            tf.math.xlogy(teacher, teacher)
            - tf.math.xlogy(teacher, tf.maximum(student, 1e-30)), axis=-1)
        total += tf.reduce_sum(mask * per_query)
    return total


def cosine_distance(student: tf.Tensor, teacher: tf.Tensor, token_mask: tf.Tensor) -> tf.Tensor:
    """sum over real tokens of 1 - cos(student, teacher), each [batch, seq_len, hidden] (the
    same width); token_mask [batch, seq_len]. A float32 scalar sum."""
    student = tf.math.l2_normalize(tf.cast(student, tf.float32), axis=-1)
    teacher = tf.math.l2_normalize(tf.stop_gradient(tf.cast(teacher, tf.float32)), axis=-1)
    cosine = tf.reduce_sum(student * teacher, axis=-1)
    return tf.reduce_sum(tf.cast(token_mask, tf.float32) * (1.0 - cosine))
