"""official/robustness/classifier.py: a classifier export read through its signature.

The reference is the loaded export's own signature called once on every text; the exports are
tiny ones made here (`make_export`, also used by tests/test_behavioral_test.py).
"""

import numpy as np
import pytest
import tensorflow as tf

from official.robustness.classifier import ExportedClassifier

WORDS = ["the", "flight", "was", "good", "bad", "great", "awful", "not", "a", "crew", "seat",
         "i", "love", "hate", "this", "it", "is", "american", "thank", "you"]


def make_export(root, labels, kind="classifier", seed=0, initializer_range=0.02) -> str:
    """A tiny export of `kind` (classifier, regression, unlabelled: a classifier export
    without class_labels, as made before they were saved; sentence_encoder) under `root`;
    returns its export_dir. A larger `initializer_range` spreads the untrained model's
    probabilities."""
    import keras

    from official.configs import BertConfig
    from official.export import saving
    from official.export.classifier import ClassifierExport
    from official.export.sentence_encoder import SentenceEncoderExport
    from official.modeling.encoder import build_encoder
    from official.modeling.models import BertClassifier, BertSentenceEncoder
    from official.text.tokenizer import FullTokenizer

    root.mkdir(parents=True, exist_ok=True)
    vocab = root / "vocab.txt"
    vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ".", ","] + WORDS)
                     + "\n", encoding="utf-8")
    keras.utils.set_random_seed(seed)
    config = BertConfig(vocab_size=len(WORDS) + 7, hidden_size=16, num_hidden_layers=1,
                        num_attention_heads=2, intermediate_size=32, max_position_embeddings=32,
                        initializer_range=initializer_range)
    tokenizer = FullTokenizer(str(vocab))
    if kind == "sentence_encoder":
        module = SentenceEncoderExport(BertSentenceEncoder(build_encoder(config), "mean", True),
                                       tokenizer, max_seq_length=16)
    else:
        regression = kind == "regression"
        model = BertClassifier(build_encoder(config), num_labels=1 if regression else len(labels))
        module = ClassifierExport(model, tokenizer, None if regression else labels, 16,
                                  pair=False)
        if kind == "unlabelled":
            del module.class_labels
    export_dir = str(root / kind)
    saving.save(module, export_dir, module.signatures())
    return export_dir


@pytest.fixture(scope="module")
def exports(tmp_path_factory):
    root = tmp_path_factory.mktemp("robustness_classifier")
    return {kind: make_export(root, ["negative", "neutral", "positive"], kind)
            for kind in ("classifier", "regression", "unlabelled", "sentence_encoder")}


TEXTS = ["the flight was good", "i hate this crew", "", "it is not a great seat", "thank you",
         "awful awful awful", "the american crew was great, thank you", "unknown words here"]


def test_labels_batches_and_order_are_the_exports_own(exports):
    model = ExportedClassifier(exports["classifier"])
    assert model.labels == ["negative", "neutral", "positive"] and not model.pair
    assert model.path.endswith(tuple("0123456789"))  # the newest version folder
    serve = tf.saved_model.load(model.path).signatures["serving_default"]
    once = serve(text_a=tf.constant(TEXTS))["probabilities"].numpy()
    for batch_size in (1, 3, 8, 100):
        got = model.probabilities(TEXTS, batch_size=batch_size)
        assert got.dtype == np.float32 and got.shape == (8, 3)
        np.testing.assert_allclose(got, once, atol=1e-6)
    np.testing.assert_allclose(model.probabilities(TEXTS[::-1], batch_size=3), once[::-1],
                               atol=1e-6)
    assert model.probabilities([]).shape == (0, 3)
    assert ExportedClassifier(model.path).labels == model.labels  # a version folder itself


@pytest.mark.parametrize("kind, error", [
    ("sentence_encoder", "takes ['text'], not text_a (and text_b) string vectors: not a "
                         "classifier export"),
    ("regression", "a regression export (a score, no labels)"),
    ("unlabelled", "does not say its labels (made before classifier exports kept them): "
                   "export it again"),
])
def test_other_exports_are_refused_in_one_line(exports, kind, error):
    with pytest.raises(ValueError) as raised:
        ExportedClassifier(exports[kind])
    message = str(raised.value)
    assert error in message and "\n" not in message and message.startswith("/")


def test_texts_b_must_fit_the_export(exports):
    model = ExportedClassifier(exports["classifier"])
    with pytest.raises(ValueError, match="a single-text export takes no texts_b"):
        model.probabilities(["a"], texts_b=["b"])
    with pytest.raises(ValueError, match="batch_size must be at least 1"):
        model.probabilities(["a"], batch_size=0)
