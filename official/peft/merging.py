"""Folding LoRA into the matrices it adapts: a LoRA run as an ordinary model.

    fold_lora(weights, settings)   original-named weights with every LoRA pair folded into its
                                   kernel, W + (alpha / r) A B, and the pair dropped
    merged_model(model, plain)     `plain` (the same task's model, never adapted) set to compute
                                   what the LoRA-adapted `model` computes
    merged_bundle(run, base)       a PEFT run's encoder as a checkpoint bundle for
                                   convert_checkpoint: the base with the run's trained variables,
                                   LoRA folded, adapters under adapter-bert's names

A folded model runs at the speed of the base (no extra matmuls) and loads anywhere the base
does. Adapters cannot fold (a GELU sits between their matrices): a model with adapters is
served with them in the graph, and written only to formats that can hold their variables.
"""

from __future__ import annotations

import os

import keras
import numpy as np
import tensorflow as tf

from official.checkpoints import converter, tf1, training
from official.checkpoints.errors import CheckpointError
from official.checkpoints.training import CONFIG_FILE
from official.configs import BertConfig
from official.modeling.encoder import build_encoder
from official.peft import artifact
from official.peft.settings import LORA, PeftSettings

_A, _B = "/lora_A", "/lora_B"


def fold_lora(weights: tf1.Weights, settings: PeftSettings) -> tf1.Weights:
    """`weights` with each `<matrix>/lora_A`, `<matrix>/lora_B` pair folded into
    `<matrix>/kernel` (as float32) and dropped; a LoRA-free dict comes back unchanged."""
    folded = {name: value for name, value in weights.items()
              if not name.endswith((_A, _B))}
    for name in weights:
        if name.endswith(_A):
            matrix = name.removesuffix(_A)
            update = weights[name].astype(np.float32) @ weights[matrix + _B].astype(np.float32)
            folded[matrix + "/kernel"] = (weights[matrix + "/kernel"].astype(np.float32)
                                          + settings.lora_scale * update)
    return folded


def merged_model(model: keras.Model, plain: keras.Model, settings: PeftSettings) -> keras.Model:
    """Sets `plain` (built by the same task's `build_model`, without LoRA) to the LoRA-adapted
    `model`'s function: the encoder with LoRA folded in, and every head copied; returns it.

    Raises:
      ValueError: `settings` is not LoRA (adapters cannot fold).
    """
    if settings.method != LORA:
        raise ValueError(f"{settings.describe()} cannot be folded into the base's matrices")
    tf1.assign(plain, fold_lora(tf1.weights_of(model), settings), source="the LoRA-adapted model")
    for name, head in model.checkpoint_items["heads"].items():
        plain.checkpoint_items["heads"][name].set_weights(head.get_weights())
    return plain


def merged_bundle(run: str, base: str | None = None) -> converter.Bundle:
    """The encoder of the parameter-efficient run at `run` (its best/ when kept) on `base` (else
    the base its record names) as original-named weights: LoRA folded into its matrices;
    adapters kept as adapter-bert's variables; the trained LayerNorms and pooler in place. The
    config is the run's, the vocab the base's when one is beside it. The task head is not part
    of it (no checkpoint format has a place for it): export_saved_model serves the run whole.

    Raises:
      CheckpointError: `run` is no PEFT run, or `base` is not its base.
    """
    prefix, record = artifact.find_run(run)
    if record is None:
        raise CheckpointError(f"{run} is not a parameter-efficient run (no "
                              f"{artifact.PEFT_FILE} beside {prefix})")
    config = BertConfig.from_json_file(os.path.join(os.path.dirname(prefix), CONFIG_FILE))
    encoder = build_encoder(config)
    artifact.load_base(encoder, record, base, run)
    roots = training.model_roots(encoder)
    training.assert_matched(tf.train.Checkpoint(**roots).read(prefix).expect_partial(), prefix)
    weights = tf1.weights_of(encoder)
    if record.settings.method == LORA:
        weights = fold_lora(weights, record.settings)
    base = base or record.base_checkpoint
    vocab = os.path.join(base if os.path.isdir(base) else os.path.dirname(base), "vocab.txt")
    return converter.Bundle(config, weights, vocab if os.path.isfile(vocab) else None)
