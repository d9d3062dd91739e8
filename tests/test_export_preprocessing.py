"""official/export/preprocessing.py: Hub's preprocessor API with the original's features.

The references are data_prep.classifier_features.convert_examples (the fine-tuning records) and
FullTokenizer.tokenize_tf; loading the SavedModel in a fresh process is in
test_export_saved_model.py.
"""

import os

import numpy as np
import pytest
import tensorflow as tf

from data_prep.classifier_features import convert_examples
from data_prep.glue import InputExample
from official.export.preprocessing import BertPreprocessor, clean_utf8
from official.text.tokenizer import FullTokenizer

VOCAB = os.path.join(os.path.dirname(__file__), "..", "data", "vocab", "uncased_vocab.txt")
TEXTS = ["Hello, World! John Johanson's house.", "", "   ", "Héllo ÇA VA? naïve café",
         "日本語のテキスト and ＡＢＣ", "a\u200bb \x00c\ufeff d", "ΟΔΟΣ ΣΑΣ.", "x" * 250,
         "unaffable " * 30]


@pytest.fixture(scope="module")
def tokenizer():
    return FullTokenizer(VOCAB, do_lower_case=True)


@pytest.fixture(scope="module")
def preprocessor(tokenizer):
    return BertPreprocessor(tokenizer, seq_length=16)


def _features(tokenizer, pairs, seq_length):
    examples = [InputExample(str(i), a, b or None, "0") for i, (a, b) in enumerate(pairs)]
    features = convert_examples(examples, ["0"], seq_length, tokenizer)
    return {"input_word_ids": [f.input_ids for f in features],
            "input_mask": [f.input_mask for f in features],
            "input_type_ids": [f.segment_ids for f in features]}


def _assert_inputs_equal(got, expected):
    assert set(got) == set(expected)
    for name in expected:
        assert got[name].dtype == tf.int32
        np.testing.assert_array_equal(got[name], expected[name], err_msg=name)


def test_tokenize_has_words_and_the_tokenizers_pieces(preprocessor, tokenizer):
    tokens = preprocessor.tokenize(tf.constant(TEXTS))
    assert tokens.shape.rank == 3 and tokens.dtype == tf.int32
    assert tokens.merge_dims(1, 2).to_list() == tokenizer.tokenize_tf(
        tf.constant(TEXTS)).to_list()
    # "john johanson ' s house": pieces grouped by word.
    assert tokenizer.convert_ids_to_tokens(tokens[0][5].numpy().tolist()) == ["johan", "##son"]


def test_call_is_the_single_text_features(preprocessor, tokenizer):
    _assert_inputs_equal(preprocessor(tf.constant(TEXTS)),
                         _features(tokenizer, [(t, "") for t in TEXTS], 16))


@pytest.mark.parametrize("seq_length", [3, 9, 40])
def test_bert_pack_inputs_is_the_pair_features(preprocessor, tokenizer, seq_length):
    a, b = TEXTS, TEXTS[::-1]
    got = preprocessor.bert_pack_inputs(
        [preprocessor.tokenize(tf.constant(a)), preprocessor.tokenize(tf.constant(b))],
        seq_length=tf.constant(seq_length))
    _assert_inputs_equal(got, _features(tokenizer, list(zip(a, b)), seq_length))
    default = preprocessor.bert_pack_inputs([preprocessor.tokenize(tf.constant(a))])
    assert default["input_word_ids"].shape == (len(a), 16)


def test_vocab_asset_special_tokens_and_signature(preprocessor, tokenizer):
    assert preprocessor.vocab_file.asset_path.numpy().decode() == VOCAB
    assert bool(preprocessor.do_lower_case.numpy())
    special = {k: int(v) for k, v in preprocessor.tokenize.get_special_tokens_dict().items()}
    assert special == {"vocab_size": 30522, "start_of_sequence_id": 101,
                       "end_of_segment_id": 102, "padding_id": 0, "mask_id": 103}
    serve = preprocessor.signatures()["serving_default"]
    _assert_inputs_equal(serve(text=tf.constant(TEXTS[:2])),
                         _features(tokenizer, [(t, "") for t in TEXTS[:2]], 16))


def test_clean_utf8_drops_bytes_the_tokenizer_drops(tokenizer):
    raw = tf.constant([b"caf\xc3\xa9 \xff\xfeok", b"\xc3"])
    assert clean_utf8(raw).numpy().tolist() == ["café ok".encode(), b""]
    assert tokenizer.tokenize_tf(raw).to_list() == tokenizer.tokenize_tf(clean_utf8(raw)).to_list()
