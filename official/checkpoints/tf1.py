"""The original google-research/bert variable names, and checkpoints written with them.

Every checkpoint format the project reads or writes is translated to and from one in-memory form:
a dict {original TF1 variable name: numpy array}, e.g.

    bert/embeddings/word_embeddings                       [vocab, hidden]
    bert/encoder/layer_0/attention/self/query/kernel      [hidden, hidden]
    cls/seq_relationship/output_weights                   [2, hidden]   (stored [out, in])

for a config with ALBERT's fields (official/configs.py), google-research/albert's names instead:
`bert/encoder/embedding_hidden_mapping_in/kernel` [embedding_size, hidden] (when the widths
differ) and one set per shared block, `bert/encoder/transformer/group_0/inner_group_0/
attention_1/self/query/kernel`, `.../LayerNorm` (after attention), `.../ffn_1/intermediate/dense`,
`.../ffn_1/intermediate/output/dense`, `.../LayerNorm_1`; and, in an encoder adapted by
official/peft, the variables its method inserted, under the names their layers give them beside
the original name of where they sit: a projection's matrix (e.g. `.../attention/self/value`,
one name per column block of the fused QKV kernel) or the sub-layer after which they run
(`.../attention/output`, `.../output`). Each inserted layer names its own
(official/modeling/insertion.py): this table knows the places, never a method.

This module owns the map between that form and our Keras model (`weights_of`, `assign`), and
reads and writes name-based TF1 checkpoints (`read`, `write`), so a checkpoint made here also loads
in the original code.
"""

from __future__ import annotations

import dataclasses
import os
import uuid

import keras
import numpy as np
import tensorflow as tf
from absl import logging

from official.checkpoints.errors import CheckpointMismatchError
from official.modeling.encoder import BertEncoder, encoder_of
from official.modeling.transformer import PLACES

Weights = dict[str, np.ndarray]

ENCODER_PREFIX = "bert/"
MASKED_LM_PREFIX = "cls/predictions/"
NEXT_SENTENCE_PREFIX = "cls/seq_relationship/"
# The original's three attention matrices, the column blocks of our fused QKV kernel, in order.
QKV_NAMES = ("query", "key", "value")
# The activations the original's modeling.get_activation knows ("gelu" its tanh form); it raises
# on any other hidden_act, so a config with "gelu_exact" or "swish" builds no model there.
ORIGINAL_ACTIVATIONS = ("gelu", "relu", "tanh", "linear")
# Saved by the original's optimiser and training loop, never model weights.
_TRAINING_STATE_SUFFIXES = ("/adam_m", "/adam_v")
_TRAINING_STATE_NAMES = ("global_step",)


@dataclasses.dataclass(frozen=True)
class _Entry:
    """One original variable: a Keras variable, or one third of the fused QKV kernel/bias.

    part: 0, 1 or 2 for the query, key or value slice of the last axis of `variable`; None when
      the original variable is the whole Keras variable.
    transposed: the original stores the matrix as [out, in] (cls/seq_relationship/output_weights).
    projection: for a projection's kernel, its layer (in the encoder one that takes inserted
      layers, official/modeling/insertion.py).
    """
    variable: keras.Variable
    part: int | None = None
    transposed: bool = False
    projection: keras.layers.Dense | None = None

    @property
    def shape(self) -> tuple[int, ...]:
        shape = tuple(self.variable.shape)
        if self.part is not None:
            shape = shape[:-1] + (shape[-1] // 3,)
        return shape[::-1] if self.transposed else shape


def _dense(prefix: str, layer: keras.layers.Dense) -> dict[str, _Entry]:
    return {f"{prefix}/kernel": _Entry(layer.kernel, projection=layer),
            f"{prefix}/bias": _Entry(layer.bias), **_inserted(layer, [prefix])}


def _inserted(layer: keras.layers.Layer, names) -> dict[str, _Entry]:
    """The variables a method inserted at `layer` (a projection: `names` its column blocks'
    matrix names; a block: {place: its sub-layer's name}), under the names their layers give
    them; none for a layer that takes no inserted ones (a head's plain Dense)."""
    if not hasattr(layer, "inserted_variables"):
        return {}
    return {name: _Entry(variable)
            for name, variable in layer.inserted_variables(names).items()}


def _layer_norm(prefix: str, layer: keras.layers.LayerNormalization) -> dict[str, _Entry]:
    return {f"{prefix}/gamma": _Entry(layer.gamma), f"{prefix}/beta": _Entry(layer.beta)}


# Where each part of a TransformerBlock lives under its block's prefix: BERT's names, and
# google-research/albert's (modeling.py's attention_ffn_block) for a config with ALBERT's fields.
# "after_attention" and "after_feed_forward" are the block's places for inserted layers
# (TransformerBlock.PLACES), named as the sub-layer output they follow.
_BERT_BLOCK = {"attention": "attention/self", "attention_output": "attention/output/dense",
               "after_attention": "attention/output",
               "attention_norm": "attention/output/LayerNorm",
               "intermediate": "intermediate/dense", "output": "output/dense",
               "after_feed_forward": "output", "output_norm": "output/LayerNorm"}
_ALBERT_BLOCK = {"attention": "attention_1/self", "attention_output": "attention_1/output/dense",
                 "after_attention": "attention_1/output", "attention_norm": "LayerNorm",
                 "intermediate": "ffn_1/intermediate/dense",
                 "output": "ffn_1/intermediate/output/dense",
                 "after_feed_forward": "ffn_1/intermediate/output",
                 "output_norm": "LayerNorm_1"}


def _block_prefixes(encoder: BertEncoder) -> list[str]:
    """Each of `encoder.transformer_layers`' name prefix: bert/encoder/layer_{i}, or ALBERT's
    bert/encoder/transformer/group_{g}/inner_group_{j} (the blocks are group-major)."""
    config = encoder.config
    if not config.albert:
        return [f"bert/encoder/layer_{i}" for i in range(len(encoder.transformer_layers))]
    inner = config.inner_group_num
    return [f"bert/encoder/transformer/group_{b // inner}/inner_group_{b % inner}"
            for b in range(len(encoder.transformer_layers))]


def _encoder_entries(encoder: BertEncoder) -> dict[str, _Entry]:
    emb = encoder.embeddings
    entries = {
        "bert/embeddings/word_embeddings": _Entry(emb.word_embeddings),
        "bert/embeddings/position_embeddings": _Entry(emb.position_embeddings),
        "bert/embeddings/token_type_embeddings": _Entry(emb.token_type_embeddings),
        **_layer_norm("bert/embeddings/LayerNorm", emb.layer_norm),
    }
    if encoder.embedding_projection is not None:
        entries.update(_dense("bert/encoder/embedding_hidden_mapping_in",
                              encoder.embedding_projection))
    names = _ALBERT_BLOCK if encoder.config.albert else _BERT_BLOCK
    for p, block in zip(_block_prefixes(encoder), encoder.transformer_layers, strict=True):
        qkv = block.attention.qkv
        attention = f"{p}/{names['attention']}"
        for part, name in enumerate(QKV_NAMES):
            entries[f"{attention}/{name}/kernel"] = _Entry(qkv.kernel, part, projection=qkv)
            entries[f"{attention}/{name}/bias"] = _Entry(qkv.bias, part)
        entries.update(_inserted(qkv, [f"{attention}/{name}" for name in QKV_NAMES]))
        entries.update(_dense(f"{p}/{names['attention_output']}", block.attention.output_dense))
        entries.update(_layer_norm(f"{p}/{names['attention_norm']}",
                                   block.attention_layer_norm))
        entries.update(_dense(f"{p}/{names['intermediate']}", block.intermediate_dense))
        entries.update(_dense(f"{p}/{names['output']}", block.output_dense))
        entries.update(_layer_norm(f"{p}/{names['output_norm']}", block.output_layer_norm))
        entries.update(_inserted(block, {place: f"{p}/{names[place]}" for place in PLACES}))
    entries.update(_dense("bert/pooler/dense", encoder.pooler))
    return entries


def projections(encoder: BertEncoder) -> dict[str, tuple[keras.layers.Dense, int | None]]:
    """{original matrix name (its kernel's name without "/kernel"): (its layer, its column block
    of the fused QKV kernel, None for a whole kernel)} for every projection matrix of the encoder:
    where a method may insert on a projection (official/peft)."""
    return {name.removesuffix("/kernel"): (entry.projection, entry.part)
            for name, entry in _encoder_entries(encoder).items() if entry.projection is not None}


def _head_entries(model: keras.Model) -> dict[str, dict[str, _Entry]]:
    """The pretraining heads a model has, by name prefix (none for a bare encoder or classifier)."""
    heads = {}
    if getattr(model, "masked_lm", None) is not None:
        head = model.masked_lm
        heads[MASKED_LM_PREFIX] = {
            **_dense("cls/predictions/transform/dense", head.transform_dense),
            **_layer_norm("cls/predictions/transform/LayerNorm", head.transform_layer_norm),
            "cls/predictions/output_bias": _Entry(head.output_bias),
        }
    if getattr(model, "next_sentence", None) is not None:
        dense = model.next_sentence.dense
        heads[NEXT_SENTENCE_PREFIX] = {
            "cls/seq_relationship/output_weights": _Entry(dense.kernel, transposed=True),
            "cls/seq_relationship/output_bias": _Entry(dense.bias),
        }
    return heads


def original_names(model: keras.Model) -> dict[str, keras.Variable]:
    """{original name: the Keras variable holding it} for the encoder and pretraining heads.

    The fused QKV kernel and bias each appear under three names (query, key, value). The
    optimiser uses this to apply the original's weight-decay exclusions, which match on names.
    """
    entries = dict(_encoder_entries(encoder_of(model)))
    for head in _head_entries(model).values():
        entries.update(head)
    return {name: entry.variable for name, entry in entries.items()}


def weights_of(model: keras.Model) -> Weights:
    """The model's encoder (and pretraining heads, if any) under the original names."""
    entries = dict(_encoder_entries(encoder_of(model)))
    for head in _head_entries(model).values():
        entries.update(head)
    weights = {}
    for name, entry in entries.items():
        value = keras.ops.convert_to_numpy(entry.variable.value)
        if entry.part is not None:
            value = np.split(value, 3, axis=-1)[entry.part]
        weights[name] = value.T if entry.transposed else value
    return weights


def assign(model: keras.Model, weights: Weights, source: str,
           leave_out: tuple[str, ...] = ()) -> list[keras.Variable]:
    """Sets the model's encoder and pretraining heads from original-named weights; returns the
    variables of the heads the weights lack, left at their initialisation. The heads whose
    prefix is in `leave_out` are not read either: they start fresh by the caller's choice.

    Every encoder variable must be present with its exact shape. A pretraining head of the model
    is loaded when the checkpoint has it and keeps its fresh initialisation when the checkpoint has
    none of it (continuing pretraining from an encoder-only checkpoint, as from Hugging Face's
    BertModel); a head the model lacks is skipped (fine-tuning from a pretraining checkpoint).
    Anything else under
    `bert/` or a loaded head's prefix that the model has no place for is an error, as is a missing
    or mis-shaped variable: nothing is assigned unless everything fits.

    Raises:
      CheckpointMismatchError: naming `source` and listing the offending names and shapes.
    """
    entries = dict(_encoder_entries(encoder_of(model)))
    checked_prefixes = [ENCODER_PREFIX]
    fresh = []
    weights = {name: value for name, value in weights.items() if not name.startswith(leave_out)}
    for prefix, head in _head_entries(model).items():
        if prefix in leave_out:
            logging.info("%s* of %s left out: that head starts fresh", prefix, source)
            fresh += [entry.variable for entry in head.values()]
        elif any(name.startswith(prefix) for name in weights):
            entries.update(head)
            checked_prefixes.append(prefix)
        else:
            logging.info("%s has no %s* variables: that head is built fresh, from its "
                         "initialisation%s", source, prefix,
                         " (its decoder is the word embeddings, as always)"
                         if prefix == MASKED_LM_PREFIX else "")
            fresh += [entry.variable for entry in head.values()]

    missing = [f"{n} {list(e.shape)}" for n, e in entries.items() if n not in weights]
    unexpected_names = {n for n in weights
                        if n not in entries and n.startswith(tuple(checked_prefixes))}
    unexpected = [f"{n} {list(np.shape(v))}" for n, v in weights.items()
                  if n in unexpected_names]
    wrong_shape = [f"{n} checkpoint {list(np.shape(weights[n]))} vs model {list(e.shape)}"
                   for n, e in entries.items()
                   if n in weights and tuple(np.shape(weights[n])) != e.shape]
    problems = [_counted(label, names) for label, names in (
        ("missing from the checkpoint", missing), ("unexpected", unexpected),
        ("of another shape", wrong_shape)) if names]
    if problems:
        raise CheckpointMismatchError(
            f"{source} does not fit the model: {'; '.join(problems)}"
            + (_INSERTED_HINT if not missing and not wrong_shape
               and _inside_layers([n for n in weights if n in unexpected_names], entries)
               else ""))
    ignored = sorted(n for n in weights if n not in entries)
    if ignored:
        logging.info("%s: not loaded (no such part in this model): %s", source, ", ".join(ignored))

    parts: dict[int, tuple[keras.Variable, dict[int, np.ndarray]]] = {}
    for name, entry in entries.items():
        value = weights[name].T if entry.transposed else weights[name]
        if entry.part is None:
            entry.variable.assign(value)
        else:
            parts.setdefault(id(entry.variable), (entry.variable, {}))[1][entry.part] = value
    for variable, by_part in parts.values():
        variable.assign(np.concatenate([by_part[i] for i in range(3)], axis=-1))
    return fresh


# Said of a checkpoint whose only misfit is variables inside the model's own layers: what a
# method that cannot fold leaves there (its layers name their variables beside the sub-layers
# they follow, official/modeling/insertion.py), which the names alone do not say how to rebuild.
_INSERTED_HINT = (": the extra variables sit inside the model's layers, as a parameter-efficient "
                  "method's unfolded ones do: read such a checkpoint with its run "
                  "(--peft_checkpoint=<the run>)")


def _inside_layers(names: list[str], entries: dict) -> bool:
    """Whether every one of `names` is under a layer the model has (bert/encoder/layer_N/)."""
    def layer(name: str) -> str | None:
        parts = name.split("/")
        return "/".join(parts[:3]) if parts[:2] == ["bert", "encoder"] and len(parts) > 3 \
            else None
    layers = {layer(name) for name in entries} - {None}
    return bool(names) and all(layer(name) in layers for name in names)


def _counted(label: str, names: list[str], shown: int = 3) -> str:
    """"3 variables missing: a [2], b [3], c [4]", the first `shown` names and a count of the
    rest: a model of another size mismatches in hundreds of variables, and one line should say
    how many and show the pattern."""
    more = f", and {len(names) - shown} more" if len(names) > shown else ""
    return (f"{len(names)} variable{'s' if len(names) > 1 else ''} {label} "
            f"({', '.join(names[:shown])}{more})")


def is_training_state(name: str) -> bool:
    """True for optimiser slots and step counters, which a weights reader ignores."""
    return name in _TRAINING_STATE_NAMES or name.endswith(_TRAINING_STATE_SUFFIXES)


def read(path: str) -> Weights:
    """Reads a name-based (TF1) checkpoint, such as the original's `bert_model.ckpt`.

    Adam slots and `global_step` are dropped; every other variable is returned as numpy.
    """
    reader = tf.train.load_checkpoint(path)
    return {name: reader.get_tensor(name)
            for name in reader.get_variable_to_shape_map() if not is_training_state(name)}


def write(weights: Weights, prefix: str) -> None:
    """Writes a name-based checkpoint `prefix.index` + `prefix.data-*` the original code reads.

    As TensorFlow's own savers do, the tensors go to a temporary shard that is then merged under
    `prefix`, so an interrupted write never leaves a readable half checkpoint.
    """
    names = sorted(weights)
    tmp_prefix = f"{prefix}_temp_{uuid.uuid4().hex}/part"
    tf.io.gfile.makedirs(os.path.dirname(tmp_prefix))
    tf.raw_ops.SaveV2(prefix=tmp_prefix, tensor_names=names, shape_and_slices=[""] * len(names),
                      tensors=[tf.constant(weights[n]) for n in names])
    tf.raw_ops.MergeV2Checkpoints(checkpoint_prefixes=[tmp_prefix], destination_prefix=prefix,
                                  delete_old_dirs=True)
