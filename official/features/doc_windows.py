"""SQuAD's windows over a long context, and each token's "max context" window.

The original run_squad's rule (google-research/bert), for one question on one context:

- The row is [CLS] question [SEP] window [SEP], so a window holds
  `max_seq_length - len(question) - 3` of the context's WordPiece tokens, the first at row
  position `len(question) + 2` (its offset).
- Windows start every `min(window size, doc_stride)` tokens, from token 0, until one reaches
  the end of the context: 10 tokens, windows of 4, stride 3 start at 0, 3, 6. A context without
  tokens has no window. (The original's loop, `start += min(length, doc_stride)`, steps by
  the window's length only when the stride is longer than a window, and a window shorter than
  the size is the last.)
- A token in several windows is predicted from the one where it has the most context: the
  largest min(tokens left of it, tokens right of it) in the window, + 0.01 * the window's
  length, so a tie goes to the longer window, then to the earlier one (the original's
  `_check_is_max_context`, its float compared in float64 here too).

One implementation for the fine-tuning records (data_prep.squad, which calls it per chunk of
questions) and the serving graph (official.export.squad, per request), batched over contexts;
and, without a question (`text_windows`: rows [CLS] window [SEP]), for long documents'
classification (data_prep.classifier_features, official/export/classifier.py) and feature
extraction:

    windows = doc_windows(num_tokens, query_length, max_seq_length, doc_stride)
    windows = text_windows(num_tokens, max_seq_length, doc_stride)
    is_max = max_context(windows)  # bool [windows, (length)]
"""

from __future__ import annotations

from typing import NamedTuple

import tensorflow as tf


class DocWindows(NamedTuple):
    """The windows of a batch of contexts (one feature each), context by context, in order.

    Per window (int32 [windows]): `example`, its context's index in the batch; `index`, its
    index among that context's windows; `start`, its first token in the context; `length`,
    its tokens; `offset`, the row position of its first token (after [CLS] question [SEP]).
    Per context (int32 [batch]): `count`, its windows; `first`, its first window; `stride`, the
    tokens between two windows' starts; `size`, the tokens a window holds (the last may hold
    fewer).
    """
    example: tf.Tensor
    index: tf.Tensor
    start: tf.Tensor
    length: tf.Tensor
    offset: tf.Tensor
    count: tf.Tensor
    first: tf.Tensor
    stride: tf.Tensor
    size: tf.Tensor


def doc_windows(num_tokens, query_length, max_seq_length, doc_stride) -> DocWindows:
    """The windows of each context after its question (see the module docstring).

    Args:
      num_tokens: int32 [batch], each context's WordPiece tokens.
      query_length: int32 [batch], each question's tokens (already cut to max_query_length).
      max_seq_length: the row length; more than query_length + 3 (the callers' settings check).
      doc_stride: the stride between windows' starts, at least 1.
    Numpy arrays and ints are taken too.
    """
    query_length = tf.convert_to_tensor(query_length, tf.int32)
    return _windows(num_tokens, max_seq_length - query_length - 3, query_length + 2, doc_stride)


def text_windows(num_tokens, max_seq_length, doc_stride) -> DocWindows:
    """The windows of each text alone, rows [CLS] window [SEP] (a long document's windows for
    classification and feature extraction): max_seq_length - 2 tokens each, the first at row
    position 1; the same rule as SQuAD's otherwise. A text without tokens has one empty window
    (the row [CLS] [SEP], as a classifier reads an empty text).

    Args:
      num_tokens: int32 [batch], each text's WordPiece tokens.
      max_seq_length: the row length, at least 3.
      doc_stride: the stride between windows' starts, at least 1.
    """
    num_tokens = tf.convert_to_tensor(num_tokens, tf.int32)
    return _windows(num_tokens, tf.fill(tf.shape(num_tokens), max_seq_length - 2),
                    tf.ones_like(num_tokens), doc_stride, at_least_one=True)


def _windows(num_tokens, size, offset, doc_stride, at_least_one: bool = False) -> DocWindows:
    """Windows of `size` tokens (int32 [batch]) every min(size, doc_stride) tokens until one
    reaches the end, placed at row position `offset` (int32 [batch])."""
    num_tokens = tf.convert_to_tensor(num_tokens, tf.int32)
    stride = tf.minimum(size, doc_stride)
    # The original's loop in closed form: windows every `stride` tokens until one reaches the
    # end; one window when all fits, none for no tokens (one, when `at_least_one`).
    fits = tf.ones_like(num_tokens) if at_least_one else tf.minimum(num_tokens, 1)
    count = tf.where(num_tokens <= size, fits, (num_tokens - size + stride - 1) // stride + 1)
    batch = tf.size(num_tokens)
    example = tf.repeat(tf.range(batch), count)
    index = tf.cast(tf.ragged.range(count).flat_values, tf.int32)
    start = index * tf.gather(stride, example)
    length = tf.minimum(tf.gather(num_tokens, example) - start, tf.gather(size, example))
    return DocWindows(example=example, index=index, start=start, length=length,
                      offset=tf.gather(offset, example), count=count,
                      first=tf.cumsum(count, exclusive=True), stride=stride, size=size)


def max_context(windows: DocWindows) -> tf.RaggedTensor:
    """bool [windows, (length)]: for each window's tokens in order, whether this window is the
    token's "max context" window (the module docstring's rule)."""
    positions = tf.ragged.range(windows.start, windows.start + windows.length)
    owner = tf.cast(positions.value_rowids(), tf.int32)  # the window of each token
    example = tf.gather(windows.example, owner)
    position = positions.flat_values  # in the context
    # The windows that may hold the token: a few, whatever the context's length.
    stride, size = tf.gather(windows.stride, example), tf.gather(windows.size, example)
    last = tf.minimum(position // stride, tf.gather(windows.count, example) - 1)
    first = tf.maximum((position - size + stride) // stride, 0)
    candidates = tf.ragged.range(first, last + 1)  # [tokens, (windows)]
    lengths = tf.cast(candidates.row_lengths(), tf.int32)
    candidate = (tf.cast(candidates.flat_values, tf.int32)
                 + tf.repeat(tf.gather(windows.first, example), lengths))
    token_position = tf.repeat(position, lengths)
    start = tf.gather(windows.start, candidate)
    end = start + tf.gather(windows.length, candidate) - 1
    # The original's float: min(left, right) + 0.01 * length, compared in float64.
    score = (tf.cast(tf.minimum(token_position - start, end - token_position), tf.float64)
             + 0.01 * tf.cast(tf.gather(windows.length, candidate), tf.float64))
    inside = (token_position >= start) & (token_position <= end)
    scores = tf.where(inside, score, float("-inf"))
    best = tf.repeat(tf.reduce_max(candidates.with_flat_values(scores), axis=1), lengths)
    first_best = tf.reduce_min(candidates.with_flat_values(tf.where(
        scores >= best, tf.cast(candidates.flat_values, tf.int32), tf.int32.max)), axis=1)
    return positions.with_flat_values(first_best == tf.gather(windows.index, owner))
