"""`BertEmbeddings`: word + position + segment embeddings, LayerNorm, dropout."""

import keras
from keras import ops

from official.modeling import initializers
from official.modeling.dropout import Dropout


@keras.saving.register_keras_serializable(package="official")
class BertEmbeddings(keras.layers.Layer):
    """Sums the three embeddings of BERT's input and normalises them.

    Call args:
      word_ids: int [batch, seq_len] WordPiece ids.
      type_ids: int [batch, seq_len] segment ids (0 for sentence A, 1 for sentence B).
    Returns:
      [batch, seq_len, hidden_size] in the layer's compute dtype.

    Positions are learnt absolute embeddings; a sequence of length S uses the first S rows, so any
    length up to `max_position_embeddings` works without padding to the maximum.
    The word table is public (`word_embeddings`) because the masked-LM head ties its decoder to it.
    """

    def __init__(self, vocab_size: int, hidden_size: int, max_position_embeddings: int,
                 type_vocab_size: int, initializer_range: float = 0.02,
                 dropout_rate: float = 0.1, **kwargs):
        super().__init__(**kwargs)
        self.vocab_size = vocab_size
        self.hidden_size = hidden_size
        self.max_position_embeddings = max_position_embeddings
        self.type_vocab_size = type_vocab_size
        self.initializer_range = initializer_range
        self.dropout_rate = dropout_rate
        self.layer_norm = keras.layers.LayerNormalization(
            epsilon=1e-12, dtype=self.dtype_policy, name="layer_norm")
        self.dropout = Dropout(dropout_rate, dtype=self.dtype_policy, name="dropout")

    def build(self, word_ids_shape, type_ids_shape=None):
        init = initializers.truncated_normal(self.initializer_range)
        self.word_embeddings = self.add_weight(
            name="word_embeddings", shape=(self.vocab_size, self.hidden_size), initializer=init)
        self.position_embeddings = self.add_weight(
            name="position_embeddings", shape=(self.max_position_embeddings, self.hidden_size),
            initializer=init)
        self.token_type_embeddings = self.add_weight(
            name="token_type_embeddings", shape=(self.type_vocab_size, self.hidden_size),
            initializer=init)
        self.layer_norm.build((None, None, self.hidden_size))

    def call(self, word_ids, type_ids, training=None):
        seq_len = ops.shape(word_ids)[1]
        x = ops.take(self.word_embeddings, word_ids, axis=0)
        x = x + ops.take(self.token_type_embeddings, type_ids, axis=0)
        x = x + ops.expand_dims(self.position_embeddings[:seq_len], 0)
        return self.dropout(self.layer_norm(x), training=training)

    def compute_output_shape(self, word_ids_shape, type_ids_shape=None):
        return tuple(word_ids_shape) + (self.hidden_size,)

    def get_config(self):
        config = super().get_config()
        config.update(vocab_size=self.vocab_size, hidden_size=self.hidden_size,
                      max_position_embeddings=self.max_position_embeddings,
                      type_vocab_size=self.type_vocab_size,
                      initializer_range=self.initializer_range, dropout_rate=self.dropout_rate)
        return config
