"""official/export/packing.py against the original's features (data_prep.classifier_features);
pairs, and the truncation rule itself: tests/test_pair_truncation.py."""

import os

import numpy as np
import pytest
import tensorflow as tf

from data_prep.classifier_features import convert_examples
from data_prep.glue import InputExample
from official.export import packing
from official.text.tokenizer import FullTokenizer
from tests.test_pair_truncation import PAIRS

VOCAB = os.path.join(os.path.dirname(__file__), "..", "data", "vocab", "uncased_vocab.txt")


@pytest.fixture(scope="module")
def tokenizer():
    return FullTokenizer(VOCAB, do_lower_case=True)


def test_single_segment_and_words_dimension(tokenizer):
    texts = [a for a, _ in PAIRS]
    expected = convert_examples([InputExample(str(i), t, None, "0") for i, t in enumerate(texts)],
                                ["0"], 10, tokenizer)
    ids = tokenizer.tokenize_tf(tf.constant(texts))
    # [batch, (words), (pieces)] packs as its merged tokens.
    nested = tf.RaggedTensor.from_row_lengths(
        tf.RaggedTensor.from_row_lengths(ids.flat_values, tf.ones_like(ids.flat_values, tf.int64)),
        ids.row_lengths())
    for segment in (ids, nested):
        got = packing.pack_inputs([segment], tf.constant(10), 101, 102)
        np.testing.assert_array_equal(got["input_word_ids"], [f.input_ids for f in expected])


def test_bad_arguments(tokenizer):
    ids = tokenizer.tokenize_tf(tf.constant(["a b"]))
    with pytest.raises(ValueError, match="at least 3"):
        packing.pack_inputs([ids, ids], 2, 101, 102)
    with pytest.raises(ValueError, match="1 or 2"):
        packing.pack_inputs([ids] * 3, 16, 101, 102)
    with pytest.raises(tf.errors.InvalidArgumentError, match="seq_length too small"):
        packing.pack_inputs([ids, ids], tf.constant(2), 101, 102)
    empty = packing.pack_inputs([ids[:0], ids[:0]], 8, 101, 102)
    assert empty["input_word_ids"].shape == (0, 8)
