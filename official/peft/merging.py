"""A run's method folded into the base's matrices: a parameter-efficient run as an ordinary model.

    merged_model(model, plain, settings)
                        `plain` (the same task's model, never adapted) set to compute what the
                        adapted `model` computes, by the method's `fold` (official/peft/method.py)
    merged_bundle(run, base)
                        a PEFT run's encoder as a checkpoint bundle for convert_checkpoint: the
                        base with the run's trained variables, folded when the method folds
                        (LoRA: W + (alpha / r) A B; BitFit: the biases as they are); else its
                        inserted variables under the names their layers give them, and the
                        bundle says what was inserted (`converter.Inserted`)
    adapted_bundle(config, weights, vocab_file, settings)
                        the same of any adapted encoder's weights (official/api.py's
                        save_checkpoint)

A folded model runs at the speed of the base (no extra matmuls) and loads anywhere the base
does. A method that cannot fold (adapters: a GELU sits between their matrices) is served with
its layers in the graph, and written only to formats that can hold their variables.
"""

from __future__ import annotations

import keras
import tensorflow as tf

from official import checkpoints
from official.checkpoints import converter, tf1, training
from official.checkpoints.errors import CheckpointError
from official.configs import BertConfig
from official.modeling.encoder import build_encoder
from official.peft import artifact, methods
from official.peft.method import PeftSettings


def merged_model(model: keras.Model, plain: keras.Model, settings: PeftSettings) -> keras.Model:
    """Sets `plain` (built by the same task's `build_model`, without the method) to the adapted
    `model`'s function: the encoder folded, and every head copied; returns it.

    Raises:
      ValueError: the method does not fold (adapters).
    """
    fold = methods.method_of(settings).fold
    if fold is None:
        raise ValueError(f"{settings.describe()} cannot be folded into the base's matrices")
    tf1.assign(plain, fold(tf1.weights_of(model), settings), source="the adapted model")
    for name, head in model.checkpoint_items["heads"].items():
        plain.checkpoint_items["heads"][name].set_weights(head.get_weights())
    return plain


def merged_bundle(run: str, base: str | None = None) -> converter.Bundle:
    """The encoder of the parameter-efficient run at `run` (its best/ when kept) on `base` (else
    the base its record names) as original-named weights: folded when its method folds, else
    the method's variables kept (and the bundle's `inserted` says so); the trained LayerNorms,
    biases and pooler in place. The
    config is the run's, the vocab the base's when one is beside it. The task head is not part
    of it (no checkpoint format has a place for it): export_saved_model serves the run whole.

    Raises:
      CheckpointError: `run` is no PEFT run, or `base` is not its base.
    """
    checkpoint, record = artifact.find_run(run)
    if record is None:
        raise CheckpointError(f"{run} is not a parameter-efficient run (no "
                              f"{artifact.PEFT_FILE} beside {checkpoint.prefix})")
    encoder = build_encoder(checkpoint.config)
    artifact.load_base(encoder, record, base, run)
    roots = training.model_roots(encoder)
    training.assert_matched(tf.train.Checkpoint(**roots).read(checkpoint.prefix).expect_partial(),
                            checkpoint.prefix)
    vocab = checkpoints.beside(base or record.base_checkpoint, checkpoints.VOCAB_FILE)
    return adapted_bundle(checkpoint.config, tf1.weights_of(encoder), vocab, record.settings)


def adapted_bundle(config: BertConfig, weights: tf1.Weights, vocab_file: str | None,
                   settings: PeftSettings) -> converter.Bundle:
    """The original-named `weights` of a model adapted by `settings` as a checkpoint bundle:
    folded into plain BERT weights when the method folds; else with the method's variables under
    their own names, and `inserted` saying which method's they are (the formats that have no
    place for them refuse the bundle: `converter.check_holds`)."""
    method = methods.method_of(settings)
    if method.fold is not None:
        return converter.Bundle(config, method.fold(weights, settings), vocab_file)
    return converter.Bundle(config, weights, vocab_file, converter.Inserted(
        method.name, lambda fresh: method.insert(fresh, settings)))
