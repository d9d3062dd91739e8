"""`BertEncoder`: the BERT network from token ids to contextual vectors (no task head).

Inputs and outputs follow the TF Hub BERT convention, so code written for Hub encoders works:

    inputs  = {"input_word_ids": int32 [batch, seq_len],
               "input_mask":     int32 [batch, seq_len],   # 1 real token, 0 padding
               "input_type_ids": int32 [batch, seq_len]}   # 0 sentence A, 1 sentence B
    outputs = {"sequence_output": [batch, seq_len, hidden],  # last layer
               "pooled_output":   [batch, hidden],           # tanh(W h_[CLS] + b)
               "encoder_outputs": [[batch, seq_len, hidden]] * num_hidden_layers}

Example (a batch of one sequence of five positions, the last one padding):
    >>> import numpy as np
    >>> from official.configs import preset
    >>> from official.modeling.encoder import build_encoder
    >>> encoder = build_encoder(preset("tiny", vocab_size=100))  # 2 layers, hidden 128
    >>> ids = np.array([[2, 7, 9, 3, 0]], "int32")
    >>> inputs = {"input_word_ids": ids, "input_mask": (ids > 0).astype("int32"),
    ...           "input_type_ids": 0 * ids}
    >>> out = encoder(inputs)
    >>> {name: tuple(out[name].shape) for name in ("sequence_output", "pooled_output")}
    {'sequence_output': (1, 5, 128), 'pooled_output': (1, 128)}
    >>> [tuple(output.shape) for output in out["encoder_outputs"]]
    [(1, 5, 128), (1, 5, 128)]

    What a model built on the encoder calls, choosing what to compute and return (here each
    layer's attention, [batch, heads, query_len, seq_len], 0 at the padding key):
    >>> probs = encoder.forward(inputs, attention_probs=True)["attention_probs"]
    >>> [tuple(p.shape) for p in probs]
    [(1, 2, 5, 5), (1, 2, 5, 5)]
    >>> float(probs[0][0, 0, 0, 4])
    0.0
"""

import dataclasses
import difflib

import keras
from keras import ops

from official.configs import BertConfig
from official.modeling import initializers
from official.modeling.embeddings import BertEmbeddings
from official.modeling.lora import LoraDense
from official.modeling.transformer import TransformerBlock

INPUT_NAMES = ("input_word_ids", "input_mask", "input_type_ids")


def encoder_inputs() -> dict:
    """Symbolic Hub-convention inputs of any batch size and sequence length."""
    return {name: keras.Input(shape=(None,), dtype="int32", name=name) for name in INPUT_NAMES}


@keras.saving.register_keras_serializable(package="official")
class BertEncoder(keras.Model):
    """A functional Keras model of the BERT encoder; its config is the `BertConfig` fields.

    Attributes a reader (or a checkpoint map) needs: `embeddings` (BertEmbeddings, tables
    `config.embedding_width` wide), `embedding_projection` (Dense [E, hidden], ALBERT's factorised
    embeddings, or None), `transformer_layers` (list of TransformerBlock: one per layer, or with
    ALBERT's cross-layer sharing one per group and inner group, group-major: `layer_blocks`
    says which a layer runs), `pooler` (Dense, tanh).
    """

    def __init__(self, vocab_size: int, hidden_size: int = 768, num_hidden_layers: int = 12,
                 num_attention_heads: int = 12, intermediate_size: int = 3072,
                 hidden_act: str = "gelu", hidden_dropout_prob: float = 0.1,
                 attention_probs_dropout_prob: float = 0.1, max_position_embeddings: int = 512,
                 type_vocab_size: int = 16, initializer_range: float = 0.02,
                 embedding_size: int | None = None, num_hidden_groups: int | None = None,
                 inner_group_num: int = 1, causal_attention: bool = False, dtype=None,
                 **kwargs):
        # Validates the hyperparameters once, with the same messages as a bert_config.json.
        self.config = BertConfig(
            vocab_size=vocab_size, hidden_size=hidden_size, num_hidden_layers=num_hidden_layers,
            num_attention_heads=num_attention_heads, intermediate_size=intermediate_size,
            hidden_act=hidden_act, hidden_dropout_prob=hidden_dropout_prob,
            attention_probs_dropout_prob=attention_probs_dropout_prob,
            max_position_embeddings=max_position_embeddings, type_vocab_size=type_vocab_size,
            initializer_range=initializer_range, embedding_size=embedding_size,
            num_hidden_groups=num_hidden_groups, inner_group_num=inner_group_num,
            causal_attention=causal_attention)
        config = self.config

        # Layers, made in this order: each initialiser and dropout draws its seed from Keras'
        # global generator when made, so the order is what makes a seed give the same weights.
        self.embeddings = BertEmbeddings(
            vocab_size, config.embedding_width, max_position_embeddings, type_vocab_size,
            initializer_range, hidden_dropout_prob, dtype=dtype, name="embeddings")
        # ALBERT projects only when the widths differ (its embedding_hidden_mapping_in).
        self.embedding_projection = None if config.embedding_width == hidden_size else LoraDense(
            hidden_size, kernel_initializer=initializers.truncated_normal(initializer_range),
            dtype=dtype, name="embedding_projection")
        blocks = config.hidden_groups * inner_group_num
        self.transformer_layers = [
            TransformerBlock(num_attention_heads, intermediate_size, hidden_act,
                             hidden_dropout_prob, attention_probs_dropout_prob,
                             initializer_range, causal_attention, dtype=dtype,
                             name=f"transformer_layer_{i}")
            for i in range(blocks)]
        self.pooler = LoraDense(
            hidden_size, activation="tanh",
            kernel_initializer=initializers.truncated_normal(initializer_range), dtype=dtype,
            name="pooler")

        # The parameter-efficient method that froze the base weights (official/peft sets it).
        self.adapted_by: str | None = None

        # Functional model: the Hub outputs, from `forward`, the one path through the layers.
        inputs = encoder_inputs()
        outputs = self.forward(inputs, per_layer_outputs=True)
        super().__init__(inputs=inputs, outputs=outputs, **kwargs)
        # A functional model's constructor drops `dtype`; heads built on this encoder read its
        # policy, and get_config must carry it for a saved mixed-precision model to load as one.
        if dtype is not None:
            self.dtype_policy = keras.dtype_policies.get(dtype)

    def forward(self, inputs: dict, *, last_layer_positions: str = "all",
                per_layer_outputs: bool = False, attention_probs: bool = False,
                training=None) -> dict:
        """The encoder's computation, the one path through its layers: `encoder(inputs)` is
        `forward(inputs, per_layer_outputs=True)` made a functional graph at construction, and
        every model built on the encoder (official/modeling/models.py) calls `forward` to choose
        what is computed and returned. The layers are the encoder's own, so are the weights;
        `inputs` holds the three Hub-convention inputs (other keys are ignored), symbolic (a
        functional model's construction) or tensors.

        Args:
          last_layer_positions: "all", or "first": the last layer's output is computed for the
            first position ([CLS]) alone, which still attends to every position's keys and
            values. The pooled output reads nothing else of the last layer, so a model that
            needs only it asks for "first": the same values, with that layer's queries,
            attention output projection, feed-forward and LayerNorms run on 1 row per sequence
            instead of seq_len, about three quarters of the layer's multiply-adds (all but the
            fused query/key/value projection). bench/serving_throughput.py measures a classifier's
            serving, which takes this path. A causal encoder computes every position (its pooled
            output reads the last real token).
          per_layer_outputs: also return `encoder_outputs`, every layer's output.
          attention_probs: also return `attention_probs`, every layer's attention.
          training: dropout on or off; None leaves it to Keras (the outer model's call).
        Returns:
          {"sequence_output": [batch, seq_len, hidden], the last layer ([batch, 1, hidden]
                              with "first"),
           "pooled_output":   [batch, hidden], tanh(W h_[CLS] + b),
           "encoder_outputs": (per_layer_outputs) [[batch, seq_len, hidden]] per layer, the
                              last one sequence_output,
           "attention_probs": (attention_probs) [float32 [batch, heads, query_len, seq_len]]
                              per layer, query_len 1 for the last layer with "first": the
                              softmax before dropout, 0 at padding keys (see SelfAttention)}
        """
        if last_layer_positions not in ("all", "first"):
            raise ValueError(f"last_layer_positions must be 'all' or 'first', "
                             f"not {last_layer_positions!r}")
        if attention_probs and self.config.inner_group_num > 1:
            raise ValueError("a layer of inner_group_num > 1 blocks has that many attention "
                             "maps, not one")
        mask = inputs["input_mask"]
        causal = self.config.causal_attention
        # Under a causal mask the pooled output reads the last real token, whose output needs
        # every position's: the [CLS]-only shortcut does not apply.
        first_only = last_layer_positions == "first" and not causal
        x = self.embed(inputs["input_word_ids"], inputs["input_type_ids"], training=training)
        layer_outputs, layer_probs = [], []
        for i in range(self.config.num_hidden_layers):
            last = i == self.config.num_hidden_layers - 1
            for block in self.layer_blocks(i):
                x, probs = block(x, mask, training=training, first_token_only=last and first_only,
                                 return_attention_probs=True)
            layer_outputs.append(x)
            layer_probs.append(probs)
        outputs = {"sequence_output": x, "pooled_output": self.pooler(self._pooled_token(x, mask))}
        if per_layer_outputs:
            outputs["encoder_outputs"] = layer_outputs
        if attention_probs:
            outputs["attention_probs"] = layer_probs
        return outputs

    def embed(self, word_ids, type_ids, training=None):
        """The input to the first layer, [batch, seq_len, hidden]: the embeddings' output, through
        ALBERT's projection when the tables are narrower than the layers."""
        x = self.embeddings(word_ids, type_ids, training=training)
        return x if self.embedding_projection is None else self.embedding_projection(x)

    def layer_blocks(self, layer: int) -> list:
        """The TransformerBlocks layer `layer` (0-based) applies in turn: its own, or with ALBERT's
        sharing its group's (`BertConfig.group_of_layer`) inner blocks."""
        inner = self.config.inner_group_num
        group = self.config.group_of_layer(layer)
        return self.transformer_layers[group * inner:(group + 1) * inner]

    def _pooled_token(self, x, mask):
        """[batch, hidden]: the [CLS] output, or under a causal mask the last real token's (GPT's
        rule: [CLS] would have seen only itself)."""
        if not self.config.causal_attention:
            return x[:, 0, :]
        last = ops.sum(ops.cast(mask, "int32"), axis=1) - 1
        return ops.take_along_axis(x, ops.maximum(last, 0)[:, None, None], axis=1)[:, 0, :]

    @property
    def adapted(self) -> bool:
        """True once a parameter-efficient method (official/peft) froze its base: its trainable
        variables are then the run's, and the rest is the base checkpoint's."""
        return self.adapted_by is not None

    def get_config(self):
        config = super().get_config()
        config.update(self.config.to_dict())
        return config

    @classmethod
    def from_config(cls, config):
        """The encoder a .keras file's config describes; a key this version does not know is
        refused (a newer version's setting would silently not apply: Keras drops it)."""
        fields = [field.name for field in dataclasses.fields(BertConfig)]
        unknown = sorted(set(config) - set(fields) - set(keras.layers.Layer().get_config()))
        if unknown:
            close = difflib.get_close_matches(unknown[0], fields, n=1, cutoff=0.8)
            hint = f" (did you mean {close[0]}?)" if close else ""
            raise ValueError(f"the .keras file's encoder config: unknown key {unknown[0]}{hint}; "
                             "a newer version's setting would not apply here")
        return cls(**config)


def encoder_of(model: keras.Model) -> BertEncoder:
    """The encoder of `model`: the model itself, or the `encoder` every model of
    official/modeling/models.py is built on."""
    return model if isinstance(model, BertEncoder) else model.encoder


def build_encoder(config: BertConfig, dtype=None) -> BertEncoder:
    """The encoder for a `BertConfig`; `dtype` may be a mixed policy such as "mixed_bfloat16"."""
    return BertEncoder(**config.to_dict(), dtype=dtype, name="bert_encoder")
