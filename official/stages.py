"""What a stage is, and when it is done before: the one rule of the demo's pipeline
(demo/stages.py) and of the ablation studies' runner (run_scripts/ablation/stages.py).

A stage is an entry-point command run as a subprocess, with the files it makes and reads. Its key
is a hash of the command, of the contents of its input files and of the keys of the stages it
comes after: change a flag, a data file or an earlier stage, and the key changes, so the stage
runs again; a stage whose stamp holds its key (and whose outputs exist) is reused.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import shutil
from typing import Callable, Mapping


@dataclasses.dataclass(frozen=True)
class Stage:
    """One command.

    Attributes:
      name: unique, the stamp's file name ("pretrain", "bert.seed1.pretrain").
      title: what a reader sees ("pretrain BERT-Tiny on the corpus").
      command: the arguments after `python` (["-m", "run_scripts.run_pretraining", ...]).
      outputs: the files and folders it makes.
      inputs: the files it reads that no earlier stage makes (their contents are in its key).
      after: the names of the stages whose outputs it reads.
    """
    name: str
    title: str
    command: list[str]
    outputs: list[str]
    inputs: list[str] = dataclasses.field(default_factory=list)
    after: list[str] = dataclasses.field(default_factory=list)


@dataclasses.dataclass(frozen=True)
class StageRun:
    """What became of a stage: `reused` (done before) or run now, and the seconds it took when
    it ran."""
    stage: Stage
    reused: bool
    seconds: float


# TensorFlow's C++ lines from before its logging is set up ("I0000 00:00:17... port.cc:153]
# oneDNN custom operations are on", "could not find cuda drivers"), which TF_CPP_MIN_LOG_LEVEL
# does not silence: start-up noise in every stage.
START_UP_NOISE = re.compile(r"^([IWE]0000 00:00:|WARNING: All log messages before "
                            r"absl::InitializeLog\(\) is called)")


def stage_key(stage: Stage, digest: Callable[[str], str], earlier: Mapping[str, str]) -> str:
    """The hash of what the stage's outputs depend on: its command, `digest` of each input file,
    and `earlier[name]`, the key of each stage it comes after.

    Raises:
      ValueError: a stage it comes after has no key yet.
    """
    missing = [name for name in stage.after if name not in earlier]
    if missing:
        raise ValueError(f"stage {stage.name!r} comes after {missing}, which have not run")
    described = {"command": stage.command,
                 "inputs": {path: digest(path) for path in stage.inputs},
                 "after": [earlier[name] for name in stage.after]}
    return hashlib.sha256(json.dumps(described, sort_keys=True).encode()).hexdigest()


def file_digest(path: str) -> str:
    """The SHA-256 of a file's contents, hex."""
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def remove(paths: list[str]) -> None:
    """Removes each file or folder that exists (a link itself, never what it points to)."""
    for path in paths:
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        elif os.path.lexists(path):
            os.unlink(path)


def format_seconds(seconds: float) -> str:
    """"42 s", "3 min 05 s" or "2 h 03 min"."""
    if seconds < 60:
        return f"{seconds:.0f} s"
    minutes, rest = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {rest:02d} s"
    return f"{minutes // 60} h {minutes % 60:02d} min"
