"""official/export/packing.py against the original's features (data_prep.classifier_features)."""

import os

import numpy as np
import pytest
import tensorflow as tf

from data_prep.classifier_features import _truncated_lengths, convert_examples
from data_prep.glue import InputExample
from official.export import packing
from official.text.tokenizer import FullTokenizer

VOCAB = os.path.join(os.path.dirname(__file__), "..", "data", "vocab", "uncased_vocab.txt")


def test_truncated_pair_lengths_is_the_original_loop():
    grid = np.array([(a, b, m) for a in range(12) for b in range(12) for m in range(14)])
    got_a, got_b = packing.truncated_pair_lengths(
        tf.constant(grid[:, 0], tf.int32), tf.constant(grid[:, 1], tf.int32),
        tf.constant(grid[:, 2], tf.int32))
    expected = np.array([_truncated_lengths(a, b, m) for a, b, m in grid])
    np.testing.assert_array_equal(np.stack([got_a, got_b], 1), expected)


@pytest.fixture(scope="module")
def tokenizer():
    return FullTokenizer(VOCAB, do_lower_case=True)


PAIRS = [
    ("The cat sat on the mat.", "A dog barked."),
    ("short", "a much longer second text that will need to be truncated from its end " * 2),
    ("a much longer first text, cut from the end, while the second stays whole " * 2, "tiny"),
    ("both texts are long enough to be cut " * 3, "and this one is long enough too " * 3),
    ("equal length one two", "equal length three four"),
    ("only a", ""),
    ("", "only b"),
    ("", ""),
    ("Héllo Wörld, ÇA VA? 日本語", "   "),
]


@pytest.mark.parametrize("seq_length", [3, 8, 17, 64])
def test_pack_inputs_equals_convert_examples(tokenizer, seq_length):
    examples = [InputExample(str(i), a, b or None, "0") for i, (a, b) in enumerate(PAIRS)]
    expected = convert_examples(examples, ["0"], seq_length, tokenizer)
    ids = tokenizer.tokenize_tf(tf.constant([a for a, _ in PAIRS] + [b for _, b in PAIRS]))
    got = packing.pack_inputs([ids[:len(PAIRS)], ids[len(PAIRS):]], seq_length,
                              *tokenizer.convert_tokens_to_ids(["[CLS]", "[SEP]"]))
    np.testing.assert_array_equal(got["input_word_ids"], [f.input_ids for f in expected])
    np.testing.assert_array_equal(got["input_mask"], [f.input_mask for f in expected])
    np.testing.assert_array_equal(got["input_type_ids"], [f.segment_ids for f in expected])


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
