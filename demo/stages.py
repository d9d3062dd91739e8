"""The demo's stages: entry-point commands run one after another, each skipped when already done.

    stage = Stage("vocab", "learn a WordPiece vocab", ["-m", "data_prep.build_vocab", ...],
                  outputs=["demo_output/vocab.txt"], inputs=["data/gutenberg/corpus.txt"])
    Pipeline(state_dir, python=sys.executable).run([stage, ...])

A stage is done when its stamp (`state_dir/<name>.json`) holds the same key and all its outputs
exist. The key is a hash of the command, of the contents of its input files and of the keys of
the stages it comes after: change a flag, a data file or an earlier stage, and the stage runs
again. Before a stage runs, its outputs are removed (run_pretraining would otherwise resume an
old run, run_classifier reuse old records); when it fails or is interrupted they are removed
again, so nothing half-made is left for the next run to trust.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time

from official.atomic_files import open_atomically


@dataclasses.dataclass(frozen=True)
class Stage:
    """One step of the demo.

    Attributes:
      name: short id, the stamp's file name ("pretrain").
      title: what a reader sees ("pretrain BERT-Tiny on the corpus").
      command: the arguments after `python` (["-m", "run_scripts.run_pretraining", ...]).
      outputs: files and folders the command makes.
      inputs: files the command reads that no earlier stage makes (hashed into the key).
      after: names of the stages whose outputs it reads.
    """
    name: str
    title: str
    command: list[str]
    outputs: list[str]
    inputs: list[str] = dataclasses.field(default_factory=list)
    after: list[str] = dataclasses.field(default_factory=list)


@dataclasses.dataclass(frozen=True)
class StageRun:
    """What became of a stage: run now or reused, and the seconds it took when it ran."""
    stage: Stage
    reused: bool
    seconds: float


class StageFailed(RuntimeError):
    """A stage's command exited with a non-zero status (`returncode`)."""

    def __init__(self, stage: Stage, returncode: int):
        super().__init__(f"stage {stage.name!r} failed with exit status {returncode}")
        self.returncode = returncode


def _sha256(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def remove(paths: list[str]) -> None:
    for path in paths:
        if os.path.isdir(path):
            shutil.rmtree(path)
        elif os.path.lexists(path):
            os.unlink(path)


# TensorFlow's C++ lines from before its logging is set up ("I0000 00:00:17... port.cc:153]
# oneDNN custom operations are on", "could not find cuda drivers"), which TF_CPP_MIN_LOG_LEVEL
# does not silence: start-up noise in every stage.
_START_UP_NOISE = re.compile(r"^([IWE]0000 00:00:|WARNING: All log messages before "
                             r"absl::InitializeLog\(\) is called)")


class Pipeline:
    """Runs stages in order with `python` (the venv's) in `cwd` (the paths of stages are
    relative to it), their stamps in `state_dir`.

    Children get TF_CPP_MIN_LOG_LEVEL=3 unless it is set; their stdout goes straight to this
    process's, their stderr too, line by line, without TensorFlow's start-up noise.
    """

    def __init__(self, state_dir: str, python: str = sys.executable, cwd: str | None = None):
        self.state_dir = state_dir
        self.python = python
        self.cwd = cwd
        self._keys: dict[str, str] = {}

    def _path(self, path: str) -> str:
        return os.path.join(self.cwd or "", path)

    def key(self, stage: Stage) -> str:
        """The hash of what the stage's outputs depend on (see the module docstring)."""
        missing = [name for name in stage.after if name not in self._keys]
        if missing:
            raise ValueError(f"stage {stage.name!r} comes after {missing}, which have not run")
        described = {"command": stage.command,
                     "inputs": {path: _sha256(self._path(path)) for path in stage.inputs},
                     "after": [self._keys[name] for name in stage.after]}
        return hashlib.sha256(json.dumps(described, sort_keys=True).encode()).hexdigest()

    def is_done(self, stage: Stage, key: str) -> bool:
        stamp = os.path.join(self.state_dir, f"{stage.name}.json")
        outputs = [self._path(path) for path in stage.outputs]
        if not (os.path.exists(stamp) and all(os.path.exists(p) for p in outputs)):
            return False
        with open(stamp, encoding="utf-8") as f:
            return json.load(f).get("key") == key

    def run(self, stages: list[Stage]) -> list[StageRun]:
        """Runs (or reuses) every stage; raises StageFailed at the first that fails. A reused
        stage's seconds are those it took when it ran."""
        runs = []
        for number, stage in enumerate(stages, start=1):
            key = self.key(stage)
            print(f"\n== [{number}/{len(stages)}] {stage.title}", flush=True)
            stamp = os.path.join(self.state_dir, f"{stage.name}.json")
            if self.is_done(stage, key):
                with open(stamp, encoding="utf-8") as f:
                    seconds = json.load(f)["seconds"]
                print("   done before, with the same flags and inputs: reused", flush=True)
                runs.append(StageRun(stage, True, seconds))
            else:
                runs.append(StageRun(stage, False, self._execute(stage, key, stamp)))
            self._keys[stage.name] = key
        return runs

    def run_command(self, command: list[str]) -> int:
        """Runs `python *command` in cwd as a stage's command runs; returns its exit status."""
        print("   $ python " + " ".join(shlex.quote(arg) for arg in command), flush=True)
        env = dict(os.environ)
        env.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        with subprocess.Popen([self.python, *command], cwd=self.cwd, env=env,
                              stderr=subprocess.PIPE, text=True, errors="replace") as child:
            for line in child.stderr:
                if not _START_UP_NOISE.match(line):
                    sys.stderr.write(line)
                    sys.stderr.flush()
        return child.returncode

    def _execute(self, stage: Stage, key: str, stamp: str) -> float:
        outputs = [self._path(path) for path in stage.outputs]
        remove([stamp, *outputs])
        started = time.perf_counter()
        try:
            returncode = self.run_command(stage.command)
        except BaseException:
            remove(outputs)
            raise
        seconds = time.perf_counter() - started
        if returncode != 0:
            remove(outputs)
            raise StageFailed(stage, returncode)
        missing = [path for path in outputs if not os.path.exists(path)]
        if missing:
            remove(outputs)
            raise RuntimeError(f"stage {stage.name!r} exited 0 but did not make "
                               f"{', '.join(missing)}")
        with open_atomically(stamp) as f:
            json.dump({"key": key, "command": stage.command, "seconds": seconds}, f, indent=2)
        print(f"   finished in {format_seconds(seconds)}", flush=True)
        return seconds


def format_seconds(seconds: float) -> str:
    """"42 s" or "3 min 05 s"."""
    if seconds < 60:
        return f"{seconds:.0f} s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest:02d} s"
