"""official/features/long_text.py against hand-computed rows: head_tail's cut and every window
of a text as a [CLS] window [SEP] row."""

import numpy as np
import tensorflow as tf

from official.features.long_text import head_tail, window_rows

CLS, SEP = 101, 102


def ragged(rows):
    return tf.ragged.constant(rows, dtype=tf.int32, ragged_rank=1) if any(rows) else \
        tf.RaggedTensor.from_row_lengths(tf.zeros([0], tf.int32), [len(r) for r in rows])


def test_head_tail_keeps_head_and_tail_of_long_texts_only():
    ids = ragged([list(range(1, 11)), [], [5, 6, 7], [1, 2, 3, 4, 5]])
    assert head_tail(ids, 2, 5).to_list() == [[1, 2, 8, 9, 10], [], [5, 6, 7], [1, 2, 3, 4, 5]]
    assert head_tail(ids, 0, 5).to_list()[0] == [6, 7, 8, 9, 10]  # the tail alone
    assert head_tail(ids, 5, 5).to_list()[0] == [1, 2, 3, 4, 5]  # the original's cut


def test_window_rows_by_hand():
    # 10 tokens, rows of 6 (windows of 4), stride 3: windows start at 0, 3, 6; an empty text has
    # one [CLS] [SEP] row; 3 tokens fit in one.
    rows = window_rows(ragged([list(range(1, 11)), [], [5, 6, 7]]), 6, 3, CLS, SEP)
    np.testing.assert_array_equal(rows.input_word_ids.numpy(), [
        [CLS, 1, 2, 3, 4, SEP],
        [CLS, 4, 5, 6, 7, SEP],
        [CLS, 7, 8, 9, 10, SEP],
        [CLS, SEP, 0, 0, 0, 0],
        [CLS, 5, 6, 7, SEP, 0]])
    np.testing.assert_array_equal(rows.input_mask.numpy(),
                                  (rows.input_word_ids.numpy() > 0).astype(np.int32))
    np.testing.assert_array_equal(rows.window_document.numpy(), [0, 0, 0, 1, 2])
    np.testing.assert_array_equal(rows.windows.count.numpy(), [3, 1, 1])


def test_window_rows_short_last_window_and_stride_longer_than_a_window():
    # 9 tokens, windows of 4, stride 6 > 4: the original steps by the window (0, 4), then 8.
    rows = window_rows(ragged([list(range(1, 10))]), 6, 6, CLS, SEP)
    np.testing.assert_array_equal(rows.input_word_ids.numpy(), [
        [CLS, 1, 2, 3, 4, SEP], [CLS, 5, 6, 7, 8, SEP], [CLS, 9, SEP, 0, 0, 0]])
