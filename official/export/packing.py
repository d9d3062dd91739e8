"""Token ids -> BERT model inputs, as TF ops: the original classifier's truncation and layout.

google-research/bert's `convert_single_example` lays out one text as `[CLS] a [SEP]` and a pair
as `[CLS] a [SEP] b [SEP]` (segment 0 up to the first [SEP], 1 after), 0-padded. A pair too long
loses tokens from the end of its longer text one at a time, from b's on a tie
(`_truncate_seq_pair`); a single text is cut at its end. An empty b (no tokens) makes a
single-text row, as the original tests `if tokens_b`.

tensorflow-text's trimmers do not give that result (`ShrinkLongestTrimmer` cuts a, not b, on a
tie), so the lengths come from `official.features.pair_truncation`, the rule the fine-tuning
records are cut by.
Everything is batched: rows of one batch may mix singles and pairs.
"""

from __future__ import annotations

from typing import Sequence

import tensorflow as tf

from official.features.pair_truncation import truncated_pair_lengths


def as_tokens(segment: tf.RaggedTensor) -> tf.RaggedTensor:
    """[batch, (tokens)], also from a tokenizer's [batch, (words), (pieces)]."""
    if segment.ragged_rank == 2:
        segment = segment.merge_dims(-2, -1)
    if segment.ragged_rank != 1:
        raise ValueError(f"a segment must be [batch, (tokens)] or [batch, (words), (pieces)], "
                         f"got ragged rank {segment.ragged_rank}")
    return tf.cast(segment, tf.int32)


def pack_inputs(segments: Sequence[tf.RaggedTensor], seq_length: int | tf.Tensor, cls_id: int,
                sep_id: int) -> dict[str, tf.Tensor]:
    """One or two segments -> the encoder's inputs, int32 [batch, seq_length] each.

    Args:
      segments: [text a] or [text a, text b], each [batch, (tokens)] or
        [batch, (words), (pieces)] of token ids.
      seq_length: the length of every row, [CLS] and [SEP]s included: at least 2 for one
        segment, 3 for two (checked when the graph runs, for a tensor).
      cls_id, sep_id: the vocab's [CLS] and [SEP].
    Returns:
      {"input_word_ids", "input_mask", "input_type_ids"}, 0-padded.
    """
    if len(segments) not in (1, 2):
        raise ValueError(f"pack_inputs takes 1 or 2 segments, got {len(segments)}")
    minimum = len(segments) + 1
    if isinstance(seq_length, int) and seq_length < minimum:
        raise ValueError(f"seq_length must be at least {minimum} for {len(segments)} "
                         f"segment(s), got {seq_length}")
    seq_length = tf.convert_to_tensor(seq_length, tf.int32)
    checks = [tf.debugging.assert_greater_equal(
        seq_length, minimum, message=f"seq_length too small for {len(segments)} segment(s)")]
    with tf.control_dependencies(checks):
        seq_length = tf.identity(seq_length)
    a = as_tokens(segments[0])
    batch = a.nrows(out_type=tf.int32)
    shape = tf.stack([batch, seq_length])
    # Dense ops on the first seq_length tokens of each text: a long text costs no more.
    a_ids = a.to_tensor(shape=shape)
    len_a = tf.cast(a.row_lengths(), tf.int32)
    if len(segments) == 2:
        b = as_tokens(segments[1])
        b_ids = b.to_tensor(shape=shape)
        len_b = tf.cast(b.row_lengths(), tf.int32)
        has_b = len_b > 0
        pair_a, pair_b = truncated_pair_lengths(len_a, len_b, seq_length - 3)
        keep_a = tf.where(has_b, pair_a, tf.minimum(len_a, seq_length - 2))
        keep_b = tf.where(has_b, pair_b, 0)
    else:
        b_ids = tf.zeros_like(a_ids)
        has_b = tf.zeros_like(len_a, tf.bool)
        keep_a, keep_b = tf.minimum(len_a, seq_length - 2), tf.zeros_like(len_a)
    # Row layout: [CLS] a[:keep_a] [SEP] b[:keep_b] ([SEP] if has_b) 0 ...
    position = tf.range(seq_length)[None, :]
    keep_a, keep_b, has_b = keep_a[:, None], keep_b[:, None], has_b[:, None]
    b_start = keep_a + 2
    b_end = b_start + keep_b
    length = b_end + tf.cast(has_b, tf.int32)
    a_index = tf.broadcast_to(tf.clip_by_value(position - 1, 0, seq_length - 1), shape)
    from_a = tf.gather(a_ids, a_index, batch_dims=1)
    from_b = tf.gather(b_ids, tf.clip_by_value(position - b_start, 0, seq_length - 1),
                       batch_dims=1)
    is_sep = (position == keep_a + 1) | ((position == b_end) & has_b)
    word_ids = tf.where(position == 0, cls_id,
                        tf.where(is_sep, sep_id,
                                 tf.where(position <= keep_a, from_a,
                                          tf.where(position < b_end, from_b, 0))))
    mask = position < length
    return {"input_word_ids": tf.where(mask, word_ids, 0),
            "input_mask": tf.cast(mask, tf.int32),
            "input_type_ids": tf.cast(mask & (position >= b_start), tf.int32)}
