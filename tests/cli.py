"""Running an entry point as a user does, in a process of its own, and reading what it leaves
behind.

Each run is a process of its own: the training entry points turn on TensorFlow's op determinism
for the whole process, and a fresh process is what a user's command line gets. An entry point of
run_scripts/ or demo/ is forked from tests/fork_server.py, which has imported TensorFlow once for
the pytest process (the child is still the fresh `python -m` process a user starts, its own pid,
environment and signals), and so are the stages such a command starts (the demo's, the ablation
study's: its interpreter is the server's stand-in); any other module, or a run in another
environment, is a real process. BERT_TESTS_FORK=0 makes every run a real process (to compare
both ways).
"""

import atexit
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time

from tests import fork_server

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The environment of the processes started here: TensorFlow's C++ notes hidden, and the packages
# only the tests install (requirements-dev.txt) hidden as a user's install lacks them
# (tests/runtime_only/).
RUNTIME_ONLY = os.path.join(REPO, "tests", "runtime_only")
ENV = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=os.pathsep.join(
    filter(None, [RUNTIME_ONLY, os.environ.get("PYTHONPATH")])))
# How long a test waits for a run or an event before calling it hung: a bound for a hang, never
# for slowness (a loaded 2-core machine runs a command ten times slower than a quiet one).
PATIENCE = 3600
FORK = os.environ.get("BERT_TESTS_FORK") != "0"
_FORK_SERVERS = fork_server.Servers(ENV, REPO)
atexit.register(_FORK_SERVERS.stop)


def start(module: str, *flags, env: dict | None = None, stdout=subprocess.PIPE,
          stderr=subprocess.PIPE, new_session: bool = False):
    """`python -m module flags...` started from the repository root, as a `subprocess.Popen` or,
    for an entry point the fork server serves, a `ForkedProcess` that behaves as one. `stdout`
    and `stderr`: PIPE (read them with `outputs`), DEVNULL or an open file."""
    env = ENV if env is None else env
    if _FORK_SERVERS.env == env and module.startswith(fork_server.FORKED_PACKAGES) and FORK:
        return _FORK_SERVERS.start(module, [str(flag) for flag in flags], stdout, stderr,
                                   new_session)
    return subprocess.Popen([sys.executable, "-m", module, *map(str, flags)], cwd=REPO, env=env,
                            stdout=stdout, stderr=stderr, text=True,
                            start_new_session=new_session)


def outputs(process) -> subprocess.CompletedProcess:
    """Waits for a process `start` made with its output in pipes; its exit and output as text."""
    stdout, stderr = process.communicate(timeout=PATIENCE)
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


def lines_until(stream, pattern: str) -> str:
    """The lines read from `stream` (a process's text pipe) up to and including the first that
    matches the regex `pattern`: a test waits for what a run says, never for a time. Fails if the
    stream ends first (the process exited)."""
    seen = []
    for line in stream:
        seen.append(line)
        if re.search(pattern, line):
            return "".join(seen)
    raise AssertionError(f"the run ended before a line matching {pattern!r}:\n"
                         + "".join(seen)[-3000:])


def free_ports(n: int) -> list[int]:
    """`n` TCP ports of 127.0.0.1 free a moment ago (a multi-worker run's TF_CONFIG)."""
    sockets = [socket.socket() for _ in range(n)]
    for s in sockets:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


def run_module(module: str, *flags) -> subprocess.CompletedProcess:
    """`python -m module flags...` from the repository root; output captured as text."""
    return outputs(start(module, *flags))


def run_modules(*commands: list, env: dict | None = None) -> list[subprocess.CompletedProcess]:
    """Each `[module, *flags]` as `run_module` runs it, all side by side (each a process of its
    own); their results in order."""
    processes = [start(*command, env=env) for command in commands]
    return [outputs(process) for process in processes]


def succeeded(result: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    """Asserts a clean exit (no Python traceback either); returns the result."""
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Traceback" not in result.stderr
    return result


def failed(result: subprocess.CompletedProcess) -> str:
    """Asserts a non-zero exit without a traceback; returns the last line of stderr (the
    one-line error)."""
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    return result.stderr.strip().splitlines()[-1]


def serve_requests(requests: list[dict], folder) -> dict:
    """The results of `requests` (tests/export_client.py's format) as a serving client that knows
    nothing of this project gets them: one process importing only tensorflow and
    tensorflow_text, the requests and results as JSON files in `folder`."""
    request_file = os.path.join(folder, "requests.json")
    result_file = os.path.join(folder, "results.json")
    with open(request_file, "w", encoding="utf-8") as f:
        json.dump(requests, f)
    succeeded(subprocess.run([sys.executable, os.path.join(REPO, "tests", "export_client.py"),
                              request_file, result_file], cwd=folder, env=ENV,
                             capture_output=True, text=True, timeout=PATIENCE))
    with open(result_file, encoding="utf-8") as f:
        return json.load(f)


def eval_results(path) -> dict[str, str]:
    """An eval_results.txt (the original's `key = value` lines) as a dict of strings."""
    with open(path, encoding="utf-8") as f:
        return dict(line.rstrip("\n").split(" = ") for line in f)


def refused(result: subprocess.CompletedProcess, *expected: str, code: int = 1) -> str:
    """Asserts a run ended as bad input must end: exit status `code`, no traceback, and a last
    stderr line that is the entry point's one-line error, holding every `expected` text (the
    flag or file, and what is wrong). Returns that line."""
    assert result.returncode == code, (result.returncode, result.stderr[-3000:])
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    lines = result.stderr.strip().splitlines()
    assert lines, "nothing on stderr"
    last = lines[-1]
    for text in expected:
        assert text in last, (text, last)
    return last


def snapshot(path) -> dict[str, bytes | None]:
    """What is at `path`, to compare before and after a run: {relative name: bytes} for every
    file beneath it ({"": bytes} for a file itself), None for a folder; {} if nothing is there."""
    path = str(path)
    if os.path.isfile(path):
        with open(path, "rb") as f:
            return {"": f.read()}
    found: dict[str, bytes | None] = {}
    for folder, dirs, files in os.walk(path):
        for name in dirs:
            found[os.path.relpath(os.path.join(folder, name), path)] = None
        for name in files:
            full = os.path.join(folder, name)
            with open(full, "rb") as f:
                found[os.path.relpath(full, path)] = f.read()
    return found


class BackgroundRun:
    """`python -m module flags...` started in a process group of its own, its stderr in a file
    in `folder`; for runs a test stops (signals) or watches while they work."""

    # So that a failing test leaves no process behind (stop_all).
    started: list["BackgroundRun"] = []

    def __init__(self, module, folder, *flags):
        self.stderr_path = os.path.join(folder, "stderr.txt")
        with open(self.stderr_path, "w") as stderr:
            self.process = start(module, *flags, stdout=subprocess.DEVNULL, stderr=stderr,
                                 new_session=True)
        self.pid = self.process.pid
        BackgroundRun.started.append(self)

    @classmethod
    def stop_all(cls) -> None:
        for run in cls.started:
            if run.process.poll() is None:
                os.killpg(run.pid, signal.SIGKILL)
                run.process.wait()
        cls.started.clear()

    def wait_until(self, condition, timeout=PATIENCE):
        deadline = time.monotonic() + timeout
        while not condition():
            assert self.process.poll() is None, self.stderr()[-3000:]
            assert time.monotonic() < deadline, "the run never got under way"
            time.sleep(0.05)

    def stderr(self) -> str:
        with open(self.stderr_path, encoding="utf-8", errors="replace") as f:
            return f.read()

    def finish(self, timeout=PATIENCE) -> subprocess.CompletedProcess:
        self.process.wait(timeout)
        return subprocess.CompletedProcess(self.process.args, self.process.returncode, "",
                                           self.stderr())

    def live_processes(self) -> list[int]:
        """Processes of the run's group still alive (zombies, dead but not reaped by an init
        process that does not reap, count as gone)."""
        alive = []
        for name in os.listdir("/proc"):
            try:
                with open(f"/proc/{name}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if int(fields[2]) == self.pid and fields[0] not in "ZX":
                alive.append(int(name))
        return alive
