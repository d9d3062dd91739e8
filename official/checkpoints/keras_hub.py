"""keras-hub `BertBackbone` weights (and presets saved with `save_to_preset`), both ways.

keras-hub keeps attention projections per head: query/key/value kernels [hidden, heads, head_size]
with biases [heads, head_size], and the output kernel [heads, head_size, hidden]. Reshaping them to
the original [hidden, hidden] matrices is lossless because both lay heads out head-major.
keras-hub's BERT always uses the tanh GELU, which is the original's "gelu"; a model with another
activation cannot become a keras-hub BertBackbone and is refused rather than silently changed.
keras-hub has no next-sentence head and its masked-LM head is a different class, so only the
encoder travels through this format.
"""

from __future__ import annotations

import os

import keras
import keras_hub
import numpy as np

from official.checkpoints import tf1
from official.checkpoints.errors import CheckpointError
from official.configs import BertConfig, ConfigError

_VOCAB_ASSET = os.path.join("assets", "tokenizer", "vocabulary.txt")


def _pairs(backbone: keras_hub.models.BertBackbone) -> list[tuple[str, keras.Variable, tuple]]:
    """(original name, backbone variable, original shape) for every backbone weight."""
    hidden = backbone.hidden_dim
    pairs = [("bert/embeddings/word_embeddings", backbone.token_embedding.embeddings, None),
             ("bert/embeddings/position_embeddings",
              backbone.position_embedding.position_embeddings, None),
             ("bert/embeddings/token_type_embeddings", backbone.segment_embedding.embeddings, None),
             ("bert/embeddings/LayerNorm/gamma", backbone.embeddings_layer_norm.gamma, None),
             ("bert/embeddings/LayerNorm/beta", backbone.embeddings_layer_norm.beta, None)]
    for i, layer in enumerate(backbone.transformer_layers):
        p = f"bert/encoder/layer_{i}"
        attention = layer._self_attention_layer
        for name, dense in (("query", attention._query_dense), ("key", attention._key_dense),
                            ("value", attention._value_dense)):
            pairs += [(f"{p}/attention/self/{name}/kernel", dense.kernel, (hidden, hidden)),
                      (f"{p}/attention/self/{name}/bias", dense.bias, (hidden,))]
        dense_layers = ((f"{p}/attention/output/dense", attention._output_dense),
                        (f"{p}/intermediate/dense", layer._feedforward_intermediate_dense),
                        (f"{p}/output/dense", layer._feedforward_output_dense))
        for name, dense in dense_layers:
            shape = (hidden, hidden) if name.endswith("attention/output/dense") else None
            pairs += [(f"{name}/kernel", dense.kernel, shape), (f"{name}/bias", dense.bias, None)]
        for name, norm in ((f"{p}/attention/output/LayerNorm", layer._self_attention_layer_norm),
                           (f"{p}/output/LayerNorm", layer._feedforward_layer_norm)):
            pairs += [(f"{name}/gamma", norm.gamma, None), (f"{name}/beta", norm.beta, None)]
    pairs += [("bert/pooler/dense/kernel", backbone.pooled_dense.kernel, None),
              ("bert/pooler/dense/bias", backbone.pooled_dense.bias, None)]
    return pairs


def config_of(backbone: keras_hub.models.BertBackbone) -> BertConfig:
    """The `BertConfig` of a backbone (keras-hub has one dropout rate for both places)."""
    return BertConfig(vocab_size=backbone.vocabulary_size, hidden_size=backbone.hidden_dim,
                      num_hidden_layers=backbone.num_layers, num_attention_heads=backbone.num_heads,
                      intermediate_size=backbone.intermediate_dim, hidden_act="gelu",
                      hidden_dropout_prob=backbone.dropout,
                      attention_probs_dropout_prob=backbone.dropout,
                      max_position_embeddings=backbone.max_sequence_length,
                      type_vocab_size=backbone.num_segments)


def weights_of(backbone: keras_hub.models.BertBackbone) -> tf1.Weights:
    """The backbone's weights under the original names and shapes."""
    weights = {}
    for name, variable, shape in _pairs(backbone):
        value = keras.ops.convert_to_numpy(variable.value)
        weights[name] = value.reshape(shape) if shape else value
    return weights


def backbone_from(config: BertConfig, weights: tf1.Weights) -> keras_hub.models.BertBackbone:
    """A keras-hub BertBackbone computing the same function as our encoder with `weights`."""
    if config.extensions():
        raise ConfigError(f"keras-hub's BertBackbone is BERT alone, not "
                          f"{' and '.join(config.extensions())}: write tf1 or tf2")
    if config.hidden_act != "gelu":
        raise ConfigError(f"keras-hub's BertBackbone computes the tanh GELU only; this model's "
                          f"hidden_act is {config.hidden_act!r}")
    if config.hidden_dropout_prob != config.attention_probs_dropout_prob:
        raise ConfigError("keras-hub's BertBackbone has one dropout rate; hidden_dropout_prob "
                          f"{config.hidden_dropout_prob} != attention_probs_dropout_prob "
                          f"{config.attention_probs_dropout_prob}")
    backbone = keras_hub.models.BertBackbone(
        vocabulary_size=config.vocab_size, num_layers=config.num_hidden_layers,
        num_heads=config.num_attention_heads, hidden_dim=config.hidden_size,
        intermediate_dim=config.intermediate_size, dropout=config.hidden_dropout_prob,
        max_sequence_length=config.max_position_embeddings,
        num_segments=config.type_vocab_size)
    for name, variable, _ in _pairs(backbone):
        variable.assign(np.reshape(weights[name], variable.shape))
    return backbone


def read(preset_dir: str) -> tuple[BertConfig, tf1.Weights, str | None]:
    """Reads a keras-hub preset directory: (config, original-named weights, vocab path or None)."""
    if not os.path.isfile(os.path.join(preset_dir, "config.json")):
        raise CheckpointError(f"{preset_dir}: not a keras-hub preset (no config.json)")
    try:
        backbone = keras_hub.models.Backbone.from_preset(preset_dir)
    except Exception as e:  # keras-hub raises many untyped errors on a broken preset.
        raise CheckpointError(f"{preset_dir}: unreadable keras-hub preset ({e})") from None
    if not isinstance(backbone, keras_hub.models.BertBackbone):
        raise CheckpointError(f"{preset_dir}: a {type(backbone).__name__}, not a BertBackbone")
    vocab = os.path.join(preset_dir, _VOCAB_ASSET)
    return config_of(backbone), weights_of(backbone), vocab if os.path.isfile(vocab) else None


def write(preset_dir: str, config: BertConfig, weights: tf1.Weights, vocab_file: str | None,
          do_lower_case: bool) -> None:
    """Saves a keras-hub preset (backbone, and tokenizer when there is a vocab)."""
    backbone_from(config, weights).save_to_preset(preset_dir)
    if vocab_file:
        keras_hub.models.BertTokenizer(vocabulary=vocab_file,
                                       lowercase=do_lower_case).save_to_preset(preset_dir)
