"""A text pair cut to a token budget: the original classifier's `_truncate_seq_pair`.

google-research/bert's loop: while a + b is over the budget, drop the last token of the longer
text (of b on a tie). Cutting the longer one keeps the short one whole, where each token is
likely to carry more of its meaning. The fine-tuning records (data_prep.classifier_features),
extract_features (official.tasks.feature_extraction) and every serving graph
(official.export.packing) take their lengths from `truncated_pair_lengths`.
"""

from __future__ import annotations

import tensorflow as tf


def truncated_pair_lengths(len_a, len_b, budget) -> tuple[tf.Tensor, tf.Tensor]:
    """The lengths the original's `_truncate_seq_pair` loop leaves, without the loop.

    While a + b > budget the loop cuts the longer text (b on a tie). So a text no longer than
    half the budget is never cut, the other keeps the rest; when both are longer, they end at
    ceil(budget / 2) (a) and floor(budget / 2) (b): from a tie the loop cuts b first, then a.

        truncated_pair_lengths(5, 2, 4) == (2, 2); (1, 5, 3) -> (1, 2); (2, 2, 3) -> (2, 1)

    Args: int32 tensors (or numpy arrays, ints) of one shape, e.g. [batch]; budget may be a
      scalar and is at least 0. An empty b (length 0) leaves a min(a, budget).
    Returns: int32 tensors of that shape, the kept lengths of a and of b.
    """
    len_a, len_b, budget = (tf.convert_to_tensor(x, tf.int32) for x in (len_a, len_b, budget))
    a_at_least = tf.maximum(budget - len_b, (budget + 1) // 2)
    b_at_least = tf.maximum(budget - len_a, budget // 2)
    return tf.minimum(len_a, a_at_least), tf.minimum(len_b, b_at_least)
