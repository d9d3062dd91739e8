"""The config and weights of any checkpoint, read one way.

    beside(path, name)         a file beside a checkpoint (bert_config.json, vocab.txt)
    config_beside(path)        the bert_config.json beside it, read
    resolve_checkpoint(path)   the checkpoint prefix of a prefix or a folder of checkpoints
    folder_format(path)        "hf" or "keras_hub" for a folder holding its own config, else None
    read_weights(path, config) an original TF1, a project TF2 or a training checkpoint's weights
    config_of(path, config)    THE config rule: `config` when given (a BertConfig or its file),
                               else a folder format's own, else the bert_config.json beside the
                               checkpoint; with where it was read
    read(path, config)         (config, weights) of any checkpoint, the config by `config_of`
    weights_for(path, config)  its weights for a model of `config`
    load_init_checkpoint(path, model)
                               those weights assigned to the model (`--init_checkpoint`)

A checkpoint here is what `--init_checkpoint` takes: an original TF1 release or checkpoint, a
project TF2 checkpoint, a training output_dir (its newest checkpoint) or prefix, a Hugging Face
BERT folder or a keras-hub preset (FOLDER_FORMATS: converter.FORMATS takes these from here).
The Python API (official/api.py), fine-tuned outputs (official/checkpoints/finetuned.py), the
export and the training jobs all read through `config_of` and `read`, so "which config goes with
these weights" has one answer.

A folder's own config must agree with a config given for it: the same shapes with another
activation (Hugging Face's erf GELU against a config saying the original's tanh "gelu", say)
would load and silently compute something else. Dropout rates and the initialiser's range may
differ (a fine-tuning may change them).

No TensorFlow is imported at the top: the package's face (official/checkpoints/__init__.py)
names these, and an entry point's checks use `beside` before TensorFlow loads. The readers are
imported where they are called. converter stands above this module and reads through it (its
checkpoints through the prefix readers, its folder formats through FOLDER_FORMATS).
"""

from __future__ import annotations

import dataclasses
import importlib
import os
from typing import TYPE_CHECKING

from official.checkpoints.errors import CheckpointError, unreadable
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


@dataclasses.dataclass(frozen=True)
class FolderFormat:
    """A format that is a folder holding its own config.

    Attributes:
      marker: the file that makes a folder one (what `--init_checkpoint` recognises).
      title: the format's name in messages.
      reader: the module whose `read(folder)` gives (config, weights, its vocab file or None),
        imported when a folder is read (keras-hub takes seconds to import).
    """
    marker: str
    title: str
    reader: str

    def read(self, folder: str) -> tuple[BertConfig, Weights, str | None]:
        return importlib.import_module(self.reader).read(folder)


# The folder formats by their FORMAT_NAMES name. hf's marker is official/checkpoints/hf.py's
# WEIGHTS_FILE; metadata.json is what keras-hub's save_to_preset writes first.
FOLDER_FORMATS = {
    "hf": FolderFormat("model.safetensors", "Hugging Face", "official.checkpoints.hf"),
    "keras_hub": FolderFormat("metadata.json", "keras-hub", "official.checkpoints.keras_hub"),
}


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
            folders = " or ".join(f"{f.title} {f.marker}" for f in FOLDER_FORMATS.values())
            raise CheckpointError(
                f"{path}: no checkpoint there (a folder without a 'checkpoint' file, "
                f"bert_model.ckpt.index, {folders})")
        path = os.path.join(path, "bert_model.ckpt")
    if not os.path.exists(path + ".index"):
        raise CheckpointError(f"{path}: no checkpoint there (no {os.path.basename(path)}.index)")
    return path


def folder_format(path: str) -> str | None:
    """The format of a folder holding its own config ("hf" for a Hugging Face BERT folder,
    "keras_hub" for a keras-hub preset: FOLDER_FORMATS), else None."""
    if not os.path.isdir(path):
        return None
    return next((name for name, f in FOLDER_FORMATS.items()
                 if os.path.isfile(os.path.join(path, f.marker))), None)


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
            config_path, config = (config_beside(prefix) if config is None
                                   else ("the config given", config))
            return training.read(prefix, config, config_path)
        return tf2.read(prefix) if tf2.is_tf2_checkpoint(prefix) else tf1.read(prefix)
    except CheckpointError:
        raise
    except (tf.errors.OpError, ValueError) as e:
        raise unreadable(prefix, e) from None


def _read_folder(path: str, kind: str) -> tuple[BertConfig, Weights]:
    config, weights, _ = FOLDER_FORMATS[kind].read(path)
    return config, weights


def config_of(path: str | None, config: BertConfig | str | None = None,
              remedy: str = "pass --bert_config_file") -> tuple[str | None, BertConfig]:
    """(where it was read, config) of the weights at `path`: `config` when given (a BertConfig,
    where None; or the path of its bert_config.json), else a folder format's own (the folder),
    else the bert_config.json beside the checkpoint (`remedy`: what the caller takes instead,
    ending the error).

    Raises:
      CheckpointError: no config beside a checkpoint.
      ConfigError: a config file that is not one.
    """
    if isinstance(config, str):
        return config, BertConfig.from_json_file(config)
    if config is not None:
        return None, config
    kind = folder_format(path)
    if kind is not None:
        return path, _read_folder(path, kind)[0]
    return config_beside(path, remedy)


def read(path: str, config: BertConfig | str | None = None,
         remedy: str = "pass --bert_config_file") -> tuple[BertConfig, Weights]:
    """(config, weights) of the checkpoint at `path`, the config by `config_of`. A checkpoint
    that is not there is named before a config that is not.

    Raises:
      CheckpointError: no readable checkpoint at `path`; no config for it; a folder whose own
        config differs from the one given.
    """
    kind = folder_format(path)
    if kind is None:
        resolve_checkpoint(path)
        # A training checkpoint is read through its own config when one is beside it, so that a
        # config given that does not fit is named variable by variable where the weights are
        # assigned (tf1.assign); through the config given when none is.
        own = beside(path, CONFIG_FILE)
        config = config_of(path, config, remedy)[1]
        return config, read_weights(path, None if own else config)
    own, weights = _read_folder(path, kind)
    if config is None:
        return own, weights
    config = config_of(path, config)[1]
    differ = [d for d in own.differences(config) if not d.startswith(_TRAINING_ONLY_FIELDS)]
    if differ:
        raise CheckpointError(f"{path}: its config differs from the model's in "
                              f"{', '.join(differ)}")
    return config, weights


def weights_for(path: str, config: BertConfig) -> Weights:
    """The weights at `path` (any checkpoint `read` takes) for a model of `config`.

    Raises:
      CheckpointError: no readable checkpoint at `path`, or a folder config that differs.
    """
    return read(path, config)[1]


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
