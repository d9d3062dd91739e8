"""Checkpoints: one module per format, all meeting in the original TF1 variable names.

    tf1        the original names <-> our Keras model; name-based checkpoints (original format)
    tf2        this project's object-based checkpoint of those names
    training   the training loop's checkpoints (model, optimizer, step), read as those names
    hf         Hugging Face BERT directories (config.json, model.safetensors, vocab.txt)
    keras_hub  keras-hub BertBackbone presets
    converter  any of them -> any other, through a model that validates every variable

Entry points call `load_init_checkpoint` for their `--init_checkpoint` flag.
"""

import os

import keras
import tensorflow as tf

from official.checkpoints import tf1, tf2, training
from official.checkpoints.errors import CheckpointError, CheckpointMismatchError

__all__ = ["CheckpointError", "CheckpointMismatchError", "load_init_checkpoint",
           "read_weights", "resolve_checkpoint"]


def resolve_checkpoint(path: str) -> str:
    """The checkpoint prefix for `path`: a prefix itself, or a directory holding one.

    In a directory, the newest checkpoint named by its `checkpoint` file wins, else
    `bert_model.ckpt` (the name of the original's releases and of `convert_checkpoint` output).
    """
    if os.path.isdir(path):
        latest = tf.train.latest_checkpoint(path)
        if latest:
            return latest
        path = os.path.join(path, "bert_model.ckpt")
    if not os.path.exists(path + ".index"):
        raise CheckpointError(f"{path}: no checkpoint there (no {os.path.basename(path)}.index)")
    return path


def read_weights(path: str) -> tf1.Weights:
    """Reads an original TF1 checkpoint, a project TF2 one or a training checkpoint as
    {original name: numpy array}."""
    prefix = resolve_checkpoint(path)
    try:
        if training.is_training_checkpoint(prefix):
            return training.read(prefix)
        return tf2.read(prefix) if tf2.is_tf2_checkpoint(prefix) else tf1.read(prefix)
    except CheckpointError:
        raise
    except (tf.errors.OpError, ValueError) as e:
        raise CheckpointError(f"{prefix}: unreadable checkpoint ({str(e).splitlines()[0]})") from None


def load_init_checkpoint(path: str, model: keras.Model) -> None:
    """Loads `--init_checkpoint` weights into `model` (an encoder or a model with `.encoder`).

    Raises:
      CheckpointError: no readable checkpoint at `path`.
      CheckpointMismatchError: its variables do not fit the model (names and shapes listed).
    """
    tf1.assign(model, read_weights(path), source=path)
