"""A sentence's vector from its tokens' last-layer vectors: `pool_tokens`, and its layer.

    mean   the mean of the real tokens' vectors (padding left out), sentence-transformers'
           default and all-MiniLM-L6-v2's pooling
    cls    the [CLS] token's vector (its last-layer vector, not the pooler's tanh output, as
           sentence-transformers' "cls" mode)
    max    each component's largest value over the real tokens

`normalize` scales each vector to unit L2 norm, so a dot product is the cosine. Computed in
float32 whatever the model's compute dtype. The rules are sentence-transformers' Pooling and
Normalize modules' (a mean divides by the real-token count clamped at 1e-9; max sees padding
as -1e9; normalize divides by the norm clamped at 1e-12), so the same weights give the same
vectors (bench/sentence_embeddings.py).
"""

from __future__ import annotations

import keras
import tensorflow as tf

from official.sentence_settings import POOLINGS


def pool_tokens(sequence_output: tf.Tensor, input_mask: tf.Tensor, pooling: str,
                normalize: bool = False) -> tf.Tensor:
    """float32 [batch, hidden] from sequence_output [batch, seq_len, hidden] and input_mask
    [batch, seq_len] (1 for real tokens)."""
    if pooling not in POOLINGS:
        raise ValueError(f"pooling must be one of {', '.join(POOLINGS)}, got {pooling!r}")
    x = tf.cast(sequence_output, tf.float32)
    mask = tf.cast(input_mask, tf.float32)[:, :, tf.newaxis]
    if pooling == "cls":
        pooled = x[:, 0]
    elif pooling == "max":
        pooled = tf.reduce_max(tf.where(mask > 0, x, -1e9), axis=1)
    else:
        pooled = tf.reduce_sum(x * mask, axis=1) / tf.maximum(tf.reduce_sum(mask, axis=1), 1e-9)
    if normalize:
        pooled = pooled / tf.maximum(tf.norm(pooled, axis=-1, keepdims=True), 1e-12)
    return pooled


@keras.saving.register_keras_serializable(package="official")
class SentencePooling(keras.layers.Layer):
    """`pool_tokens` as a layer: (sequence_output, input_mask) -> float32 [batch, hidden]."""

    def __init__(self, pooling: str = "mean", normalize: bool = False, **kwargs):
        super().__init__(**kwargs)
        if pooling not in POOLINGS:
            raise ValueError(f"pooling must be one of {', '.join(POOLINGS)}, got {pooling!r}")
        self.pooling, self.normalize = pooling, normalize

    def call(self, sequence_output, input_mask):
        return pool_tokens(sequence_output, input_mask, self.pooling, self.normalize)

    def compute_output_spec(self, sequence_output, input_mask):
        return keras.KerasTensor((sequence_output.shape[0], sequence_output.shape[-1]),
                                 dtype="float32")

    def get_config(self):
        return dict(super().get_config(), pooling=self.pooling, normalize=self.normalize)
