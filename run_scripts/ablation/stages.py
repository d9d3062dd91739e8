"""Entry-point commands run in order as subprocesses (`jobs` at once), each reused once done,
each resumed after an interruption.

    stage = Stage("bert.seed1.pretrain", "row BERT, seed 1: pretrain (run_pretraining)",
                  ["-m", "run_scripts.run_pretraining", ...], outputs=[".../pretrained"],
                  inputs=[".../bert_config.json"], after=["data.nsp.seed1"])
    Stages(state_dir, log_dir, cwd=REPO, jobs=1).run([stage, ...])

The demo's rule (official/stages.py: `Stage`, its key): a stage is done when its stamp
(`state_dir/<name>.json`) says "done" under the same key and all its outputs exist. Change a
flag, a data file or an earlier stage, and the stage runs again, its outputs removed first
(run_pretraining would otherwise resume an old run).

What differs from the demo's, for studies of many long runs:
  - several at once: with `jobs` > 1, a stage starts as soon as the stages it comes after have
    finished and fewer than `jobs` commands run (in the list's order otherwise); with 1, one
    after another. A failed stage starts no new one; the others running end first.
  - resuming: the stamp says "started" while a stage runs. Stopped by ctrl-C or SIGTERM, the
    stages' commands are sent that one signal (each runs in a session of its own, so a
    terminal's ctrl-C reaches this process alone and a command gets it once), they are waited
    for (the entry points save a checkpoint, or leave nothing half-written, and exit), and
    their outputs are kept: the next run with the same key runs the same command over them,
    which resumes. A second signal while waiting kills the commands. This process then raises
    KeyboardInterrupt, or `Stopped` for SIGTERM.
  - a command that fails (any other non-zero exit) has its outputs and stamp removed.
  - no second writer: each command is started to end with this process (SIGTERM when it dies,
    SIGKILL included: official/parent_death.py), and a stage whose output folder a command of
    an earlier, killed run still holds (official/output_lock.py) waits for it to end first.
  - each command's stdout and stderr go to `log_dir/<name>.log` (appended to when resumed),
    and to this process's stderr too with `echo`; a progress line on stderr names each stage
    as it starts, ends, or is reused.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import shlex
import signal
import subprocess
import sys
import threading
import time
from typing import Callable, Iterator

from official import output_lock, parent_death
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

# How long a stage waits for a command of a killed earlier run to finish saving (a training run
# stopped by SIGTERM saves one checkpoint: seconds at the sizes a study runs).
WRITER_GRACE_SECONDS = 120.0


class StageFailed(RuntimeError):
    """A stage's command exited with a non-zero status; the message names the stage, the status,
    the log and the log's last line."""

    def __init__(self, stage: Stage, returncode: int, log: str, last_line: str):
        said = f"; it said: {last_line}" if last_line else ""
        super().__init__(f"{stage.title}: exit status {returncode} (log: {log}){said}")
        self.returncode = returncode


class _Interrupted(Exception):
    """A stage's command ended because the run was stopped; its outputs are kept."""


class Stopped(BaseException):
    """SIGTERM arrived (a BaseException, as KeyboardInterrupt is: no `except Exception` may take
    it for a failure)."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def _stderr_line(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


class Stages:
    """Runs stages in order with `python` in `cwd`, their stamps in `state_dir` and logs in
    `log_dir`; `progress` gets each progress line (default: stderr); `echo` copies each
    command's output to stderr. Commands get TF_CPP_MIN_LOG_LEVEL=3 unless it is set, and with
    `jobs` > 1 TensorFlow's threads set to share the cores among them (two BERT-Tiny
    pretrainings of one thread each made 1.28x the examples/s of one of two threads on 2 cores:
    bench/ablation_budget.md)."""

    def __init__(self, state_dir: str, log_dir: str, python: str = sys.executable,
                 cwd: str | None = None, echo: bool = False,
                 progress: Callable[[str], None] = _stderr_line, jobs: int = 1):
        if jobs < 1:
            raise ValueError(f"jobs must be at least 1, got {jobs}")
        self.state_dir, self.log_dir = state_dir, log_dir
        self.python, self.cwd, self.echo, self.progress = python, cwd, echo, progress
        self.jobs = jobs
        self._lock = threading.Lock()
        self._running: dict[str, Stage] = {}
        self._children: dict[str, subprocess.Popen] = {}
        self._stopping = 0  # the signal that stopped the run, once one has
        self.stopped: list[Stage] = []  # the stages it stopped
        self._keys: dict[str, str] = {}
        self._digests: dict[tuple[str, int, int], str] = {}

    def _digest(self, path: str) -> str:
        stat = os.stat(path)
        known = (os.path.abspath(path), stat.st_size, stat.st_mtime_ns)
        if known not in self._digests:
            self._digests[known] = file_digest(path)
        return self._digests[known]

    def key(self, stage: Stage) -> str:
        """The stage's key (official/stages.py), from the keys of the stages run before."""
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

    def is_done(self, stage: Stage, key: str) -> bool:
        stamp = self._read_stamp(stage)
        return (stamp.get("key") == key and stamp.get("state") == "done"
                and all(os.path.exists(path) for path in stage.outputs))

    def run(self, stages: list[Stage]) -> list[StageRun]:
        """Runs (or reuses) every stage, in order, at most `jobs` at once, a stage once those
        it comes after have finished; raises StageFailed for the first that fails once the
        others running have ended (no new one starts), KeyboardInterrupt or Stopped when
        interrupted (see the module docstring)."""
        by_name = {stage.name: stage for stage in stages}
        keys = {}
        for stage in stages:  # each key from its command, its inputs and the earlier keys
            keys[stage.name] = self._keys[stage.name] = self.key(stage)
        where = {stage.name: f"[{number}/{len(stages)}] {stage.title}"
                 for number, stage in enumerate(stages, start=1)}
        pending, finished = list(stages), {}
        threads: dict[str, threading.Thread] = {}
        ended: queue.Queue = queue.Queue()
        failure: BaseException | None = None
        with _sigterm_raises_stopped():
            try:
                while True:
                    while failure is None and len(threads) < self.jobs:
                        ready = next((s for s in pending
                                      if all(name in finished for name in s.after)), None)
                        if ready is None:
                            break
                        pending.remove(ready)
                        if self.is_done(ready, keys[ready.name]):
                            seconds = self._read_stamp(ready).get("seconds", 0.0)
                            self._say(f"{where[ready.name]}: reused (done before with the same "
                                      "command and inputs)")
                            finished[ready.name] = StageRun(ready, True, seconds)
                            continue
                        threads[ready.name] = threading.Thread(
                            target=self._work, args=(ready, keys[ready.name], where[ready.name],
                                                     ended), daemon=True)
                        threads[ready.name].start()
                    if not threads:
                        break
                    name, outcome = _next(ended)
                    threads.pop(name).join()
                    if isinstance(outcome, BaseException):
                        failure = failure or outcome
                    else:
                        finished[name] = StageRun(by_name[name], False, outcome)
            except (KeyboardInterrupt, Stopped) as stop:
                self._stop(stop.signum if isinstance(stop, Stopped) else signal.SIGINT,
                           list(threads.values()))
                raise
        if failure is not None:
            raise failure
        return [finished[stage.name] for stage in stages]

    def _say(self, line: str) -> None:
        with self._lock:
            self.progress(line)

    def _work(self, stage: Stage, key: str, where: str, ended: queue.Queue) -> None:
        """A thread's: the stage executed, its seconds (or what it raised) put on `ended`."""
        try:
            ended.put((stage.name, self._execute(stage, key, where)))
        except BaseException as e:  # reported by the thread that waits
            ended.put((stage.name, e))

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

    def _write_stamp(self, stage: Stage, key: str, state: str, seconds: float = 0.0) -> None:
        os.makedirs(self.state_dir, exist_ok=True)
        with open_atomically(self._stamp(stage)) as f:
            json.dump({"key": key, "state": state, "command": stage.command,
                       "seconds": seconds}, f, indent=2)

    def _execute(self, stage: Stage, key: str, where: str) -> float:
        self._wait_for_earlier_writers(stage, where)
        stamp = self._read_stamp(stage)
        resume = stamp.get("key") == key and stamp.get("state") == "started"
        if not resume:
            remove([self._stamp(stage), *stage.outputs])
        self._write_stamp(stage, key, "started")
        os.makedirs(self.log_dir, exist_ok=True)
        log = os.path.join(self.log_dir, f"{stage.name}.log")
        self._say(f"{where}: {'resuming' if resume else 'running'} (log: {log})")
        started = time.perf_counter()
        with self._lock:
            self._running[stage.name] = stage
        try:
            returncode, last_line = self._run_command(stage, log, append=resume)
        finally:
            with self._lock:
                del self._running[stage.name]
        seconds = time.perf_counter() - started
        if returncode != 0 and self._stopping:
            raise _Interrupted(stage.name)  # its outputs are kept for the rerun to go on from
        if returncode != 0:
            remove([*stage.outputs, self._stamp(stage)])
            raise StageFailed(stage, returncode, log, last_line)
        missing = [path for path in stage.outputs if not os.path.exists(path)]
        if missing:
            remove([*stage.outputs, self._stamp(stage)])
            raise StageFailed(stage, 0, log, f"it made no {', '.join(missing)}")
        self._write_stamp(stage, key, "done", seconds)
        self._say(f"{where}: done in {format_seconds(seconds)}")
        return seconds

    def _wait_for_earlier_writers(self, stage: Stage, where: str) -> None:
        """Waits while a command of an earlier run still holds one of the stage's output folders
        (official/output_lock.py): its runner was killed, and it was sent SIGTERM then
        (official/parent_death.py) and is saving. After WRITER_GRACE_SECONDS it is FolderBusy,
        before this run has touched the outputs (a failed stage's are removed)."""
        deadline = time.monotonic() + WRITER_GRACE_SECONDS
        for path in stage.outputs:
            said = False
            while os.path.isdir(path) and (pid := output_lock.holder(path)) is not None:
                if time.monotonic() > deadline:
                    raise output_lock.FolderBusy(path, pid)
                if not said:
                    self._say(f"{where}: waiting for pid {pid}, a command of an earlier run "
                              f"still writing {path}")
                    said = True
                time.sleep(0.2)

    def _run_command(self, stage: Stage, log: str, append: bool) -> tuple[int, str]:
        """Runs `python *stage.command`, its output to `log`; (exit status, last line of its
        output). Stopped before it starts, it does not start (status 128 + the signal)."""
        env = parent_death.child_environment(os.environ)
        env.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        if self.jobs > 1:  # the cores shared among the commands at once, not each taking all
            env.setdefault("TF_NUM_INTRAOP_THREADS",
                           str(max(1, len(os.sched_getaffinity(0)) // self.jobs)))
            env.setdefault("TF_NUM_INTEROP_THREADS", "1")
        last = ""
        with open(log, "a" if append else "w", encoding="utf-8") as out:
            if append:
                out.write("\n--- resumed ---\n")
            out.write("$ python " + " ".join(shlex.quote(arg) for arg in stage.command) + "\n")
            out.flush()
            with self._lock:
                if self._stopping:
                    return 128 + self._stopping, ""
                child = subprocess.Popen([self.python, *stage.command], cwd=self.cwd, env=env,
                                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                         text=True, errors="replace", start_new_session=True)
                self._children[stage.name] = child
            try:
                for line in child.stdout:
                    last = self._take(line, out) or last
                child.wait()
            finally:
                child.stdout.close()
                with self._lock:
                    del self._children[stage.name]
        return child.returncode, last

    def _take(self, line: str, out) -> str:
        """Writes a line of a command's output to its log (and stderr with echo); returns it
        stripped, or "" for start-up noise and blank lines."""
        if START_UP_NOISE.match(line):
            return ""
        out.write(line)
        out.flush()
        if self.echo:
            sys.stderr.write(line)
            sys.stderr.flush()
        return line.strip()


@contextlib.contextmanager
def _sigterm_raises_stopped() -> Iterator[None]:
    def stop(signum, frame):
        raise Stopped(signum)

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _next(ended: queue.Queue) -> tuple[str, object]:
    """The next stage to end and its outcome; waits in short steps, so that a signal's handler
    runs at once."""
    while True:
        try:
            return ended.get(timeout=0.2)
        except queue.Empty:
            pass


@contextlib.contextmanager
def _second_signal_kills(stages: Stages) -> Iterator[None]:
    """While stopped commands finish: another ctrl-C or SIGTERM kills them at once."""
    def kill(signum, frame):
        with stages._lock:
            children = list(stages._children.values())
        for child in children:
            child.kill()

    previous = {s: signal.signal(s, kill) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
