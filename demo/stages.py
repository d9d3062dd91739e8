"""The demo's stages: entry-point commands run one after another, each skipped when already done.

    stage = Stage("vocab", "learn a WordPiece vocab", ["-m", "data_prep.build_vocab", ...],
                  outputs=["demo_output/vocab.txt"], inputs=["data/gutenberg/corpus.txt"])
    Pipeline(state_dir, python=sys.executable).run([stage, ...])

A stage is done when its stamp (`state_dir/<name>.json`) holds the same key (official/stages.py:
`Stage`, its key) and all its outputs exist: change a flag, a data file or an earlier stage, and
the stage runs again. Before a stage runs, its outputs are removed (run_pretraining would
otherwise resume an old run, run_classifier reuse old records); when it fails or is interrupted
they are removed again, so nothing half-made is left for the next run to trust.

`run(stages, jobs=N)` runs up to N stages side by side, each as soon as the stages it comes after
are done. Their output is held back and shown whole, in the stages' order, so that it reads as
a run of one stage at a time does. After a failure no stage starts; those running finish (and
are reused next time), then the first failed stage's error is raised.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tempfile
import time

from official import parent_death
from official.atomic_files import open_atomically
from official.stages import (
    START_UP_NOISE,
    Stage,
    StageRun,
    file_digest,
    format_seconds,
    remove,
    stage_key,
)


class StageFailed(RuntimeError):
    """A stage's command exited with a non-zero status (`returncode`)."""

    def __init__(self, stage: Stage, returncode: int):
        super().__init__(f"stage {stage.name!r} failed with exit status {returncode}")
        self.returncode = returncode


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
        """The stage's key (official/stages.py), from the keys of the stages run before."""
        return stage_key(stage, lambda path: file_digest(self._path(path)), self._keys)

    def is_done(self, stage: Stage, key: str) -> bool:
        stamp = os.path.join(self.state_dir, f"{stage.name}.json")
        outputs = [self._path(path) for path in stage.outputs]
        if not (os.path.exists(stamp) and all(os.path.exists(p) for p in outputs)):
            return False
        with open(stamp, encoding="utf-8") as f:
            return json.load(f).get("key") == key

    def run(self, stages: list[Stage], jobs: int = 1) -> list[StageRun]:
        """Runs (or reuses) every stage, up to `jobs` of them side by side (see the module
        docstring); raises StageFailed at the first that fails. A reused stage's seconds are
        those it took when it ran."""
        if jobs < 1:
            raise ValueError(f"jobs must be at least 1, got {jobs}")
        if jobs > 1:
            return self._run_side_by_side(stages, jobs)
        runs = []
        for number, stage in enumerate(stages, start=1):
            key = self.key(stage)
            print(_title(stage, number, len(stages)), flush=True)
            if self.is_done(stage, key):
                runs.append(StageRun(stage, True, self._seconds(stage)))
                print(_REUSED, flush=True)
            else:
                runs.append(StageRun(stage, False, self._execute(stage, key)))
            self._keys[stage.name] = key
        return runs

    def run_command(self, command: list[str]) -> int:
        """Runs `python *command` in cwd as a stage's command runs; returns its exit status."""
        print(_shown(command), flush=True)
        with subprocess.Popen([self.python, *command], cwd=self.cwd, env=self._env(),
                              stderr=subprocess.PIPE, text=True, errors="replace") as child:
            for line in child.stderr:
                if not START_UP_NOISE.match(line):
                    sys.stderr.write(line)
                    sys.stderr.flush()
        return child.returncode

    def _env(self) -> dict[str, str]:
        env = parent_death.child_environment(os.environ)
        env.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        return env

    def _stamp(self, stage: Stage) -> str:
        return os.path.join(self.state_dir, f"{stage.name}.json")

    def _seconds(self, stage: Stage) -> float:
        """A done stage's seconds, from its stamp."""
        with open(self._stamp(stage), encoding="utf-8") as f:
            return json.load(f)["seconds"]

    def _execute(self, stage: Stage, key: str) -> float:
        outputs = [self._path(path) for path in stage.outputs]
        remove([self._stamp(stage), *outputs])
        started = time.perf_counter()
        try:
            returncode = self.run_command(stage.command)
        except BaseException:
            remove(outputs)
            raise
        seconds = time.perf_counter() - started
        self._finish(stage, key, returncode, seconds)
        print(_finished(seconds), flush=True)
        return seconds

    def _finish(self, stage: Stage, key: str, returncode: int, seconds: float) -> None:
        """A stage's command has ended: its stamp written if it made its outputs; if not, its
        outputs removed and StageFailed or RuntimeError raised."""
        outputs = [self._path(path) for path in stage.outputs]
        if returncode != 0:
            remove(outputs)
            raise StageFailed(stage, returncode)
        missing = [path for path in outputs if not os.path.exists(path)]
        if missing:
            remove(outputs)
            raise RuntimeError(f"stage {stage.name!r} exited 0 but did not make "
                               f"{', '.join(missing)}")
        with open_atomically(self._stamp(stage)) as f:
            json.dump({"key": key, "command": stage.command, "seconds": seconds}, f, indent=2)

    def _run_side_by_side(self, stages: list[Stage], jobs: int) -> list[StageRun]:
        keys = {}
        for stage in stages:  # every key first: a key depends on commands and inputs only
            keys[stage.name] = self._keys[stage.name] = self.key(stage)
        earlier = set(self._keys) - set(keys)  # stages of an earlier run(): done
        waiting = list(range(len(stages)))
        running: dict[int, _Child] = {}
        runs: dict[int, StageRun] = {}  # ended well (run or reused)
        errors: dict[int, BaseException] = {}
        ended: dict[int, _Child | None] = {}  # not shown yet; None: reused
        shown = 0
        try:
            while waiting or running:
                done = earlier | {stages[index].name for index in runs}
                for index in list(waiting):
                    stage = stages[index]
                    if errors or not done.issuperset(stage.after):
                        continue
                    if self.is_done(stage, keys[stage.name]):
                        waiting.remove(index)
                        runs[index] = StageRun(stage, True, self._seconds(stage))
                        ended[index] = None
                        done.add(stage.name)
                    elif len(running) < jobs:
                        waiting.remove(index)
                        remove([self._stamp(stage), *map(self._path, stage.outputs)])
                        running[index] = _Child([self.python, *stage.command], self.cwd,
                                                self._env())
                if errors:
                    waiting.clear()
                if running:
                    time.sleep(0.05)
                elif waiting:  # every stage comes after earlier ones (key): cannot happen
                    raise RuntimeError(f"stages {[stages[i].name for i in waiting]} wait for "
                                       "stages that never end")
                for index, child in list(running.items()):
                    if child.poll() is None:
                        continue
                    del running[index]
                    ended[index] = child
                    stage = stages[index]
                    try:
                        self._finish(stage, keys[stage.name], child.returncode, child.seconds)
                        runs[index] = StageRun(stage, False, child.seconds)
                    except (StageFailed, RuntimeError) as e:
                        errors[index] = e
                while shown in ended:  # each stage's block in order, once all before it show
                    self._show(stages, shown, ended.pop(shown), shown in runs)
                    shown += 1
        except BaseException:
            for index, child in running.items():
                child.stop()
                remove([self._path(path) for path in stages[index].outputs])
            raise
        for index in sorted(ended):  # the stages that ended after one before them failed
            self._show(stages, index, ended[index], index in runs)
        if errors:
            raise errors[min(errors)]
        return [runs[index] for index in range(len(stages))]

    def _show(self, stages: list[Stage], index: int, child: _Child | None, ok: bool) -> None:
        """A stage's block as a run one at a time shows it: title, then "reused", or the
        command, its output and (when it ended well) its time."""
        print(_title(stages[index], index + 1, len(stages)), flush=True)
        if child is None:
            print(_REUSED, flush=True)
            return
        print(_shown(stages[index].command), flush=True)
        child.show()
        if ok:
            print(_finished(child.seconds), flush=True)


_REUSED = "   done before, with the same flags and inputs: reused"


def _title(stage: Stage, number: int, count: int) -> str:
    return f"\n== [{number}/{count}] {stage.title}"


def _shown(command: list[str]) -> str:
    return "   $ python " + " ".join(shlex.quote(arg) for arg in command)


def _finished(seconds: float) -> str:
    return f"   finished in {format_seconds(seconds)}"


class _Child:
    """A stage's command running side by side with others: its stdout and stderr held in
    temporary files (pipes could fill and stall it) until `show`."""

    def __init__(self, command: list[str], cwd: str | None, env: dict[str, str]):
        self._stdout = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")
        self._stderr = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")
        self._started = time.perf_counter()
        self._process = subprocess.Popen(command, cwd=cwd, env=env, stdout=self._stdout,
                                         stderr=self._stderr)
        self.returncode: int | None = None
        self.seconds = 0.0

    def poll(self) -> int | None:
        if self.returncode is None and self._process.poll() is not None:
            self.returncode = self._process.returncode
            self.seconds = time.perf_counter() - self._started
        return self.returncode

    def show(self) -> None:
        """Its stdout to ours, its stderr to ours without TensorFlow's start-up noise."""
        for held, ours, noise in ((self._stdout, sys.stdout, None),
                                  (self._stderr, sys.stderr, START_UP_NOISE)):
            held.seek(0)
            for line in held:
                if noise is None or not noise.match(line):
                    ours.write(line)
            ours.flush()
            held.close()

    def stop(self) -> None:
        """Ends it (an interrupted run) and waits for it."""
        if self._process.poll() is None:
            self._process.terminate()
        self._process.wait()
