"""A long text's classifier rows, once for the records (data_prep.classifier_features, per chunk)
and the serving graph (official/export/classifier.py, per request), as batched TF ops.

    head_tail(ids, head_tokens, max_tokens)        --long_doc=head_tail: a text longer than
                                                   max_tokens keeps its first head_tokens and its
                                                   last max_tokens - head_tokens tokens
    window_rows(ids, max_seq_length, doc_stride,   --long_doc=windows: every window of every text
                cls_id, sep_id)                    (doc_windows.text_windows) as a row
                                                   [CLS] window [SEP], 0-padded

`ids` is a tf.RaggedTensor of WordPiece ids, int32 [texts, (tokens)].
"""

from __future__ import annotations

from typing import NamedTuple

import tensorflow as tf

from official.features.doc_windows import DocWindows, text_windows


def head_tail(ids: tf.RaggedTensor, head_tokens: int, max_tokens: int) -> tf.RaggedTensor:
    """int32 [texts, (at most max_tokens)]: each text's first head_tokens and last
    max_tokens - head_tokens tokens when it has more than max_tokens, else the text unchanged."""
    lengths = tf.cast(ids.row_lengths(), tf.int32)
    over = tf.maximum(lengths - max_tokens, 0)  # the tokens dropped from each text's middle
    positions = tf.ragged.range(tf.minimum(lengths, max_tokens))
    # A kept position p reads token p in the head, p + over past it.
    source = positions + tf.where(positions >= head_tokens, tf.expand_dims(over, 1), 0)
    return tf.gather(ids, tf.cast(source, ids.row_splits.dtype), batch_dims=1)


class WindowRows(NamedTuple):
    """Every window of a batch of texts as model rows, text by text, in order.

    Attributes:
      input_word_ids: int32 [windows, max_seq_length], [CLS] window [SEP] then 0s.
      input_mask: int32 [windows, max_seq_length].
      window_document: int32 [windows], the text (0 .. texts - 1) each window belongs to.
      windows: the windows' positions (`doc_windows.DocWindows`; its `count`, per text).
    """
    input_word_ids: tf.Tensor
    input_mask: tf.Tensor
    window_document: tf.Tensor
    windows: DocWindows


def window_rows(ids: tf.RaggedTensor, max_seq_length: int, doc_stride: int, cls_id: int,
                sep_id: int) -> WindowRows:
    """The rows of every window of every text (see the module docstring); a text without
    tokens has one row, [CLS] [SEP]."""
    windows = text_windows(tf.cast(ids.row_lengths(), tf.int32), max_seq_length, doc_stride)
    # Each window's tokens read straight from the flat ids (never a copy of its whole text).
    first = tf.gather(tf.cast(ids.row_splits[:-1], tf.int32), windows.example) + windows.start
    body = tf.gather(ids.flat_values, tf.ragged.range(first, first + windows.length))
    count = tf.shape(windows.example)[:1]
    rows = tf.concat([tf.fill(tf.concat([count, [1]], 0), cls_id), tf.cast(body, tf.int32),
                      tf.fill(tf.concat([count, [1]], 0), sep_id)], axis=1)
    return WindowRows(input_word_ids=rows.to_tensor(0, shape=[None, max_seq_length]),
                      input_mask=tf.ones_like(rows).to_tensor(0, shape=[None, max_seq_length]),
                      window_document=windows.example, windows=windows)
