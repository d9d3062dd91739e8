"""`TransformerBlock`: one post-LayerNorm BERT layer (attention, then feed-forward)."""

from __future__ import annotations

import keras
from keras import ops

from official.modeling import activations, initializers
from official.modeling.adapter import BottleneckAdapter
from official.modeling.attention import SelfAttention
from official.modeling.dropout import Dropout
from official.modeling.insertion import InsertedLayer
from official.modeling.lora import LoraDense

# Where a method may insert a layer (see TransformerBlock), in the order the block runs them.
PLACES = ("after_attention", "after_feed_forward")


@keras.saving.register_keras_serializable(package="official")
class TransformerBlock(keras.layers.Layer):
    """x -> LN(x + Dropout(Attention(x))) -> LN(h + Dropout(W2 act(W1 h))), as in the paper;
    `causal`: the attention looks at no later position (SelfAttention).

    A method may `insert` a layer at each of `PLACES`, after a sub-layer's dropout and before
    its residual sum and LayerNorm: LN(x + L(Dropout(Attention(x)))) ("after_attention") and
    LN(h + L(Dropout(W2 act(W1 h)))) ("after_feed_forward"); `add_adapters` puts a Houlsby
    adapter at both, adapter-bert's places. An inserted layer is an attribute of the block named
    as the layer is (`attention_adapter`, `output_adapter`), the path its weights have in a
    `.keras` file; `.keras` configs do not carry inserted layers: official/peft saves and
    restores them.

    Call args:
      x: [batch, seq_len, hidden].
      input_mask: [batch, seq_len], 1 for real tokens.
      first_token_only: compute the output of the first position ([CLS]) alone (it still
        attends to every position): all that a classifier reads of the last layer.
      return_attention_probs: also return the attention's probabilities.
    Returns:
      [batch, seq_len, hidden], or [batch, 1, hidden] with first_token_only; with
      return_attention_probs, the pair (that, probs): probs float32
      [batch, heads, query_len, seq_len], the pre-dropout softmax (see SelfAttention).
    """

    def __init__(self, num_heads: int, intermediate_size: int, hidden_act: str = "gelu",
                 hidden_dropout_prob: float = 0.1, attention_probs_dropout_prob: float = 0.1,
                 initializer_range: float = 0.02, causal: bool = False, **kwargs):
        super().__init__(**kwargs)
        self.causal = causal
        self.num_heads = num_heads
        self.intermediate_size = intermediate_size
        self.hidden_act = hidden_act
        self.hidden_dropout_prob = hidden_dropout_prob
        self.attention_probs_dropout_prob = attention_probs_dropout_prob
        self.initializer_range = initializer_range
        self._inserted_at: dict[str, str] = {}  # place -> the attribute holding its layer

    def build(self, x_shape, input_mask_shape=None):
        hidden = x_shape[-1]
        init = initializers.truncated_normal(self.initializer_range)
        policy = self.dtype_policy
        self.attention = SelfAttention(self.num_heads, self.initializer_range,
                                       self.attention_probs_dropout_prob, self.causal,
                                       dtype=policy, name="attention")
        self.attention.build(x_shape)
        self.attention_dropout = Dropout(self.hidden_dropout_prob, dtype=policy,
                                         name="attention_dropout")
        self.attention_layer_norm = keras.layers.LayerNormalization(
            epsilon=1e-12, dtype=policy, name="attention_layer_norm")
        self.attention_layer_norm.build(x_shape)
        self.intermediate_dense = LoraDense(
            self.intermediate_size, activation=activations.get(self.hidden_act),
            kernel_initializer=init, dtype=policy, name="intermediate_dense")
        self.intermediate_dense.build(x_shape)
        self.output_dense = LoraDense(hidden, kernel_initializer=init, dtype=policy,
                                      name="output_dense")
        self.output_dense.build(tuple(x_shape[:-1]) + (self.intermediate_size,))
        self.output_dropout = Dropout(self.hidden_dropout_prob, dtype=policy,
                                      name="output_dropout")
        self.output_layer_norm = keras.layers.LayerNormalization(
            epsilon=1e-12, dtype=policy, name="output_layer_norm")
        self.output_layer_norm.build(x_shape)

    def insert(self, place: str, layer: InsertedLayer) -> None:
        """Inserts a method's built `layer` (x -> x, [..., hidden]) at `place`, one of `PLACES`.

        Raises:
          ValueError: an unknown place, or one that has a layer already.
        """
        if place not in PLACES:
            raise ValueError(f"{self.name}: no place {place!r}; places: {', '.join(PLACES)}")
        if place in self._inserted_at:
            raise ValueError(f"{self.name} already has {self._inserted_at[place]} at {place}")
        if hasattr(self, layer.name):
            raise ValueError(f"{self.name}: an inserted layer's name, {layer.name!r}, is taken")
        self._tracker.unlock()  # a built layer's state is locked; methods insert after
        try:
            setattr(self, layer.name, layer)
        finally:
            self._tracker.lock()
        self._inserted_at = {**self._inserted_at, place: layer.name}

    def inserted(self) -> dict[str, keras.layers.Layer]:
        """{place: the layer a method inserted there}."""
        return {place: getattr(self, name) for place, name in self._inserted_at.items()}

    def inserted_variables(self, names: dict[str, str]) -> dict[str, keras.Variable]:
        """{original name: variable} of the inserted layers, each named beside its place's
        original sub-layer name (`names`: place -> that name)."""
        variables = {}
        for place, layer in self.inserted().items():
            variables.update(layer.original_variables([names[place]]))
        return variables

    def add_adapters(self, size: int) -> None:
        """Inserts a `BottleneckAdapter` of `size` units after the attention's and after the
        feed-forward's output dropout (see the class docstring). Near the identity when fresh,
        so the block's output barely changes. Raises ValueError when the block has them."""
        if self._inserted_at:
            raise ValueError(f"{self.name} already has adapters or another method's layers")
        hidden = self.attention_layer_norm.gamma.shape[0]
        for place, name in zip(PLACES, ("attention_adapter", "output_adapter")):
            adapter = BottleneckAdapter(size, dtype=self.dtype_policy, name=name)
            adapter.build((None, hidden))
            self.insert(place, adapter)

    def call(self, x, input_mask, training=None, first_token_only=False,
             return_attention_probs=False):
        attended, probs = self.attention(x, input_mask, training=training,
                                         first_query_only=first_token_only,
                                         return_attention_probs=True)
        if first_token_only:
            x = x[:, :1]
        attended = self.attention_dropout(attended, training=training)
        inserted = self.inserted()
        if "after_attention" in inserted:
            attended = inserted["after_attention"](attended)
        x = self.attention_layer_norm(x + attended)
        # The dense layers run on [batch * seq_len, hidden] rows: on a 2-D input a Dense is a
        # MatMul followed directly by its BiasAdd, which TensorFlow's CPU graph optimiser fuses
        # into one oneDNN kernel; a 3-D input puts a Reshape between them and each runs alone
        # (bench/serving_throughput.py times whole models against keras-hub's, whose dense layers
        # take 3-D inputs).
        h = self.output_dense(self.intermediate_dense(ops.reshape(x, (-1, x.shape[-1]))))
        h = self.output_dropout(ops.reshape(h, ops.shape(x)), training=training)
        if "after_feed_forward" in inserted:
            h = inserted["after_feed_forward"](h)
        output = self.output_layer_norm(x + h)
        return (output, probs) if return_attention_probs else output

    def compute_output_shape(self, x_shape, input_mask_shape=None):
        return x_shape

    def compute_output_spec(self, x, input_mask=None, training=None, first_token_only=False,
                            return_attention_probs=False):
        # The block's output has its attention's shape and dtype; the probabilities are its.
        return self.attention.compute_output_spec(x, input_mask, training, first_token_only,
                                                  return_attention_probs)

    def get_config(self):
        config = super().get_config()
        config.update(num_heads=self.num_heads, intermediate_size=self.intermediate_size,
                      hidden_act=self.hidden_act, hidden_dropout_prob=self.hidden_dropout_prob,
                      attention_probs_dropout_prob=self.attention_probs_dropout_prob,
                      initializer_range=self.initializer_range, causal=self.causal)
        return config
