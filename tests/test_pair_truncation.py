"""official.features.pair_truncation: the original's `_truncate_seq_pair`, and the same cut in
the fine-tuning records, extract_features' features and the serving graph's packing."""

import functools
import os

import numpy as np
import pytest
import tensorflow as tf

from data_prep.classifier_features import convert_examples
from data_prep.glue import InputExample
from official.export import packing
from official.features.pair_truncation import truncated_pair_lengths
from official.tasks import feature_extraction
from official.text.tokenizer import FullTokenizer
from tests.reference_bert import import_original_script

VOCAB = os.path.join(os.path.dirname(__file__), "..", "data", "vocab", "uncased_vocab.txt")


@functools.cache
def original_lengths(len_a: int, len_b: int, budget: int) -> tuple[int, int]:
    """The lengths google-research/bert's own `_truncate_seq_pair` leaves."""
    a, b = list(range(len_a)), list(range(len_b))
    import_original_script("bert.run_classifier")._truncate_seq_pair(a, b, budget)
    return len(a), len(b)


def test_the_original_loop_on_every_small_case():
    # Empty b (0), ties (a == b), one side long, both long, budgets from 0.
    grid = np.array([(a, b, m) for a in range(12) for b in range(12) for m in range(14)])
    got_a, got_b = truncated_pair_lengths(
        tf.constant(grid[:, 0], tf.int32), tf.constant(grid[:, 1], tf.int32),
        tf.constant(grid[:, 2], tf.int32))
    expected = np.array([original_lengths(a, b, m) for a, b, m in grid])
    np.testing.assert_array_equal(np.stack([got_a, got_b], 1), expected)


def test_numpy_and_scalar_arguments():
    a, b = truncated_pair_lengths(np.array([5, 1, 2, 300]), np.array([2, 5, 2, 0]), 4)
    assert a.numpy().tolist() == [2, 1, 2, 4] and b.numpy().tolist() == [2, 3, 2, 0]
    assert [int(x) for x in truncated_pair_lengths(2, 2, 3)] == [2, 1]


@pytest.fixture(scope="module")
def tokenizer():
    return FullTokenizer(VOCAB, do_lower_case=True)


PAIRS = [
    ("The cat sat on the mat.", "A dog barked."),
    ("short", "a much longer second text that will need to be truncated from its end " * 2),
    ("a much longer first text, cut from the end, while the second stays whole " * 2, "tiny"),
    ("both texts are long enough to be cut " * 3, "and this one is long enough too " * 3),
    ("equal length one two", "equal length three four"),  # a tie: b is cut first
    ("only a", ""),
    ("", "only b"),
    ("", ""),
    ("Héllo Wörld, ÇA VA? 日本語", "   "),  # a b without tokens: a single text
]


@pytest.mark.parametrize("seq_length", [3, 4, 8, 17, 64])
def test_records_features_and_serving_cut_pairs_alike(tokenizer, seq_length):
    """The three users of the rule on the same pairs: data_prep's records, extract_features'
    features and the serving graph's packing give the same rows."""
    records = convert_examples([InputExample(str(i), a, b or None, "0")
                                for i, (a, b) in enumerate(PAIRS)], ["0"], seq_length, tokenizer)
    extracted = feature_extraction.convert_examples_to_features(
        [feature_extraction.InputExample(i, a, b or None) for i, (a, b) in enumerate(PAIRS)],
        seq_length, tokenizer)
    ids = tokenizer.tokenize_tf(tf.constant([a for a, _ in PAIRS] + [b for _, b in PAIRS]))
    served = packing.pack_inputs([ids[:len(PAIRS)], ids[len(PAIRS):]], seq_length,
                                 *tokenizer.convert_tokens_to_ids(["[CLS]", "[SEP]"]))
    for name, record_name, extracted_name in (("input_word_ids", "input_ids", "input_ids"),
                                              ("input_mask", "input_mask", "input_mask"),
                                              ("input_type_ids", "segment_ids",
                                               "input_type_ids")):
        np.testing.assert_array_equal(served[name], [getattr(f, record_name) for f in records])
        # Below seq_length 5 (a budget under 2) a pair's b can be cut to nothing, and
        # extract_features then writes no second [SEP] (the original's `if tokens_b` after the
        # cut), where the records and serving keep it; the lengths kept agree.
        if seq_length >= 5:
            np.testing.assert_array_equal(served[name],
                                          [getattr(f, extracted_name) for f in extracted])
