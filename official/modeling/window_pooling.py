"""A document's windows pooled into one vector: `pool_windows`, and `WindowPooling`, its layer.

A batch of documents reaches the model as their windows' rows, each document's consecutive, with
`window_document` (int32 [windows]) naming each row's document, 0 .. documents - 1 in order
(data_prep.classifier_features' document records, official/export/classifier.py's windows).
Every document has at least one window, so documents = max(window_document) + 1. How windows
become documents (--window_pool, official/tasks/long_doc_settings.py):

    mean   the mean of the windows' vectors (logits, or last-layer [CLS] vectors)
    max    each component's largest value over the windows (max_logits)

Computed in float32 whatever the model's compute dtype, as the logits are.
"""

from __future__ import annotations

import keras
import tensorflow as tf

POOLS = ("mean", "max")


def pool_windows(vectors: tf.Tensor, window_document: tf.Tensor, how: str,
                 num_documents: tf.Tensor | None = None) -> tf.Tensor:
    """float32 [documents, dim]: the `how` of each document's rows of `vectors`
    ([windows, dim]); num_documents defaults to max(window_document) + 1."""
    if how not in POOLS:
        raise ValueError(f"how must be one of {', '.join(POOLS)}, got {how!r}")
    vectors = tf.cast(vectors, tf.float32)
    window_document = tf.cast(window_document, tf.int32)
    if num_documents is None:
        num_documents = tf.reduce_max(window_document) + 1
    if how == "max":
        return tf.math.unsorted_segment_max(vectors, window_document, num_documents)
    return tf.math.unsorted_segment_mean(vectors, window_document, num_documents)


@keras.saving.register_keras_serializable(package="official")
class WindowPooling(keras.layers.Layer):
    """`pool_windows` as a layer of a functional model: (vectors [windows, dim],
    window_document [windows]) -> float32 [documents, dim]."""

    def __init__(self, how: str, **kwargs):
        super().__init__(**kwargs)
        if how not in POOLS:
            raise ValueError(f"how must be one of {', '.join(POOLS)}, got {how!r}")
        self.how = how

    def call(self, vectors, window_document):
        return pool_windows(vectors, window_document, self.how)

    def compute_output_spec(self, vectors, window_document):
        return keras.KerasTensor((None, vectors.shape[-1]), dtype="float32")

    def get_config(self):
        return dict(super().get_config(), how=self.how)
