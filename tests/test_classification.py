"""ClassificationTask on documents read in windows: the loss on the pooled prediction or on every
window with its document's label, against numpy cross-entropy."""

import numpy as np
import tensorflow as tf

from official.tasks.classification import ClassificationTask
from official.tasks.long_doc_settings import LongDocSettings


def cross_entropy(logits, labels):
    shifted = logits - logits.max(-1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))
    return -log_probs[np.arange(len(labels)), labels]


def test_document_and_window_losses_against_numpy():
    rng = np.random.default_rng(0)
    documents = np.array([0, 0, 0, 1, 2, 2], np.int32)
    outputs = {"logits": rng.normal(size=(3, 4)).astype(np.float32),
               "window_logits": rng.normal(size=(6, 4)).astype(np.float32)}
    features = {"label_ids": np.array([2, 0, 3], np.int32),
                "is_real_example": np.array([1, 1, 0], np.int32),  # document 2 is padding
                "window_document": documents}
    real = np.array([1.0, 1.0, 0.0])
    for window_loss, expected in [
            ("document", (cross_entropy(outputs["logits"], features["label_ids"]) * real).sum()
             / 2),
            ("window", (cross_entropy(outputs["window_logits"],
                                      features["label_ids"][documents]) * real[documents]).sum()
             / 4)]:
        task = ClassificationTask("tsv", ["a", "b", "c", "d"], long_doc=LongDocSettings(
            "windows", window_loss=window_loss).resolved(16))
        tensors = {k: tf.constant(v) for k, v in features.items()}
        loss, stats = task.loss_and_stats(outputs, tensors, task.normalizers(tensors))
        np.testing.assert_allclose(float(loss), expected, rtol=1e-5)
        # The metrics count documents, whichever loss trained.
        assert float(stats["examples"]) == 2
        correct = (outputs["logits"].argmax(-1) == features["label_ids"]) * real
        assert float(stats["correct"]) == correct.sum()
