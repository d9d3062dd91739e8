"""Entry-point commands run as subprocesses, each reused once done and resumed once stopped: the
one stage runner of the demo (demo/run_demo.py) and of the ablation studies
(run_scripts/run_ablation_study.py), which differ only in how they show it (a `View`).

    stage = Stage("bert.seed1.pretrain", "row BERT, seed 1: pretrain (run_pretraining)",
                  ["-m", "run_scripts.run_pretraining", ...], outputs=["study/pretrained"],
                  inputs=["study/bert_config.json"], after=["data.nsp.seed1"])
    runs = Runner(state_dir, log_dir, cwd=REPO, jobs=2).run([stage, ...])

When a stage is done before: its key is a hash of its command, of the contents of its input
files and of the keys of the stages it comes after, so a changed flag, data file or earlier
stage changes it. Its stamp, `state_dir/<name>.json`, holds {"key", "state", "command",
"seconds"}: "started" while it runs, "done" once it made every output; the seconds its command
ran, summed over the runs that worked on it (a stopped run's are kept for the one that resumes;
a runner killed by SIGKILL cannot count its last). A stage whose stamp
says "done" under its key, its outputs all there, is reused; under another key, its outputs and
stamp are removed before it runs (run_pretraining would otherwise resume an old run).

  - several at once: a stage starts as soon as the stages it comes after have finished and
    fewer than `jobs` commands run (in the list's order otherwise). With `jobs` > 1,
    TensorFlow's threads are shared among them (TF_NUM_INTRAOP_THREADS = cores / jobs: two
    BERT-Tiny pretrainings of one thread each made 1.28x the examples/s of one of two threads
    on 2 cores, bench/ablation_budget.md). A failed stage starts no new one; those running end
    first, then the first failure is raised (`StageFailed`: the stage, its status, its log and
    its last line). A failed command's outputs and stamp are removed: nothing half-made is
    trusted later. With `keep_going` (independent stages, none after another: the
    examinations of run_scripts/examine_checkpoint.py) a failure stops nothing: every stage
    runs, and a failed one's StageRun holds its StageFailed.
  - stopped: ctrl-C or SIGTERM (which raises official/command_line.py's `Terminated`, ctrl-C's
    twin) is sent once to every running command (each runs in a session of its own, so a
    terminal's ctrl-C reaches this process alone), and they are waited for (the entry points
    save a checkpoint, or leave nothing half-written, and exit); a second signal kills them.
    Their outputs and "started" stamps are kept (`stopped` names them): the next run with the
    same key runs the same command over them, which resumes. Then the KeyboardInterrupt goes on.
  - no second writer: each command ends with this process (SIGTERM when it dies, SIGKILL
    included: official/parent_death.py), and a stage whose output folder a command of an
    earlier, killed run still holds (official/output_lock.py) waits for it to end first.
  - logs: each command's stdout and stderr go to `log_dir/<name>.log` (appended to when
    resumed), without TensorFlow's C++ start-up notes, and line by line to the view.

Paths of stages are relative to `cwd` (the commands' working directory) unless absolute.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import queue
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
from typing import Callable, Iterator, Mapping, Protocol

from official import command_line, output_lock, parent_death
from official.atomic_files import open_atomically
from official.console import format_seconds

# How long a stage waits for a command of a killed earlier run to finish saving (a training run
# stopped by SIGTERM saves one checkpoint: seconds at the sizes a study runs).
WRITER_GRACE_SECONDS = 120.0

# TensorFlow's C++ lines from before its logging is set up ("I0000 00:00:17... port.cc:153]
# oneDNN custom operations are on", "could not find cuda drivers"), which TF_CPP_MIN_LOG_LEVEL
# does not silence: start-up noise in every stage.
START_UP_NOISE = re.compile(r"^([IWE]0000 00:00:|WARNING: All log messages before "
                            r"absl::InitializeLog\(\) is called)")


@dataclasses.dataclass(frozen=True)
class Stage:
    """One command.

    Attributes:
      name: unique, the stamp's and the log's file name ("pretrain", "bert.seed1.pretrain").
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
    """What became of a stage: `reused` (done before) or run now, and the seconds its command
    ran (over every run that worked on it: one stopped and resumed counts both); `failure` its
    StageFailed when it failed (keep_going)."""
    stage: Stage
    reused: bool
    seconds: float
    failure: StageFailed | None = None


@dataclasses.dataclass(frozen=True)
class Place:
    """A stage and its place in the run: the `number`th of `count`."""
    stage: Stage
    number: int
    count: int

    def __str__(self) -> str:
        return f"[{self.number}/{self.count}] {self.stage.title}"


class View(Protocol):
    """How a run is shown. The runner calls one method at a time (from the threads that wait
    for the commands too)."""

    def reused(self, place: Place) -> None:
        """The stage is done before."""

    def started(self, place: Place, log: str, resumed: bool) -> None:
        """Its command starts (`resumed`: over the outputs of a stopped run)."""

    def note(self, place: Place, text: str) -> None:
        """Something a reader should know about the stage before it starts."""

    def line(self, place: Place, text: str) -> None:
        """A line of its command's output, with its newline."""

    def ended(self, place: Place, seconds: float | None) -> None:
        """Its command ended: made its outputs in `seconds` (with the runs it resumed), or
        (None) failed or was stopped."""

    def close(self) -> None:
        """The run is over: finished, failed or stopped."""


def _stderr_line(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


class ProgressLines:
    """A line for each stage as it starts, ends or is reused, "[3/12] <title>: <what>", given
    to `say` (stderr by default); with `echo`, every command's output on stderr too."""

    def __init__(self, say: Callable[[str], None] = _stderr_line, echo: bool = False):
        self.say, self.echo = say, echo

    def reused(self, place: Place) -> None:
        self.say(f"{place}: reused (done before with the same command and inputs)")

    def started(self, place: Place, log: str, resumed: bool) -> None:
        self.say(f"{place}: {'resuming' if resumed else 'running'} (log: {log})")

    def note(self, place: Place, text: str) -> None:
        self.say(f"{place}: {text}")

    def line(self, place: Place, text: str) -> None:
        if self.echo:
            sys.stderr.write(text)
            sys.stderr.flush()

    def ended(self, place: Place, seconds: float | None) -> None:
        if seconds is not None:
            self.say(f"{place}: done in {format_seconds(seconds)}")

    def close(self) -> None:
        pass


class StageFailed(RuntimeError):
    """A stage's command exited with a non-zero status (or made not all its outputs); the
    message names the stage, the status, the log and the log's last line."""

    def __init__(self, stage: Stage, returncode: int, log: str, last_line: str):
        said = f"; it said: {last_line}" if last_line else ""
        super().__init__(f"{stage.title}: exit status {returncode} (log: {log}){said}")
        self.returncode, self.log, self.last_line = returncode, log, last_line


class _Interrupted(Exception):
    """A stage's command ended because the run was stopped; its outputs are kept."""


def stage_key(stage: Stage, digest: Callable[[str], str], earlier: Mapping[str, str]) -> str:
    """The hash of what the stage's outputs depend on: its command, `digest` of each input file,
    and `earlier[name]`, the key of each stage it comes after. (Stamps written by earlier
    versions hold keys of this rule: changing it reruns every study's every stage.)

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


def remove(paths: list[str]) -> None:
    """Removes each file or folder that exists (a link itself, never what it points to)."""
    for path in paths:
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        elif os.path.lexists(path):
            os.unlink(path)


class Runner:
    """Runs stages with `python` in `cwd` (see the module docstring), their stamps in
    `state_dir`, their logs in `log_dir`, shown by `view` (default: progress lines on stderr).
    Commands get TF_CPP_MIN_LOG_LEVEL=3 unless it is set; with `keep_going`, a failed stage
    stops none of the others."""

    def __init__(self, state_dir: str, log_dir: str, python: str = sys.executable,
                 cwd: str | None = None, view: View | None = None, jobs: int = 1,
                 keep_going: bool = False):
        if jobs < 1:
            raise ValueError(f"jobs must be at least 1, got {jobs}")
        self.state_dir, self.log_dir = state_dir, log_dir
        self.python, self.cwd, self.jobs = python, cwd, jobs
        self.keep_going = keep_going
        self.view = ProgressLines() if view is None else view
        self._lock = threading.Lock()
        self._running: dict[str, Stage] = {}
        self._children: dict[str, subprocess.Popen] = {}
        self._stopping = 0  # the signal that stopped the run, once one has
        self.stopped: list[Stage] = []  # the stages it stopped
        self._keys: dict[str, str] = {}
        self._digests: dict[tuple[str, int, int], str] = {}

    def _path(self, path: str) -> str:
        return os.path.join(self.cwd or "", path)

    def _outputs(self, stage: Stage) -> list[str]:
        return [self._path(path) for path in stage.outputs]

    def _digest(self, path: str) -> str:
        """The SHA-256 of the file's contents, read again only when its size or time change."""
        path = self._path(path)
        stat = os.stat(path)
        known = (os.path.abspath(path), stat.st_size, stat.st_mtime_ns)
        if known not in self._digests:
            with open(path, "rb") as f:
                self._digests[known] = hashlib.file_digest(f, "sha256").hexdigest()
        return self._digests[known]

    def key(self, stage: Stage) -> str:
        """The stage's key, from the keys of the stages run before."""
        return stage_key(stage, self._digest, self._keys)

    def _stamp(self, stage: Stage) -> str:
        return os.path.join(self.state_dir, f"{stage.name}.json")

    def _read_stamp(self, stage: Stage) -> dict:
        try:
            with open(self._stamp(stage), encoding="utf-8") as f:
                stamp = json.load(f)
        except (OSError, ValueError):
            return {}
        return stamp if isinstance(stamp, dict) else {}

    def _write_stamp(self, stage: Stage, key: str, state: str, seconds: float = 0.0) -> None:
        os.makedirs(self.state_dir, exist_ok=True)
        with open_atomically(self._stamp(stage)) as f:
            json.dump({"key": key, "state": state, "command": stage.command,
                       "seconds": seconds}, f, indent=2)

    def is_done(self, stage: Stage, key: str) -> bool:
        stamp = self._read_stamp(stage)
        # The demo's runner before this one wrote its stamps without a state, once done.
        return (stamp.get("key") == key and stamp.get("state", "done") == "done"
                and all(os.path.exists(path) for path in self._outputs(stage)))

    def run(self, stages: list[Stage]) -> list[StageRun]:
        """Runs (or reuses) every stage (see the module docstring); a reused stage's seconds are
        those it took when it ran. Raises StageFailed for the first that failed once the others
        running have ended, the KeyboardInterrupt that stopped it once they are stopped. With
        keep_going, a failed stage's run holds its StageFailed instead, and a stage that comes
        after another is refused (ValueError): what would become of it is not decided."""
        if self.keep_going:
            for stage in stages:
                if stage.after:
                    raise ValueError(f"stage {stage.name} comes after {', '.join(stage.after)}: "
                                     "keep_going runs independent stages only")
        by_name = {stage.name: stage for stage in stages}
        keys = {}
        for stage in stages:  # each key from its command, its inputs and the earlier keys
            keys[stage.name] = self._keys[stage.name] = self.key(stage)
        places = {stage.name: Place(stage, number, len(stages))
                  for number, stage in enumerate(stages, start=1)}
        pending, finished = list(stages), {}
        threads: dict[str, threading.Thread] = {}
        ended: queue.Queue = queue.Queue()
        failure: BaseException | None = None
        previous = signal.signal(signal.SIGTERM, command_line.raise_terminated)
        try:
            while True:
                while failure is None and len(threads) < self.jobs:
                    ready = next((s for s in pending
                                  if all(name in finished for name in s.after)), None)
                    if ready is None:
                        break
                    pending.remove(ready)
                    if self.is_done(ready, keys[ready.name]):
                        self._show("reused", places[ready.name])
                        finished[ready.name] = StageRun(
                            ready, True, self._read_stamp(ready).get("seconds", 0.0))
                        continue
                    threads[ready.name] = threading.Thread(
                        target=self._work, args=(places[ready.name], keys[ready.name], ended),
                        daemon=True)
                    threads[ready.name].start()
                if not threads:
                    break
                name, outcome = _next(ended)
                threads.pop(name).join()
                if self.keep_going and isinstance(outcome, StageFailed):
                    finished[name] = StageRun(by_name[name], False, 0.0, outcome)
                elif isinstance(outcome, BaseException):
                    failure = failure or outcome
                else:
                    finished[name] = StageRun(by_name[name], False, outcome)
        except KeyboardInterrupt as stop:
            self._stop(signal.SIGTERM if isinstance(stop, command_line.Terminated)
                       else signal.SIGINT, list(threads.values()))
            raise
        finally:
            signal.signal(signal.SIGTERM, previous)
            self._show("close")
        if failure is not None:
            raise failure
        return [finished[stage.name] for stage in stages]

    def _show(self, event: str, *args) -> None:
        """view.<event>(*args), one call at a time."""
        with self._lock:
            getattr(self.view, event)(*args)

    def _work(self, place: Place, key: str, ended: queue.Queue) -> None:
        """A thread's: the stage executed, its seconds (or what it raised) put on `ended`."""
        try:
            ended.put((place.stage.name, self._execute(place, key)))
        except BaseException as e:  # reported by the thread that waits
            ended.put((place.stage.name, e))

    def _stop(self, signum: int, threads: list[threading.Thread]) -> None:
        """Sends every running command `signum` once and waits for them (a second signal kills
        them); their stages keep their outputs and "started" stamps."""
        with self._lock:
            self._stopping = signum
            children = list(self._children.values())
            self.stopped = list(self._running.values())
        with _second_signal_kills(self):
            for child in children:
                if child.poll() is None:
                    child.send_signal(signum)
            for thread in threads:
                while thread.is_alive():
                    thread.join(timeout=0.2)

    def _execute(self, place: Place, key: str) -> float:
        stage = place.stage
        self._wait_for_earlier_writers(place)
        stamp = self._read_stamp(stage)
        resume = stamp.get("key") == key and stamp.get("state") == "started"
        if not resume:
            remove([self._stamp(stage), *self._outputs(stage)])
        earlier = float(stamp.get("seconds") or 0.0) if resume else 0.0
        self._write_stamp(stage, key, "started", earlier)
        os.makedirs(self.log_dir, exist_ok=True)
        log = os.path.join(self.log_dir, f"{stage.name}.log")
        self._show("started", place, log, resume)
        started = time.perf_counter()
        with self._lock:
            self._running[stage.name] = stage
        try:
            returncode, last_line = self._run_command(place, log, append=resume)
        finally:
            with self._lock:
                del self._running[stage.name]
        seconds = earlier + time.perf_counter() - started
        if returncode != 0 and self._stopping:
            self._write_stamp(stage, key, "started", seconds)
            self._show("ended", place, None)
            raise _Interrupted(stage.name)  # its outputs are kept for the rerun to go on from
        missing = [path for path in self._outputs(stage) if not os.path.exists(path)]
        if returncode != 0 or missing:
            remove([*self._outputs(stage), self._stamp(stage)])
            self._show("ended", place, None)
            raise StageFailed(stage, returncode, log,
                              last_line if returncode else f"it made no {', '.join(missing)}")
        self._write_stamp(stage, key, "done", seconds)
        self._show("ended", place, seconds)
        return seconds

    def _wait_for_earlier_writers(self, place: Place) -> None:
        """Waits while a command of an earlier run still holds one of the stage's output folders
        (official/output_lock.py): its runner was killed, and it was sent SIGTERM then
        (official/parent_death.py) and is saving. After WRITER_GRACE_SECONDS it is FolderBusy,
        before this run has touched the outputs (a failed stage's are removed)."""
        deadline = time.monotonic() + WRITER_GRACE_SECONDS
        for path in self._outputs(place.stage):
            said = False
            while os.path.isdir(path) and (pid := output_lock.holder(path)) is not None:
                if time.monotonic() > deadline:
                    raise output_lock.FolderBusy(path, pid)
                if not said:
                    self._show("note", place, f"waiting for pid {pid}, a command of an earlier "
                                              f"run still writing {path}")
                    said = True
                time.sleep(0.2)

    def _environment(self) -> dict[str, str]:
        env = parent_death.child_environment(os.environ)
        env.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        if self.jobs > 1:  # the cores shared among the commands at once, not each taking all
            env.setdefault("TF_NUM_INTRAOP_THREADS",
                           str(max(1, len(os.sched_getaffinity(0)) // self.jobs)))
            env.setdefault("TF_NUM_INTEROP_THREADS", "1")
        return env

    def _run_command(self, place: Place, log: str, append: bool) -> tuple[int, str]:
        """Runs `python *command`, its output to `log` and the view; (exit status, last line of
        its output). Stopped before it starts, it does not start (status 128 + the signal)."""
        stage = place.stage
        last = ""
        with open(log, "a" if append else "w", encoding="utf-8") as out:
            if append:
                out.write("\n--- resumed ---\n")
            out.write("$ python " + shlex.join(stage.command) + "\n")
            out.flush()
            with self._lock:
                if self._stopping:
                    return 128 + self._stopping, ""
                child = subprocess.Popen([self.python, *stage.command], cwd=self.cwd,
                                         env=self._environment(), stdout=subprocess.PIPE,
                                         stderr=subprocess.STDOUT, text=True, errors="replace",
                                         start_new_session=True)
                self._children[stage.name] = child
            try:
                for line in child.stdout:
                    if START_UP_NOISE.match(line):
                        continue
                    out.write(line)
                    out.flush()
                    self._show("line", place, line)
                    last = line.strip() or last
                child.wait()
            finally:
                child.stdout.close()
                with self._lock:
                    del self._children[stage.name]
        return child.returncode, last


def _next(ended: queue.Queue) -> tuple[str, object]:
    """The next stage to end and its outcome; waits in short steps, so that a signal's handler
    runs at once."""
    while True:
        try:
            return ended.get(timeout=0.2)
        except queue.Empty:
            pass


@contextlib.contextmanager
def _second_signal_kills(runner: Runner) -> Iterator[None]:
    """While stopped commands finish: another ctrl-C or SIGTERM kills them at once."""
    def kill(signum, frame):
        with runner._lock:
            children = list(runner._children.values())
        for child in children:
            child.kill()

    previous = {s: signal.signal(s, kill) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
