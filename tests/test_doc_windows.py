"""official.features.doc_windows: SQuAD's windows and max-context rule, against the original's
loop and `_check_is_max_context`, and the records (data_prep.squad) against the serving graph
(official.export.squad) on the same hard cases."""

import functools
import os
import types

import keras
import numpy as np
import pytest
import tensorflow as tf

from data_prep.squad import SquadExample, convert_examples_to_features, split_context
from official.configs import BertConfig
from official.export.squad import SquadExport
from official.features.doc_windows import doc_windows, max_context, text_windows
from official.modeling.encoder import build_encoder
from official.modeling.models import BertSpanLabeler
from official.tasks.squad_settings import SquadSettings
from official.text.tokenizer import FullTokenizer
from tests.reference_bert import import_original_script

VOCAB = os.path.join(os.path.dirname(__file__), "..", "data", "vocab", "uncased_vocab.txt")


@functools.cache
def original_run_squad() -> types.ModuleType:
    return import_original_script("bert.run_squad")


def original_spans(num_tokens: int, max_tokens_for_doc: int, doc_stride: int) -> list:
    """The window loop of the original's convert_examples_to_features, as it is written there."""
    doc_spans = []
    start_offset = 0
    while start_offset < num_tokens:
        length = min(num_tokens - start_offset, max_tokens_for_doc)
        doc_spans.append(types.SimpleNamespace(start=start_offset, length=length))
        if start_offset + length == num_tokens:
            break
        start_offset += min(length, doc_stride)
    return doc_spans


def windows_of(num_tokens, size, stride, query_length=4):
    """doc_windows for contexts of `num_tokens` tokens and windows of `size` tokens."""
    num_tokens = np.array(num_tokens, np.int32)
    query = np.full_like(num_tokens, query_length)
    return doc_windows(num_tokens, query, size + query_length + 3, stride)


def test_the_docstring_example():
    # "the man went to the store and bought a gallon of milk": windows of 5, stride 3.
    windows = windows_of([12], 5, 3)
    assert windows.start.numpy().tolist() == [0, 3, 6, 9]
    assert windows.length.numpy().tolist() == [5, 5, 5, 3]
    assert windows.offset.numpy().tolist() == [6] * 4  # [CLS] 4 question tokens [SEP]
    bought = 7  # in window 1 ("to the store and bought") and 2 ("and bought a gallon of")
    is_max = max_context(windows).to_list()
    assert [is_max[i][bought - s] for i, s in ((1, 3), (2, 6))] == [False, True]


def test_a_texts_windows_and_max_context_by_hand():
    # Rows of 6 hold windows of 4 tokens at row position 1; 10 tokens, stride 3: windows at 0,
    # 3, 6. Token 3 is in windows 0 (min(3, 0)) and 1 (min(0, 3)), a tie of equal lengths: the
    # earlier; token 6 likewise goes to window 1. An empty text has one empty window.
    windows = text_windows([10, 0, 4], 6, 3)
    assert windows.start.numpy().tolist() == [0, 3, 6, 0, 0]
    assert windows.length.numpy().tolist() == [4, 4, 4, 0, 4]
    assert windows.offset.numpy().tolist() == [1] * 5
    assert windows.count.numpy().tolist() == [3, 1, 1]
    assert max_context(windows).to_list() == [[True] * 4, [False, True, True, True],
                                              [False, True, True, True], [], [True] * 4]


def test_the_originals_windows_and_max_context_on_every_small_case():
    """Contexts of 0 to 29 tokens; windows of 1 to 9; strides of 1, shorter than, equal to and
    longer than a window: the windows and every token's max-context window, as the original's.
    Ties of min(left, right) abound (stride 1, equal windows) and go by length, then order."""
    cases = [(n, size, stride) for n in range(30) for size in range(1, 10)
             for stride in (1, 2, size - 1, size, size + 1, 100) if stride >= 1]
    for size, stride in sorted({(size, stride) for _, size, stride in cases}):
        lengths = [n for n, s, t in cases if (s, t) == (size, stride)]
        windows = windows_of(lengths, size, stride)
        is_max = max_context(windows).to_list()
        got = list(zip(windows.example.numpy(), windows.start.numpy(), windows.length.numpy()))
        expected, expected_max = [], []
        for example, n in enumerate(lengths):
            spans = original_spans(n, size, stride)
            expected += [(example, s.start, s.length) for s in spans]
            expected_max += [[original_run_squad()._check_is_max_context(spans, i, p)
                              for p in range(s.start, s.start + s.length)]
                             for i, s in enumerate(spans)]
        assert got == expected, (size, stride)
        assert is_max == expected_max, (size, stride)


@pytest.fixture(scope="module")
def tokenizer():
    return FullTokenizer(VOCAB, do_lower_case=True)


@pytest.fixture(scope="module")
def model():
    keras.utils.set_random_seed(0)
    config = BertConfig(vocab_size=30522, hidden_size=32, num_hidden_layers=1,
                        num_attention_heads=4, intermediate_size=64, max_position_embeddings=64)
    return BertSpanLabeler(build_encoder(config))


LONG = ("The leader was John Smith (1895-1943). Steve Smith's house, in Zürich, was built in "
        "1920 by the ÉCOLE  Normale\n\nand later sold; İstanbul's café owners bought it for "
        "3,000 francs. ") * 3
QUESTIONS = [
    ("When was John Smith born?", LONG),  # many windows
    ("a question far longer than max_query_length tokens, cut to its first ones " * 2, LONG),
    ("Where?", "Zürich"),  # one short window
    ("No context", ""),  # no window
    ("", "A blank question: the windows are longer."),
    ("Which?", "one two three four five six seven eight nine ten eleven twelve"),
]


@pytest.mark.parametrize("max_seq_length,doc_stride,max_query_length", [
    (40, 8, 10),  # several windows, stride shorter than a window
    (30, 1, 5),  # stride 1: every token in many windows, max-context ties everywhere
    (30, 22, 5),  # the stride equal to the longest window (a blank question's)
    (24, 100, 4),  # a stride longer than every window: windows end to end
    (64, 32, 16),
])
def test_records_and_serving_make_the_same_windows(model, tokenizer, max_seq_length,
                                                   doc_stride, max_query_length):
    settings = SquadSettings(max_seq_length=max_seq_length, doc_stride=doc_stride,
                             max_query_length=max_query_length)
    examples = [SquadExample(str(i), q, split_context(c)[0])
                for i, (q, c) in enumerate(QUESTIONS)]
    records = list(convert_examples_to_features(examples, tokenizer, max_seq_length,
                                                doc_stride, max_query_length, False))
    export = SquadExport(model, tokenizer, settings)
    _, windows, inputs = export._features(tf.constant([q for q, _ in QUESTIONS]),
                                          tf.constant([c for _, c in QUESTIONS]))
    assert windows.example.numpy().tolist() == [f.example_index for f in records]
    assert windows.index.numpy().tolist() == [f.doc_span_index for f in records]
    np.testing.assert_array_equal(inputs["input_word_ids"], [f.input_ids for f in records])
    np.testing.assert_array_equal(inputs["input_mask"], [f.input_mask for f in records])
    np.testing.assert_array_equal(inputs["input_type_ids"], [f.segment_ids for f in records])
    served_max = export._max_context(windows).numpy()
    for row, feature in zip(served_max, records):
        expected = np.zeros(max_seq_length, bool)
        for position, is_max in feature.token_is_max_context.items():
            expected[position] = is_max
        np.testing.assert_array_equal(row, expected)
