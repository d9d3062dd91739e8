"""A training job's output_dir: what it must agree with before work starts, and what a killed run
left there.

    check_config(output_dir, config, config_file)   refuses a rerun with another architecture
    claim(output_dir, config, files)                 the folder taken for this run (a second live
                                                     writer is refused: official/output_lock.py),
                                                     leftovers removed, bert_config.json and the
                                                     run's records written (records it does not
                                                     write, removed)
    remove_interrupted_writes(output_dir)            what a SIGKILL mid-write leaves behind

A rerun of the same command into an output_dir resumes from its checkpoints, which were made for
the bert_config.json written beside them. A rerun with another config must not overwrite that file
(the checkpoints would then load nowhere) and must not get as far as a shape error in the restore:
it is refused up front with the fields that differ.

What a SIGKILL leaves: TensorFlow's checkpoint saver writes `model.ckpt-N_temp/` and merges it
into `model.ckpt-N.*` (a kill in between leaves the folder: ~1.3 GB at BERT-Base with Adam
slots), and its state file is written as `checkpoint.tmp<hex>` then renamed; best/ is swapped in
through `best.tmp/` and `best.old/` (official/training/finetuning.py); every other writer writes
a `*.tmp` file and renames it (official/atomic_files.py). The records of the task and of an
adaptation method (official/adaptation.py) are written before the first checkpoint: a run stopped
before that leaves one with nothing beside it, which the next claim removes when its method or
task names it as a file that run does not write.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil

from absl import logging

from official import output_lock
from official.atomic_files import TEMP_SUFFIX, open_atomically
from official.checkpoints import CONFIG_FILE
from official.checkpoints.finetuned import BEST_DIR, has_checkpoint
from official.configs import BertConfig, ConfigError

# TensorFlow's saver: `<prefix>_temp/`; official/checkpoints/tf1.write: `<prefix>_temp_<hex>/`.
_CHECKPOINT_TEMP_DIR = re.compile(r".+\.ckpt(-\d+)?_temp(_[0-9a-f]+)?$")
# TensorFlow's CheckpointManager writes the `checkpoint` state file as `checkpoint.tmp<hex>`.
_STATE_TEMP_FILE = re.compile(r"checkpoint\.tmp[0-9a-f]+$")


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


def claim(output_dir: str, config: BertConfig, files: dict[str, str | None] | None = None) -> None:
    """Before the first save: makes output_dir and holds it for this process (FolderBusy while
    another live run holds it, before anything in it is touched), clears an interrupted run's
    leftovers, writes the bert_config.json the checkpoints will be read with and `files`
    ({name: text}: the task's and an adaptation method's records; a name with None is one this
    run does not write, removed if a run stopped before its first save left it). (The chief
    alone calls it.)"""
    os.makedirs(output_dir, exist_ok=True)
    output_lock.hold(output_dir)
    remove_interrupted_writes(output_dir)
    config.to_json_file(os.path.join(output_dir, CONFIG_FILE))
    for name, text in (files or {}).items():
        path = os.path.join(output_dir, name)
        if text is None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
        else:
            with open_atomically(path) as f:
                f.write(text)
