"""official/export/classifier.py: raw texts served as the fine-tuning features were fed.

The reference is the Keras classifier on data_prep.classifier_features.convert_examples'
features; the fresh-process load of the SavedModel is in test_export_saved_model.py.
"""

import os

import keras
import numpy as np
import pytest
import tensorflow as tf

from data_prep.classifier_features import convert_examples
from data_prep.glue import InputExample
from official.configs import BertConfig
from official.export.classifier import ClassifierExport
from official.modeling.encoder import build_encoder
from official.modeling.models import BertClassifier
from official.text.tokenizer import FullTokenizer

VOCAB = os.path.join(os.path.dirname(__file__), "..", "data", "vocab", "uncased_vocab.txt")
LABELS = ["contradiction", "entailment", "neutral"]
PAIRS = [("A man is playing a guitar on stage.", "A man plays music."),
         ("The weather is lovely today, isn't it?", ""),
         ("short", "a long second text that has to lose its end to fit " * 4),
         ("Héllo wörld", "日本語")]
SEQ_LENGTH = 24


@pytest.fixture(scope="module")
def tokenizer():
    return FullTokenizer(VOCAB, do_lower_case=True)


@pytest.fixture(scope="module")
def config():
    keras.utils.set_random_seed(0)
    return BertConfig(vocab_size=30522, hidden_size=32, num_hidden_layers=2,
                      num_attention_heads=4, intermediate_size=64, max_position_embeddings=64)


def _reference_logits(model, tokenizer, pairs):
    features = convert_examples([InputExample(str(i), a, b or None, None)
                                 for i, (a, b) in enumerate(pairs)], None, SEQ_LENGTH, tokenizer)
    inputs = {"input_word_ids": np.array([f.input_ids for f in features], np.int32),
              "input_mask": np.array([f.input_mask for f in features], np.int32),
              "input_type_ids": np.array([f.segment_ids for f in features], np.int32)}
    return np.asarray(model(inputs, training=False))


@pytest.mark.parametrize("jit_compile", [False, True])
def test_pairs_give_the_models_probabilities_and_label(config, tokenizer, jit_compile):
    model = BertClassifier(build_encoder(config), num_labels=3)
    export = ClassifierExport(model, tokenizer, LABELS, SEQ_LENGTH, pair=True,
                              jit_compile=jit_compile)
    serve = export.signatures()["serving_default"]
    got = serve(text_a=tf.constant([a for a, _ in PAIRS]),
                text_b=tf.constant([b for _, b in PAIRS]))
    logits = _reference_logits(model, tokenizer, PAIRS)
    np.testing.assert_allclose(got["probabilities"], tf.nn.softmax(logits), atol=1e-5)
    assert [x.decode() for x in got["label"].numpy()] == [LABELS[i] for i in logits.argmax(-1)]


def test_single_text_and_regression(config, tokenizer):
    model = BertClassifier(build_encoder(config), num_labels=1)
    export = ClassifierExport(model, tokenizer, None, SEQ_LENGTH, pair=False)
    serve = export.signatures()["serving_default"]
    assert [spec.name for spec in serve.input_signature] == ["text_a"]
    got = serve(text_a=tf.constant([a for a, _ in PAIRS]))
    assert set(got) == {"score"}
    np.testing.assert_allclose(got["score"],
                               _reference_logits(model, tokenizer,
                                                 [(a, "") for a, _ in PAIRS])[:, 0], atol=1e-5)


def test_bad_requests_give_errors_or_defined_outputs(config, tokenizer):
    model = BertClassifier(build_encoder(config), num_labels=3)
    serve = ClassifierExport(model, tokenizer, LABELS, SEQ_LENGTH,
                             pair=True).signatures()["serving_default"]
    with pytest.raises(tf.errors.InvalidArgumentError, match="same number of texts"):
        serve(text_a=tf.constant(["a", "b"]), text_b=tf.constant(["c"]))
    with pytest.raises((TypeError, ValueError, tf.errors.InvalidArgumentError)):
        serve(text_a=tf.constant([1]), text_b=tf.constant([2]))
    empty = serve(text_a=tf.constant([], tf.string), text_b=tf.constant([], tf.string))
    assert empty["probabilities"].shape == (0, 3) and empty["label"].shape == (0,)
    odd = serve(text_a=tf.constant([b"\xff\xfe caf\xc3\xa9", b"", "long " * 20000]),
                text_b=tf.constant([b"\xc3", b"", b""]))
    expected = _reference_logits(model, tokenizer, [(" café", ""), ("", ""), ("long " * 20000, "")])
    np.testing.assert_allclose(odd["probabilities"], tf.nn.softmax(expected), atol=1e-5)


def test_labels_must_fit_the_model(config, tokenizer):
    model = BertClassifier(build_encoder(config), num_labels=3)
    with pytest.raises(ValueError, match="2 labels for a model of 3"):
        ClassifierExport(model, tokenizer, LABELS[:2], SEQ_LENGTH, pair=True)
    with pytest.raises(ValueError, match="regression"):
        ClassifierExport(model, tokenizer, None, SEQ_LENGTH, pair=True)


def test_a_loaded_export_tells_its_labels_in_output_order_and_a_regression_one_has_none(
        config, tokenizer, tmp_path):
    from official.export import saving

    model = BertClassifier(build_encoder(config), num_labels=3)
    module = ClassifierExport(model, tokenizer, LABELS, SEQ_LENGTH, pair=False)
    loaded = tf.saved_model.load(saving.save(module, str(tmp_path / "labels"),
                                             module.signatures()))
    assert [x.decode() for x in loaded.class_labels().numpy()] == LABELS
    serve = loaded.signatures["serving_default"]
    assert set(serve.structured_outputs) == {"probabilities", "label"}
    got = serve(text_a=tf.constant([a for a, _ in PAIRS]))
    assert [x.decode() for x in got["label"].numpy()] == [
        LABELS[i] for i in got["probabilities"].numpy().argmax(-1)]

    regression = ClassifierExport(BertClassifier(build_encoder(config), num_labels=1), tokenizer,
                                  None, SEQ_LENGTH, pair=False)
    loaded = tf.saved_model.load(saving.save(regression, str(tmp_path / "score"),
                                             regression.signatures()))
    assert not hasattr(loaded, "class_labels")
