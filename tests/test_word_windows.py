"""official.features.word_windows: NER's greedy windows of whole words, against the loop that
states the rule, and the records (data_prep.conll) against the serving graph
(official.export.ner) on the same hard cases."""

import os
import random

import keras
import numpy as np
import pytest
import tensorflow as tf

from data_prep.conll import LABELS, Sentence, convert_sentences
from official.configs import BertConfig
from official.export.ner import NerExport
from official.features.word_windows import greedy_windows
from official.modeling.encoder import build_encoder
from official.modeling.models import BertTokenClassifier
from official.text.tokenizer import FullTokenizer

VOCAB = os.path.join(os.path.dirname(__file__), "..", "data", "vocab", "uncased_vocab.txt")


def loop_windows(lengths: list[int], budget: int) -> list[tuple[int, int]]:
    """The rule as a loop: [start, end) word ranges covering the words in order, each as many
    whole words as fit in `budget` pieces (a longer word alone); none for no words."""
    windows, start, used = [], 0, 0
    for i, length in enumerate(lengths):
        if i > start and used + length > budget:
            windows.append((start, i))
            start, used = i, 0
        used += length
    return windows + [(start, len(lengths))] if lengths else windows


def expected_windows(sentences: list[list[int]], budget: int) -> list[int]:
    expected, first = [], 0
    for lengths in sentences:
        windows = loop_windows(lengths, budget)
        for window, (start, end) in enumerate(windows):
            expected += [first + window] * (end - start)
        first += len(windows)
    return expected


def served_windows(sentences: list[list[int]], budget: int) -> list[int]:
    return greedy_windows(tf.constant(sum(sentences, []), tf.int32),
                          tf.constant([i for i, s in enumerate(sentences) for _ in s], tf.int32),
                          budget).numpy().tolist()


def test_the_loop_on_a_hand_made_case():
    sentences = [[3, 2, 4, 1, 1, 1, 5, 2], [2, 5, 1], [1]]  # pieces per word, budget 5
    assert served_windows(sentences, 5) == expected_windows(sentences, 5)
    assert greedy_windows(tf.zeros([0], tf.int32), tf.zeros([0], tf.int32), 5).shape == (0,)


def test_the_loop_on_random_cases():
    """Sentences without words (gaps in sentence_ids), words of a whole window, many windows."""
    rng = random.Random(0)
    for _ in range(200):
        budget = rng.randint(1, 8)
        sentences = [[rng.randint(1, budget) for _ in range(rng.randint(0, 12))]
                     for _ in range(rng.randint(0, 6))]
        assert served_windows(sentences, budget) == expected_windows(sentences, budget)


@pytest.fixture(scope="module")
def tokenizer():
    return FullTokenizer(VOCAB, do_lower_case=True)


@pytest.fixture(scope="module")
def model():
    keras.utils.set_random_seed(0)
    config = BertConfig(vocab_size=30522, hidden_size=32, num_hidden_layers=1,
                        num_attention_heads=4, intermediate_size=64, max_position_embeddings=64)
    return BertTokenClassifier(build_encoder(config), num_labels=len(LABELS))


TEXTS = ["EU rejects German call to boycott British lamb .",
         "Peter Blackburn ( BRUSSELS 1996-08-22 ) , the European Commission 's spokesman .",
         "Only",
         # Words of many pieces, one longer than a small window.
         "Johanson Thiswordisverylongindeedandhasmanypieces unimpressed acrobatics Zürich",
         "Nadim Ladki said the Syrian army had moved troops to the Lebanese border on Tuesday , "
         "a day after the talks in Washington ended ."]


@pytest.mark.parametrize("max_seq_length", [3, 5, 10, 16, 64])
def test_records_and_serving_make_the_same_windows(model, tokenizer, max_seq_length):
    """Same rows, and each word's first piece at the position the records predict it from."""
    export = NerExport(model, tokenizer, LABELS, max_seq_length)
    word_strings, _, _, pieces = export._words(tf.constant(TEXTS))
    inputs, window_ids, positions = export._window_inputs(
        pieces, tf.cast(word_strings.value_rowids(), tf.int32))
    sentences = [Sentence(tuple(w.decode() for w in ws), ("O",) * len(ws), 0, 1)
                 for ws in word_strings.to_list()]
    records = convert_sentences(sentences, LABELS, max_seq_length, tokenizer)
    assert len(records) > len(TEXTS) or max_seq_length == 64  # long sentences span windows
    np.testing.assert_array_equal(inputs["input_word_ids"], [f.input_ids for f in records])
    np.testing.assert_array_equal(inputs["input_mask"], [f.input_mask for f in records])
    np.testing.assert_array_equal(inputs["input_type_ids"], [f.segment_ids for f in records])
    predicted = [(window, position) for window, f in enumerate(records)
                 for position, word in enumerate(f.word_ids) if word >= 0]
    assert list(zip(window_ids.numpy().tolist(), positions.numpy().tolist())) == predicted
