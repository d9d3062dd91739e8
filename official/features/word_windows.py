"""NER's windows: a sentence too long for one row cut between words, windows filled greedily.

The rule (data_prep/conll.py's module docstring says why windows do not overlap): each word's
pieces are first cut to the window's budget (max_seq_length - 2, for [CLS] and [SEP]); then a
sentence's words go into windows in order, a window taking whole words while their pieces fit,
so each word is predicted once and never loses pieces to a cut; a new sentence starts a new
window. One implementation for the fine-tuning records (data_prep.conll, per chunk of
sentences) and the serving graph (official.export.ner, per request):

    greedy_windows(lengths=[3, 2, 4, 1, 2], sentence_ids=[0, 0, 0, 0, 1], budget=5)
    # [0, 0, 1, 1, 2]: sentence 0's windows hold 3 + 2 and 4 + 1 pieces; sentence 1 its own
"""

from __future__ import annotations

import tensorflow as tf


def _count(ids: tf.Tensor) -> tf.Tensor:
    """1 + the largest of ids (0 for none): the number of segments they index."""
    return tf.reduce_max(tf.concat([[-1], ids], 0)) + 1


def greedy_windows(lengths, sentence_ids, budget: int) -> tf.Tensor:
    """Window index (global, from 0) of each word.

    Args:
      lengths: int32 [words], each word's pieces (at most `budget`), sentences one after another.
      sentence_ids: int32 [words], each word's sentence, non-decreasing (a sentence without
        words has no window).
      budget: the pieces a window holds.
    Numpy arrays are taken too. When every sentence fits in one window (the usual case) the
    windows are the sentences renumbered; otherwise a scan over the words' places in their
    sentences fills every sentence's windows at once.
    """
    lengths, sentence_ids = (tf.convert_to_tensor(x, tf.int32) for x in (lengths, sentence_ids))
    sentences = tf.RaggedTensor.from_value_rowids(lengths, sentence_ids, _count(sentence_ids))

    def one_per_sentence():
        return tf.zeros_like(lengths)

    def fill():
        # [places, sentences]: the k-th word's pieces of every sentence (0 past its end).
        columns = tf.transpose(sentences.to_tensor(
            shape=tf.stack([sentences.nrows(), tf.maximum(sentences.bounding_shape(1), 1)])))

        def step(state, column):
            window, used = state
            new = used + column > budget  # the word does not fit beside the window's words
            return window + tf.cast(new, tf.int32), tf.where(new, column, used + column)

        windows, _ = tf.scan(step, columns[1:],
                             initializer=(tf.zeros_like(columns[0]), columns[0]))
        in_sentence = tf.transpose(tf.concat([tf.zeros_like(columns[:1]), windows], 0))
        return tf.RaggedTensor.from_tensor(in_sentence, sentences.row_lengths()).flat_values

    in_sentence = tf.cond(tf.reduce_all(tf.reduce_sum(sentences, axis=1) <= budget),
                          one_per_sentence, fill)
    # Each sentence's windows: 1 + its last word's window (an empty segment's max is the
    # lowest int32, hence the 0 for a sentence without words).
    count = tf.maximum(tf.math.unsorted_segment_max(in_sentence + 1, sentence_ids,
                                                    sentences.nrows(out_type=tf.int32)), 0)
    return in_sentence + tf.gather(tf.cumsum(count, exclusive=True), sentence_ids)
