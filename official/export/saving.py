"""Writing SavedModels as TF Serving expects them: `export_dir/<version>/`, complete or absent.

TF Serving watches `export_dir` and serves the highest numeric subdirectory. The version is
the export's Unix time in seconds (one more than the newest if that is taken), and the
SavedModel is written under a hidden temporary name and renamed into place, so the server never
loads a half-written version. `ServingModule` and `TaskExport` are the bases of the exported
objects (what every export holds).
"""

from __future__ import annotations

import os
import shutil
import time
import uuid

import keras
import tensorflow as tf

from official.atomic_files import disk_full
from official.text.tokenizer import FullTokenizer


class ServingModule(tf.Module):
    """The base of exported objects that hold a Keras model: lists its variables as plain
    `tf.Variable`s, `variables` and `trainable_variables`, and holds the model itself where
    the SavedModel does not look (`hold`).

    Two loaders need those lists: TF Serving and saved_model_cli's `run` load a SavedModel the
    TF1 way, which finds no value for a variable saved only inside a Keras 3 model (the serving
    graph fails with "Could not find variable ..."); and TF Hub's `hub.KerasLayer` reads these
    two attributes to fine-tune. (tf.Module's properties of these names are not saved, so the
    class shadows them.) The lists are then the only place of the weights: a Keras model among
    the module's tracked attributes would save each weight a second time, under its Keras
    objects (a Keras variable is saved as a variable of its own, beside the tf.Variable it wraps).
    """

    variables = None
    trainable_variables = None

    def track_variables(self, *models: keras.Model) -> None:
        """Lists the variables of `models`, each once (models may share variables)."""
        self.variables = _unique([v.value for model in models for v in model.variables])
        self.trainable_variables = _unique([v.value for model in models
                                            for v in model.trainable_variables])

    def hold(self, **objects) -> None:
        """Sets attributes the SavedModel's object graph does not follow (the Keras models the
        serving functions call; their weights are saved through `variables`)."""
        for name, value in objects.items():
            object.__setattr__(self, name, value)


def _unique(variables: list[tf.Variable]) -> list[tf.Variable]:
    return list({id(v): v for v in variables}.values())


class TaskExport(ServingModule):
    """The base of the fine-tuned models' exports (classifier, NER, SQuAD): the model, its
    variables listed, its tokenizer with the vocab as an asset (copied into the SavedModel), and
    the [CLS] and [SEP] ids that packing needs."""

    def __init__(self, model: keras.Model, tokenizer: FullTokenizer):
        super().__init__()
        self.hold(model=model)
        self.track_variables(model)
        self._tokenizer = tokenizer
        self._cls_id, self._sep_id = tokenizer.convert_tokens_to_ids(["[CLS]", "[SEP]"])
        self.vocab_file = tf.saved_model.Asset(tokenizer.vocab_file)


def next_version(export_dir: str) -> int:
    """Now's Unix time, or one more than the newest version in `export_dir` if that is later."""
    versions = [int(name) for name in tf.io.gfile.listdir(export_dir) if name.isdigit()] \
        if tf.io.gfile.isdir(export_dir) else []
    return max([int(time.time())] + [v + 1 for v in versions])


def save(obj: tf.Module, export_dir: str, signatures: dict | None = None) -> str:
    """Saves `obj` (with `signatures`) as the next version in `export_dir`; returns its path.

    `signatures`: {name: a `tf.function` with its input_signature}, traced by the save itself. A
    concrete function traced before the save would be saved beside the save's own trace of the
    same graph, every function twice (the encoder's are concrete: they only call the functions
    its module traced for TF Hub, official/export/encoder.py).
    The vocab and other `tf.saved_model.Asset`s of `obj` are copied into the version's assets/.
    Nothing is left of a failed save; a full disk is raised as one OSError naming `export_dir`.
    """
    os.makedirs(export_dir, exist_ok=True)
    staging = os.path.join(export_dir, f".tmp-{uuid.uuid4().hex}")
    try:
        tf.saved_model.save(obj, staging, signatures=signatures)
        while True:
            path = os.path.join(export_dir, str(next_version(export_dir)))
            try:
                os.rename(staging, path)  # fails if another export took the name meanwhile
                return path
            except OSError:
                if not os.path.exists(path):
                    raise
    except Exception as e:
        full = disk_full(e, export_dir)
        if full is None:
            raise
        raise full from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
