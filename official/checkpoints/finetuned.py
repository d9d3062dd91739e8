"""A training output, resolved once: which checkpoint, its config and vocab, the records beside it;
and its weights restored into the model that made them.

    BEST_DIR               output_dir/best: the best checkpoint by the task's metric
    has_checkpoint(dir)    a checkpoint in the folder or in its best/
    resolve(path) -> Finetuned
                           an output_dir (its best/ when kept, else its newest checkpoint), its
                           best/, or a checkpoint prefix in one
        .prefix .directory .config_file .config .vocab_file
        .record(name, cls) a JSON record beside the checkpoint (official/records.py): what the
                           run's model reads besides its weights (long_documents.json,
                           sentence_encoder.json, peft_config.json, ...)
        .is_partial        a parameter-efficient run's checkpoint: only what it trained
        .restore(model)    the encoder and heads (or the trained part) into the fresh model
    resolve_source(path) -> Source
                           any --init_checkpoint resolved the same way: a training output (best/
                           when kept), any checkpoint with the bert_config.json beside it, or a
                           folder with its own config (Hugging Face, keras-hub), the config by
                           the one rule of official/checkpoints/reading.py
    check_record(dir, name, text)
                           refuses a rerun whose record differs from the one the checkpoints in
                           `dir` were made with

A training output_dir holds `model.ckpt-N` checkpoints with a bert_config.json beside them, and
best/ the same for the best evaluation (official/training/). Everything that reads a fine-tuning's
output (export, distillation's teacher, merging, feature extraction, static vectors) starts here,
so "which checkpoint, which config" has one answer.
"""

from __future__ import annotations

import dataclasses
import functools
import os
from typing import TypeVar

import keras
import tensorflow as tf

from official import checkpoints, records
from official.checkpoints import training
from official.checkpoints.errors import CheckpointError
from official.configs import BertConfig

BEST_DIR = "best"
R = TypeVar("R")


def has_checkpoint(output_dir: str) -> bool:
    """True when output_dir (or its best/) holds a checkpoint a job would resume or restore."""
    return any(os.path.isdir(d) and tf.train.latest_checkpoint(d)
               for d in (output_dir, os.path.join(output_dir, BEST_DIR)))


@dataclasses.dataclass(frozen=True)
class Finetuned:
    """One checkpoint of a training output, with what lies beside it.

    Attributes:
      source: the path as given (named in messages).
      prefix: the checkpoint prefix (output_dir/best/model.ckpt-N when best/ was kept).
    """
    source: str
    prefix: str

    @property
    def directory(self) -> str:
        return os.path.dirname(self.prefix)

    @functools.cached_property
    def config_file(self) -> str:
        """The bert_config.json beside the checkpoint.

        Raises:
          CheckpointError: there is none.
        """
        return checkpoints.config_beside(self.prefix)[0]

    @functools.cached_property
    def config(self) -> BertConfig:
        return BertConfig.from_json_file(self.config_file)

    @property
    def vocab_file(self) -> str | None:
        """The vocab.txt beside it, None when there is none (a training output_dir has none; a
        converted checkpoint does)."""
        return checkpoints.beside(self.prefix, checkpoints.VOCAB_FILE)

    @property
    def is_partial(self) -> bool:
        """A parameter-efficient run's checkpoint: the trained variables alone, read on its base
        (official/peft)."""
        return training.is_peft_checkpoint(self.prefix)

    def record(self, name: str, cls: type[R]) -> R | None:
        """The record `name` beside the checkpoint as a `cls` (official/records.py), None when
        the run wrote none.

        Raises:
          ValueError: the file is not such a record (naming the file and the field).
        """
        return records.read(os.path.join(self.directory, name), cls)

    def restore(self, model: keras.Model) -> None:
        """Reads the checkpoint's encoder and heads into `model`, built for it by the task (a
        parameter-efficient run's model must already hold its base and method: official/peft).

        Raises:
          CheckpointError: not a training checkpoint, or one without this model's heads, or of
            other shapes (another num_labels, another size).
        """
        if not (training.is_training_checkpoint(self.prefix) or self.is_partial):
            raise CheckpointError(
                f"{self.prefix} is not a fine-tuning checkpoint (no encoder/ and heads/ roots): "
                "give the output_dir of a fine-tuning run (run_classifier, run_squad, run_ner, "
                "run_sentence_embedding)")
        roots = training.model_roots(model)
        training.check_holds(self.prefix, roots)
        try:
            tf.train.Checkpoint(**roots).read(self.prefix).expect_partial() \
                .assert_existing_objects_matched()
        except (AssertionError, ValueError, tf.errors.OpError) as e:
            heads = ", ".join(f"heads/{name}" for name in roots["heads"]) or "no heads"
            raise CheckpointError(f"{self.prefix} does not hold this model's encoder and "
                                  f"{heads} ({str(e).splitlines()[0]})") from None


def resolve(path: str) -> Finetuned:
    """The checkpoint of a training output at `path`: its best/ when there is one, else its
    newest checkpoint (or `path` itself, a prefix).

    Raises:
      CheckpointError: no checkpoint at `path`.
    """
    best = os.path.join(path, BEST_DIR)
    found = best if os.path.isdir(best) and tf.train.latest_checkpoint(best) else path
    return Finetuned(path, checkpoints.resolve_checkpoint(found))


@dataclasses.dataclass(frozen=True)
class Source:
    """Weights to read and their config, resolved once.

    Attributes:
      path: as given (named in messages).
      checkpoint: the checkpoint (best/ when kept); None for a folder format, read whole.
      folder_config: a folder format's own config (None for a checkpoint, whose config is the
        bert_config.json beside it, read only when asked for: a run given --bert_config_file
        needs none beside it).
    """
    path: str
    checkpoint: Finetuned | None
    folder_config: BertConfig | None = None

    @property
    def config_file(self) -> str:
        """The folder, or the bert_config.json beside the checkpoint (CheckpointError: none)."""
        return self.path if self.checkpoint is None else self.checkpoint.config_file

    @property
    def config(self) -> BertConfig:
        return self.folder_config if self.checkpoint is None else self.checkpoint.config

    @property
    def weights(self) -> str:
        """What `checkpoints.load_init_checkpoint` (and `weights_for`) read: the checkpoint's
        prefix, or the folder."""
        return self.checkpoint.prefix if self.checkpoint else self.path


def resolve_source(path: str) -> Source:
    """The weights at `path` and their config: a folder with its own config (Hugging Face,
    sentence-transformers, keras-hub), else a training output (best/ when kept) or checkpoint
    with the bert_config.json beside it.

    Raises:
      CheckpointError: no checkpoint there (no config beside it: when `config` is read).
    """
    if checkpoints.folder_format(path) is not None:
        return Source(path, None, checkpoints.config_of(path)[1])
    return Source(path, resolve(path))


def check_record(output_dir: str, name: str, text: str | None, flags: str = "these flags") -> None:
    """Raises ValueError when output_dir's checkpoints were made with another record `name`
    than `text` (None: this run writes none), naming the file and both settings.

    A record says what the checkpoints' model is (how it reads documents, how it pools, which
    teacher taught it): resuming them under other settings would train another model on top.
    """
    if not has_checkpoint(output_dir):
        return
    path = os.path.join(output_dir, name)
    written = None
    if os.path.isfile(path):
        with open(path, encoding="utf-8") as f:
            written = f.read()
    if written != text:
        def said(value):
            return " ".join(value.split()) if value else "nothing (the default)"
        raise ValueError(f"{path}: the checkpoints in {output_dir} were made with "
                         f"{said(written)}; {flags} say {said(text)}: give the same flags, or "
                         "another --output_dir")
