"""A training job's output_dir: what it must agree with before work starts, and what a killed run
left there.

    check_config(output_dir, config, config_file)   refuses a rerun with another architecture
    has_checkpoint(output_dir)                       a checkpoint there, or in its best/
    finetuned_checkpoint(path)                       its best/ checkpoint, else its newest
    claim(output_dir, config, files)                 leftovers removed, bert_config.json (and an
                                                     adaptation method's record) written
    remove_interrupted_writes(output_dir)            what a SIGKILL mid-write leaves behind

A rerun of the same command into an output_dir resumes from its checkpoints, which were made for
the bert_config.json written beside them. A rerun with another config must not overwrite that file
(the checkpoints would then load nowhere) and must not get as far as a shape error in the restore:
it is refused up front with the fields that differ.

What a SIGKILL leaves: TensorFlow's checkpoint saver writes `model.ckpt-N_temp/` and merges it
into `model.ckpt-N.*` (a kill in between leaves the folder: ~1.3 GB at BERT-Base with Adam
slots), and its state file is written as `checkpoint.tmp<hex>` then renamed; best/ is swapped in
through `best.tmp/` and `best.old/` (official/training/finetuning.py); every other writer writes
a `*.tmp` file and renames it (official/atomic_files.py). A parameter-efficient run's record
(`peft_config.json`) is written before its first checkpoint: a run stopped before that leaves one
with nothing beside it, which the next claim removes unless that run writes its own.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil

import tensorflow as tf
from absl import logging

from official.atomic_files import TEMP_SUFFIX, open_atomically
from official import checkpoints
from official.checkpoints.training import CONFIG_FILE
from official.configs import BertConfig, ConfigError
from official.tasks import long_doc_settings

BEST_DIR = "best"  # output_dir/best: the best checkpoint by the task's metric
# The records adaptation methods write beside the checkpoints (official/peft/artifact.py).
ADAPTATION_RECORDS = ("peft_config.json",)
# The records tasks write beside the checkpoints: what the checkpoints' model reads
# (official/tasks/long_doc_settings.py), so a rerun must say the same.
TASK_RECORDS = (long_doc_settings.RECORD_FILE,)
# TensorFlow's saver: `<prefix>_temp/`; official/checkpoints/tf1.write: `<prefix>_temp_<hex>/`.
_CHECKPOINT_TEMP_DIR = re.compile(r".+\.ckpt(-\d+)?_temp(_[0-9a-f]+)?$")
# TensorFlow's CheckpointManager writes the `checkpoint` state file as `checkpoint.tmp<hex>`.
_STATE_TEMP_FILE = re.compile(r"checkpoint\.tmp[0-9a-f]+$")


def has_checkpoint(output_dir: str) -> bool:
    """True when output_dir (or its best/) holds a checkpoint a job would resume or restore."""
    return any(os.path.isdir(d) and tf.train.latest_checkpoint(d)
               for d in (output_dir, os.path.join(output_dir, BEST_DIR)))


def finetuned_checkpoint(path: str) -> str:
    """The checkpoint prefix of a fine-tuning output: `path/best/` when there is one, else the
    newest checkpoint of `path` (or `path` itself, a prefix)."""
    best = os.path.join(path, BEST_DIR)
    if os.path.isdir(best) and tf.train.latest_checkpoint(best):
        path = best
    return checkpoints.resolve_checkpoint(path)


def check_task_records(output_dir: str, files: dict[str, str]) -> None:
    """Raises ValueError when output_dir's checkpoints were made with a task record
    (TASK_RECORDS) other than the one in `files` (none: the task writes none), naming the file
    and both settings."""
    if not has_checkpoint(output_dir):
        return
    for name in TASK_RECORDS:
        path = os.path.join(output_dir, name)
        written = None
        if os.path.isfile(path):
            with open(path, encoding="utf-8") as f:
                written = f.read()
        if written != files.get(name):
            def said(text):
                return " ".join(text.split()) if text else "nothing (the default)"
            raise ValueError(f"{path}: the checkpoints in {output_dir} were made with "
                             f"{said(written)}; these flags say {said(files.get(name))}: "
                             "give the same flags, or another --output_dir")


def check_config(output_dir: str, config: BertConfig, config_file: str) -> None:
    """Raises ConfigError when output_dir holds checkpoints made for another config.

    The message names both files and every field that differs, e.g.
    "out/bert_config.json (of the checkpoints in out) and --bert_config_file=b.json differ in
    hidden_size (32 vs 64): ...".
    """
    written = os.path.join(output_dir, CONFIG_FILE)
    if not (os.path.isfile(written) and has_checkpoint(output_dir)):
        return
    if os.path.abspath(written) == os.path.abspath(config_file):
        return
    differ = BertConfig.from_json_file(written).differences(config)
    if not differ:
        return
    raise ConfigError(
        f"{written} (the config of the checkpoints in {output_dir}) and --bert_config_file="
        f"{config_file} differ in {', '.join(differ)}: nothing was changed; use another "
        f"--output_dir, or the same config to resume")


def remove_interrupted_writes(output_dir: str) -> None:
    """Removes what an interrupted run left half-made in output_dir; restores best/ when a kill
    came between moving the old one aside and moving the new one in."""
    if not os.path.isdir(output_dir):
        return
    best, old = os.path.join(output_dir, BEST_DIR), os.path.join(output_dir, BEST_DIR + ".old")
    if os.path.isdir(old):
        if os.path.isdir(best):
            shutil.rmtree(old)
        else:
            os.replace(old, best)
            logging.info("Restored %s from %s (an interrupted run left it aside)", best, old)
    for name in os.listdir(output_dir):
        path = os.path.join(output_dir, name)
        if os.path.isdir(path) and (_CHECKPOINT_TEMP_DIR.match(name) or name == BEST_DIR + ".tmp"):
            shutil.rmtree(path, ignore_errors=True)
            logging.info("Removed %s (an interrupted save)", path)
        elif os.path.isfile(path) and (name.endswith(TEMP_SUFFIX)
                                       or _STATE_TEMP_FILE.match(name)):
            os.unlink(path)


def claim(output_dir: str, config: BertConfig, files: dict[str, str] | None = None) -> None:
    """Before the first save: makes output_dir, clears an interrupted run's leftovers, writes the
    bert_config.json the checkpoints will be read with and `files` ({name: text}: an adaptation
    method's record). (The chief alone calls it.)"""
    os.makedirs(output_dir, exist_ok=True)
    remove_interrupted_writes(output_dir)
    config.to_json_file(os.path.join(output_dir, CONFIG_FILE))
    for name in set(ADAPTATION_RECORDS + TASK_RECORDS) - set(files or {}):
        # Left by an adapted run stopped before its first save (a run that saved one refuses
        # another method up front: official/peft/adaptation.py, `check_task_records`).
        with contextlib.suppress(FileNotFoundError):
            os.unlink(os.path.join(output_dir, name))
    for name, text in (files or {}).items():
        with open_atomically(os.path.join(output_dir, name)) as f:
            f.write(text)

