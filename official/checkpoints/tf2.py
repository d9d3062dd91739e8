"""This project's checkpoint of model weights: an object-based TF2 `tf.train.Checkpoint`.

The checkpoint's root holds one dict, `bert_weights`, keyed by the original variable names (see
tf1.py), so it is independent of how our Keras layers happen to be nested and the same name table
serves every format. It is what `convert_checkpoint` writes and every entry point's
`--init_checkpoint` accepts (as it accepts the original's TF1 checkpoints); one that keeps the
unfolded variables of a parameter-efficient run's method (convert_checkpoint --peft_checkpoint)
is refused as an `--init_checkpoint` (no model there has the method's layers).
"""

from __future__ import annotations

import re

import keras
import tensorflow as tf

from official.checkpoints import tf1

ROOT = "bert_weights"
_SUFFIX = "/.ATTRIBUTES/VARIABLE_VALUE"


def write(weights: tf1.Weights, prefix: str) -> str:
    """Writes original-named weights; returns the checkpoint path (`prefix`)."""
    variables = {name: tf.Variable(value, name=name) for name, value in weights.items()}
    return tf.train.Checkpoint(**{ROOT: variables}).write(prefix)


def save(model: keras.Model, prefix: str) -> str:
    """Writes the encoder (and pretraining heads, if the model has them) of `model`."""
    return write(tf1.weights_of(model), prefix)


def _unescape(name: str) -> str:
    # tf.train.Checkpoint escapes "/" as ".S" and "." as ".." in object names.
    return re.sub(r"\.(S|\.)", lambda m: "/" if m.group(1) == "S" else ".", name)


def is_tf2_checkpoint(path: str) -> bool:
    """True if the checkpoint at `path` was written by `write` (not a name-based TF1 one)."""
    return any(name.startswith(ROOT + "/") for name, _ in tf.train.list_variables(path))


def read(path: str) -> tf1.Weights:
    """Reads a checkpoint written by `write` as {original name: numpy array}."""
    reader = tf.train.load_checkpoint(path)
    weights = {}
    for key in reader.get_variable_to_shape_map():
        if key.startswith(ROOT + "/") and key.endswith(_SUFFIX):
            weights[_unescape(key[len(ROOT) + 1:-len(_SUFFIX)])] = reader.get_tensor(key)
    return weights
