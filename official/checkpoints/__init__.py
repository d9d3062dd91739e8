"""Checkpoints: one module per format, all meeting in the original TF1 variable names.

    tf1        the original names <-> our Keras model; name-based checkpoints (original format)
    tf2        this project's object-based checkpoint of those names
    training   the training loop's checkpoints (model, optimizer, step), read as those names
    hf         Hugging Face BERT directories (config.json, model.safetensors, vocab.txt)
    keras_hub  keras-hub BertBackbone presets
    converter  any of them -> any other, through a model that validates every variable

Entry points call `load_init_checkpoint` for their `--init_checkpoint` flag, which takes a
checkpoint or, as convert_checkpoint's --input does, a Hugging Face folder or keras-hub preset:
the formats of `converter.FORMATS` that have a `folder_marker`.

This package's own module imports nothing heavy at the top (the readers it calls are imported
where they are called): its light modules (`errors`, `sentence_transformers`, and these files'
`beside`) load without TensorFlow, in an entry point's checks before it loads it.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from official.checkpoints.errors import CheckpointError, CheckpointMismatchError, unreadable
from official.configs import BertConfig

if TYPE_CHECKING:
    import keras

    from official.checkpoints.tf1 import Weights

# Config fields that shape training, not what the weights compute: a fine-tuning may change them.
_TRAINING_ONLY_FIELDS = ("hidden_dropout_prob ", "attention_probs_dropout_prob ",
                         "initializer_range ")

CONFIG_FILE, VOCAB_FILE = "bert_config.json", "vocab.txt"  # beside a checkpoint, as released
# The formats `converter.FORMATS` reads and writes, by name: here so that flags name them before
# TensorFlow loads (tests/test_startup.py checks both say the same).
FORMAT_NAMES = ("tf1", "tf2", "hf", "keras_hub")

__all__ = ["CONFIG_FILE", "CheckpointError", "CheckpointMismatchError", "FORMAT_NAMES",
           "VOCAB_FILE", "beside",
           "config_beside", "folder_format", "load_init_checkpoint", "read_config_and_weights",
           "read_weights", "resolve_checkpoint", "weights_for"]


def beside(path: str, name: str) -> str | None:
    """The file `name` in the folder of the checkpoint `path` (a prefix, or a folder holding
    checkpoints), None when there is none: where the original's releases, convert_checkpoint and
    the training loop keep bert_config.json and vocab.txt."""
    folder = path if os.path.isdir(path) else os.path.dirname(path)
    candidate = os.path.join(folder, name)
    return candidate if os.path.isfile(candidate) else None


def config_beside(path: str, remedy: str = "pass --bert_config_file") -> tuple[str, BertConfig]:
    """(file, config) of the bert_config.json beside the checkpoint `path`.

    `remedy` ends the error: what the caller takes instead (a flag on the command line, an
    argument from Python).

    Raises:
      CheckpointError: no such file (naming the checkpoint and the folder looked in).
      ConfigError: the file is not a config.
    """
    config_file = beside(path, CONFIG_FILE)
    if config_file is None:
        folder = path if os.path.isdir(path) else os.path.dirname(path)
        raise CheckpointError(f"{path}: no {CONFIG_FILE} beside the checkpoint (in "
                              f"{folder or '.'}); {remedy}")
    return config_file, BertConfig.from_json_file(config_file)


def resolve_checkpoint(path: str) -> str:
    """The checkpoint prefix for `path`: a prefix itself, or a directory holding one.

    In a directory, the newest checkpoint named by its `checkpoint` file wins, else
    `bert_model.ckpt` (the name of the original's releases and of `convert_checkpoint` output).
    """
    import tensorflow as tf

    if os.path.isdir(path):
        latest = tf.train.latest_checkpoint(path)
        if latest:
            return latest
        if not os.path.exists(os.path.join(path, "bert_model.ckpt.index")):
            folders = " or ".join(f"{f.title} {f.folder_marker}"
                                  for f in _folder_formats().values())
            raise CheckpointError(
                f"{path}: no checkpoint there (a folder without a 'checkpoint' file, "
                f"bert_model.ckpt.index, {folders})")
        path = os.path.join(path, "bert_model.ckpt")
    if not os.path.exists(path + ".index"):
        raise CheckpointError(f"{path}: no checkpoint there (no {os.path.basename(path)}.index)")
    return path


def _folder_formats() -> dict:
    """converter.FORMATS' folder formats (a folder with its own config): name -> Format."""
    from official.checkpoints import converter  # converter imports this package
    return {name: f for name, f in converter.FORMATS.items() if f.folder_marker}


def folder_format(path: str) -> str | None:
    """The format of a folder holding its own config ("hf" for a Hugging Face BERT folder,
    "keras_hub" for a keras-hub preset: converter.FORMATS' folder formats), else None."""
    if not os.path.isdir(path):
        return None
    return next((name for name, f in _folder_formats().items()
                 if os.path.isfile(os.path.join(path, f.folder_marker))), None)


def read_config_and_weights(path: str) -> tuple[BertConfig | None, Weights]:
    """A Hugging Face folder's or keras-hub preset's (config, weights); (None, weights) for a
    checkpoint, whose config is a bert_config.json of its own."""
    kind = folder_format(path)
    if kind is None:
        return None, read_weights(path)
    bundle = _folder_formats()[kind].read(path, None, None)
    return bundle.config, bundle.weights


def read_weights(path: str, config: BertConfig | None = None) -> Weights:
    """Reads an original TF1 checkpoint, a project TF2 one or a training checkpoint as
    {original name: numpy array}. A training checkpoint is read through a model of `config`
    (None: the bert_config.json beside it)."""
    import tensorflow as tf

    from official.checkpoints import tf1, tf2, training

    prefix = resolve_checkpoint(path)
    if training.is_peft_checkpoint(prefix):
        raise CheckpointError(
            f"{prefix}: a parameter-efficient run's checkpoint, which holds only what the run "
            "trained: export it (export_saved_model --init_checkpoint=<the run>) or merge it "
            "with its base (convert_checkpoint --peft_checkpoint=<the run>)")
    try:
        if training.is_training_checkpoint(prefix):
            return training.read(prefix, config)
        return tf2.read(prefix) if tf2.is_tf2_checkpoint(prefix) else tf1.read(prefix)
    except CheckpointError:
        raise
    except (tf.errors.OpError, ValueError) as e:
        raise unreadable(prefix, e) from None


def weights_for(path: str, config: BertConfig) -> Weights:
    """The weights at `path` (a checkpoint, TF1 or TF2, prefix or folder; a Hugging Face BERT
    folder; a keras-hub preset) for a model of `config`.

    A folder that carries its own config must agree with `config`: the same shapes with another
    activation (Hugging Face's erf GELU against a config saying the original's tanh "gelu", say)
    would load and silently compute something else. Dropout rates and the initialiser's range
    may differ.

    Raises:
      CheckpointError: no readable checkpoint at `path`, or a folder config that differs.
    """
    own_config, weights = read_config_and_weights(path)
    differ = [d for d in (own_config.differences(config) if own_config else [])
              if not d.startswith(_TRAINING_ONLY_FIELDS)]
    if differ:
        raise CheckpointError(f"{path}: its config differs from the model's in "
                              f"{', '.join(differ)}")
    return weights


def load_init_checkpoint(path: str, model: keras.Model,
                         leave_out: tuple[str, ...] = ()) -> list[keras.Variable]:
    """Loads `--init_checkpoint` weights (see `weights_for`) into `model` (an encoder or a model
    with `.encoder`); returns the variables of the pretraining heads it lacks (`tf1.assign`),
    which keep their initialisation. Weights whose original names start with one of
    `leave_out` (a head's prefix) are not read: that head starts fresh too.

    Raises:
      CheckpointError: no readable checkpoint at `path`, or a folder config that differs.
      CheckpointMismatchError: its variables do not fit the model (names and shapes listed).
    """
    from official.checkpoints import tf1
    from official.modeling.encoder import encoder_of

    return tf1.assign(model, weights_for(path, encoder_of(model).config), source=path,
                      leave_out=leave_out)
