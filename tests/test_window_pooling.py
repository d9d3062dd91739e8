"""Windows pooled into documents (official/modeling/window_pooling.py) and BertDocumentClassifier
against numpy: the model's document logits are its windows' logits (BertClassifier's head on
each window) pooled, or, for mean_cls, the pooler and the classifier on the windows' mean
last-layer [CLS] vector."""

import numpy as np
import pytest

from official.configs import BertConfig
from official.modeling.encoder import build_encoder
from official.modeling.models import BertClassifier, BertDocumentClassifier
from official.modeling.window_pooling import pool_windows

DOCUMENTS = np.array([0, 0, 0, 1, 2, 2], np.int32)


def test_pool_windows_against_numpy():
    vectors = np.random.default_rng(0).normal(size=(6, 3)).astype(np.float32)
    groups = [vectors[DOCUMENTS == d] for d in range(3)]
    np.testing.assert_allclose(pool_windows(vectors, DOCUMENTS, "mean").numpy(),
                               [g.mean(0) for g in groups], rtol=1e-6)
    np.testing.assert_array_equal(pool_windows(vectors, DOCUMENTS, "max").numpy(),
                                  [g.max(0) for g in groups])
    with pytest.raises(ValueError, match="how must be one of"):
        pool_windows(vectors, DOCUMENTS, "min")


@pytest.fixture(scope="module")
def encoder():
    return build_encoder(BertConfig(vocab_size=40, hidden_size=16, num_hidden_layers=2,
                                    num_attention_heads=2, intermediate_size=32,
                                    max_position_embeddings=16))


def inputs():
    rng = np.random.default_rng(1)
    ids = rng.integers(1, 40, size=(6, 10)).astype(np.int32)
    mask = np.ones_like(ids)
    mask[4, 6:] = 0
    return {"input_word_ids": ids * mask, "input_mask": mask, "input_type_ids": 0 * ids,
            "window_document": DOCUMENTS}


@pytest.mark.parametrize("pool", ["mean_logits", "max_logits", "mean_cls"])
def test_document_classifier_pools_its_windows(encoder, pool):
    model = BertDocumentClassifier(encoder, 3, pool)
    features = inputs()
    outputs = model(features, training=False)
    # Each window alone through BertClassifier with the same head weights.
    single = BertClassifier(encoder, 3)
    single.classifier.set_weights(model.classifier.get_weights())
    rows = {k: v for k, v in features.items() if k != "window_document"}
    window_logits = single(rows, training=False).numpy()
    np.testing.assert_allclose(outputs["window_logits"].numpy(), window_logits, atol=1e-6)
    groups = range(3)
    if pool == "mean_logits":
        expected = [window_logits[DOCUMENTS == d].mean(0) for d in groups]
    elif pool == "max_logits":
        expected = [window_logits[DOCUMENTS == d].max(0) for d in groups]
    else:
        cls = encoder(rows)["sequence_output"].numpy()[:, 0]
        pooler_kernel, pooler_bias = encoder.pooler.get_weights()[:2]
        kernel, bias = model.classifier.get_weights()
        expected = [np.tanh(cls[DOCUMENTS == d].mean(0) @ pooler_kernel + pooler_bias) @ kernel
                    + bias for d in groups]
    np.testing.assert_allclose(outputs["logits"].numpy(), expected, atol=1e-5)
