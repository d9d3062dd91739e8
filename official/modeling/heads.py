"""Task heads on top of `BertEncoder` outputs. Every head returns float32 logits.

Each head's weights correspond one-to-one to the original's (see official/checkpoints/tf1.py):
    MaskedLMHead             cls/predictions/{transform/dense, transform/LayerNorm, output_bias}
    DenseLogits(2)           cls/seq_relationship/{output_weights, output_bias} (next sentence)
    DenseLogits(num_labels)  the fine-tuning heads of run_classifier, run_squad (2 outputs per
                             token: start and end) and token tagging, freshly initialised.
"""

import keras
from keras import ops

from official.modeling import activations, initializers
from official.modeling.dropout import Dropout
from official.modeling.embeddings import BertEmbeddings


@keras.saving.register_keras_serializable(package="official")
class MaskedLMHead(keras.layers.Layer):
    """Predicts the original token at masked positions; the decoder is the word-embedding table.

    logits = LN(act(W h + b)) E^T + output_bias, with E the [vocab, hidden] table of `embeddings`
    (weight tying, as in the paper; [vocab, embedding_size] under ALBERT's factorisation, W then
    [hidden, embedding_size]). Only the gathered positions are projected to the vocabulary:
    with 20 of 128 positions masked that is 6x less of the most expensive matmul.

    Call args:
      sequence_output: [batch, seq_len, hidden].
      masked_lm_positions: int [batch, num_predictions] positions to predict; None for all.
    Returns:
      float32 [batch, num_predictions (or seq_len), vocab_size] logits.
    """

    def __init__(self, embeddings: BertEmbeddings, hidden_act: str = "gelu",
                 initializer_range: float = 0.02, **kwargs):
        super().__init__(**kwargs)
        self.embeddings = embeddings
        self.hidden_act = hidden_act
        self.initializer_range = initializer_range

    def build(self, sequence_output_shape, masked_lm_positions_shape=None):
        # To the word table's width: hidden, or ALBERT's embedding_size E (its transform is
        # [hidden, E]).
        width = self.embeddings.hidden_size
        self.transform_dense = keras.layers.Dense(
            width, activation=activations.get(self.hidden_act),
            kernel_initializer=initializers.truncated_normal(self.initializer_range),
            dtype=self.dtype_policy, name="transform_dense")
        self.transform_dense.build(sequence_output_shape)
        self.transform_layer_norm = keras.layers.LayerNormalization(
            epsilon=1e-12, dtype=self.dtype_policy, name="transform_layer_norm")
        self.transform_layer_norm.build(tuple(sequence_output_shape[:-1]) + (width,))
        # Added to the float32 logits, so it must not be autocast to a half-precision policy.
        self.output_bias = self.add_weight(name="output_bias", shape=(self.embeddings.vocab_size,),
                                           initializer="zeros", autocast=False)

    def call(self, sequence_output, masked_lm_positions=None):
        x = sequence_output
        if masked_lm_positions is not None:
            positions = ops.cast(masked_lm_positions, "int32")[:, :, None]
            x = ops.take_along_axis(x, positions, axis=1)
        x = self.transform_layer_norm(self.transform_dense(x))
        logits = ops.matmul(x, ops.transpose(ops.cast(self.embeddings.word_embeddings, x.dtype)))
        return ops.cast(logits, "float32") + self.output_bias

    def compute_output_shape(self, sequence_shape, positions_shape=None):
        length = sequence_shape[1] if positions_shape is None else positions_shape[1]
        return (sequence_shape[0], length, self.embeddings.vocab_size)

    def compute_output_spec(self, sequence_output, masked_lm_positions=None):
        shape = self.compute_output_shape(
            sequence_output.shape,
            None if masked_lm_positions is None else masked_lm_positions.shape)
        return keras.KerasTensor(shape, dtype="float32")

    def get_config(self):
        config = super().get_config()
        config.update(embeddings=keras.layers.serialize(self.embeddings),
                      hidden_act=self.hidden_act, initializer_range=self.initializer_range)
        return config

    @classmethod
    def from_config(cls, config):
        config = dict(config, embeddings=keras.layers.deserialize(config["embeddings"]))
        return cls(**config)


@keras.saving.register_keras_serializable(package="official")
class DenseLogits(keras.layers.Layer):
    """Dropout, then a dense projection to `num_outputs` float32 logits.

    The shared shape of every fine-tuning head and of the next-sentence head: the original applies
    dropout to the pooled (classification) or sequence (span, token) output, then one matrix.

    Call args:
      x: [batch, hidden] or [batch, seq_len, hidden].
    Returns:
      float32 [..., num_outputs].
    """

    def __init__(self, num_outputs: int, dropout_rate: float = 0.0,
                 initializer_range: float = 0.02, **kwargs):
        super().__init__(**kwargs)
        # Position by position: a mask on x (a masked BiLSTM's output, feature_tagger.py) holds
        # for the logits too.
        self.supports_masking = True
        self.num_outputs = num_outputs
        self.dropout_rate = dropout_rate
        self.initializer_range = initializer_range
        self.dropout = Dropout(dropout_rate, dtype=self.dtype_policy, name="dropout")
        self.dense = keras.layers.Dense(
            num_outputs, kernel_initializer=initializers.truncated_normal(initializer_range),
            dtype=self.dtype_policy, name="dense")

    def build(self, x_shape):
        self.dense.build(x_shape)

    def call(self, x, training=None):
        return ops.cast(self.dense(self.dropout(x, training=training)), "float32")

    def compute_output_shape(self, x_shape):
        return tuple(x_shape[:-1]) + (self.num_outputs,)

    def compute_output_spec(self, x, training=None):
        return keras.KerasTensor(self.compute_output_shape(x.shape), dtype="float32")

    def get_config(self):
        config = super().get_config()
        config.update(num_outputs=self.num_outputs, dropout_rate=self.dropout_rate,
                      initializer_range=self.initializer_range)
        return config
