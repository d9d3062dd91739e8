"""A process that imports TensorFlow once and forks a child per command (tests/cli.py's runs).

    python -m tests.fork_server SOCKET      serves until its parent (a pytest process) ends

A command started by tests/cli.py would spend most of its life importing TensorFlow, Keras and
the library (~5 s each time on 2 cores). This server pays that once: it imports them, touching
no op (TensorFlow makes its thread pools at the first op, so a child forked afterwards makes its
own), and imports nothing of run_scripts/, data_prep/ or demo/, so each child imports its entry
module fresh and defines its own absl flags. A child is what `python -m module args...` would
be: its own pid (the test signals it by pid or, with a session of its own, by group), its own
cwd, environment, stdin, stdout and stderr (passed as file descriptors), default signal
dispositions, and an exit code or killing signal reported as the interpreter's would be.

One request per connection, on a Unix socket: a JSON line {"module", "args", "env", "cwd",
"new_session"} with three file descriptors (stdin, stdout, stderr); the server answers the
child's pid as a line, then, when the child ends, its raw wait status as a line. Variables read
when TensorFlow or Python start (PYTHONPATH, TF_CPP_MIN_LOG_LEVEL, ...) are the server's own:
tests/cli.py forks only commands whose environment is the server's, and starts real processes
for the others. Python's hash seed is the server's too: cli.py keeps two servers with different
seeds and alternates between them, so two commands in a row never share one. And its
/proc/<pid>/cmdline is the server's: a test that reads another process's command line (as
official/output_lock.py names a folder's writer) starts that process for real.
"""

import json
import locale
import os
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

# What every forked command imports (tensorflow_text, which the library's tokenizer imports, is
# ~0.45 s of CPU; the library itself ~0.1 s); imported here once. TensorFlow defines absl flags
# of its own when imported (absltest's, the TPU client's), after a command has parsed its flags;
# so the flags the preloading defines are removed from each child, which parses its own as a
# fresh process would (the same --helpfull, the same unknown flags refused).
PRELOADED = ("numpy", "tensorflow", "keras", "tensorflow_text", "official")
# The modules forked rather than started: those whose fresh process imports TensorFlow, so
# forking changes nothing they see (the vocab learner and the unigram baseline load it and start
# no workers; data_prep's other commands never load it and choose how to start their workers by
# whether it is loaded), tests/test_pretraining_input.py's input digest and
# tests/test_fork_server.py's probe.
FORKED_PACKAGES = ("run_scripts.", "demo.", "data_prep.build_vocab", "data_prep.unigram_baseline",
                   "tests.pipeline_digest", "tests.fork_probe")
# What a stage the stand-in forks may have in its environment that the server's lacks: variables
# read only after start-up (TensorFlow's thread pools are made at the first op); parent_death's
# variable is free too, the stand-in's to act on (`stand_in`).
THREAD_VARIABLES = ("TF_NUM_INTRAOP_THREADS", "TF_NUM_INTEROP_THREADS")


def main(socket_path: str, stand_in_path: str) -> None:
    _stop_with_parent()
    # absl's own flags (app's, logging's), which every command has.
    import absl.app  # noqa: F401
    from absl import flags
    own_flags = set(flags.FLAGS)
    for module in PRELOADED:
        __import__(module)
    preloaded_flags = set(flags.FLAGS) - own_flags
    # The Unicode tables every tokenizer a command builds starts from, and the code points its
    # NFD probes (pure Python: no TensorFlow op, so the rule above holds), each child's first
    # call answered from this one's cache.
    from official.text import char_classes
    char_classes.original_char_classes()
    char_classes.unassigned()
    # The socket appears under its name only once it listens (bound under another, then
    # renamed): a client waiting for the name never connects between bind and listen.
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(socket_path + ".binding")
    listener.listen(64)
    os.rename(socket_path + ".binding", socket_path)
    # A child's end wakes the loop through this pipe (signal.set_wakeup_fd).
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_read, False)
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda signum, frame: None)
    waiting: dict[int, socket.socket] = {}  # child pid -> the connection awaiting its status
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ)
    selector.register(wake_read, selectors.EVENT_READ)
    while True:
        for key, _ in selector.select():
            if key.fileobj is listener:
                connection, _ = listener.accept()
                sys.stdout.flush()
                sys.stderr.flush()
                pid = _start(connection, [selector.fileno(), listener.fileno(), wake_read,
                                          wake_write, *(c.fileno() for c in waiting.values())],
                             preloaded_flags, stand_in_path)
                if pid is not None:
                    waiting[pid] = connection
            else:
                while os.read(wake_read, 512) == 512:
                    pass
        _report_ended(waiting)


def _start(connection: socket.socket, server_fds: list[int], preloaded_flags: set[str],
           stand_in_path: str) -> int | None:
    """Forks the child a request asks for; returns its pid (None for a broken request)."""
    message, fds, _, _ = socket.recv_fds(connection, 1 << 16, 3)
    size, _, message = message.partition(b"\n")
    while len(message) < int(size or 0):
        more = connection.recv(1 << 16)
        if not more:
            break
        message += more
    if len(fds) != 3 or not size or len(message) != int(size):
        for fd in fds:
            os.close(fd)
        connection.close()
        return None
    request = json.loads(message)
    pid = os.fork()
    if pid == 0:
        for fd in [*server_fds, connection.fileno()]:
            os.close(fd)
        _run_child(request, fds, preloaded_flags, stand_in_path)  # never returns
    for fd in fds:
        os.close(fd)
    connection.sendall(f"{pid}\n".encode())
    return pid


def _report_ended(waiting: dict[int, socket.socket]) -> None:
    """Sends each ended child's wait status to its connection."""
    while waiting:
        pid, status = os.waitpid(-1, os.WNOHANG)
        if pid == 0:
            return
        connection = waiting.pop(pid, None)
        if connection is not None:
            try:
                connection.sendall(f"{status}\n".encode())
            except OSError:
                pass  # the test gave up on it
            connection.close()


def _run_child(request: dict, fds: list[int], preloaded_flags: set[str],
               stand_in_path: str) -> None:
    """In the forked child: becomes `python -m module args...` as a fresh process would be (its
    interpreter the stand-in), runs it, and exits as the interpreter would."""
    from absl import flags
    for name in preloaded_flags:
        delattr(flags.FLAGS, name)
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    if request["new_session"]:
        os.setsid()
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    sys.path[0] = request["cwd"]
    sys.argv = ["-m", *request["args"]]
    sys.executable = stand_in_path
    if request.get("end_with"):
        _end_with(request["end_with"])
    import runpy
    import traceback

    code = 0
    interrupted = False
    try:
        runpy._run_module_as_main(request["module"])
    except SystemExit as stop:
        code = _exit_code(stop)
    except KeyboardInterrupt:
        traceback.print_exc()
        interrupted = True
    except BaseException:  # the interpreter prints any uncaught exception, as here
        sys.excepthook(*sys.exc_info())
        code = 1
    # The interpreter's ending: non-daemon threads joined, exit handlers, streams flushed.
    threading._shutdown()
    import atexit
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    if interrupted:  # as Python itself ends on an uncaught KeyboardInterrupt: killed by SIGINT
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    os._exit(code)


def _end_with(pid: int) -> None:
    """SIGKILL to this process when process `pid` (the stand-in it runs behind) ends: the stage
    a runner kills goes with the stand-in the runner sees."""
    import select
    try:
        watched = os.pidfd_open(pid)
    except ProcessLookupError:
        os.kill(os.getpid(), signal.SIGKILL)

    def watch() -> None:
        select.select([watched], [], [])
        os.kill(os.getpid(), signal.SIGKILL)

    threading.Thread(target=watch, daemon=True).start()


def _exit_code(stop: SystemExit) -> int:
    """The interpreter's exit code for an uncaught SystemExit (its message printed)."""
    if stop.code is None:
        return 0
    if isinstance(stop.code, int):
        return stop.code
    print(stop.code, file=sys.stderr)
    return 1


def _stop_with_parent() -> None:
    """SIGKILL to this server when the pytest process that started it ends: the whole process,
    not the thread that started the server (as PR_SET_PDEATHSIG would: a fixture's thread
    pool would take the servers with it)."""
    parent = os.getppid()
    if parent == 1:  # it ended already
        os._exit(1)
    _end_with(parent)


# The client side, in the pytest process.

class Servers:
    """Two fork servers started with `env` (lazily, at the first command), taking turns: each
    command gets a hash seed other than the previous command's, as fresh processes would. Their
    folder holds the stand-in interpreter of the commands they fork (`python`) and what it reads
    (`servers.json`: the interpreter, the servers' sockets and environment)."""

    def __init__(self, env: dict, cwd: str):
        self.env = env
        self.cwd = cwd
        self.servers: list[_Server] = []
        self.turn = 0
        self.folder = ""
        # Fixtures start commands from several threads at once (a thread pool): one makes the
        # servers, and the turns are taken one at a time.
        self._lock = threading.Lock()

    def start(self, module: str, args: list[str], stdout, stderr,
              new_session: bool) -> "ForkedProcess":
        """`python -m module args...` forked by the next server in turn."""
        with self._lock:
            if not self.servers:
                self.folder = tempfile.mkdtemp(prefix="fork_servers")
                self._write_stand_in()
                self.servers = [self._server() for _ in range(2)]
                self._write_config()
            self.turn = (self.turn + 1) % len(self.servers)
            server = self.servers[self.turn]
        return ForkedProcess(server, module, args, self.env, self.cwd, stdout, stderr,
                             new_session)

    def _server(self) -> "_Server":
        return _Server(self.env, self.cwd, os.path.join(self.folder, "python"))

    def _write_stand_in(self) -> None:
        """The stand-in: a script run by the real interpreter without site packages (it needs
        the standard library alone, and starts in milliseconds)."""
        path = os.path.join(self.folder, "python")
        with open(path, "w", encoding="utf-8") as f:
            f.write(f"#!{sys.executable} -S\n"
                    f"import sys\n"
                    f"sys.path.insert(0, {self.cwd!r})\n"
                    f"from tests.fork_server import stand_in\n"
                    f"stand_in({os.path.join(self.folder, 'servers.json')!r})\n")
        os.chmod(path, 0o755)

    def _write_config(self) -> None:
        path = os.path.join(self.folder, "servers.json")
        with open(path + ".tmp", "w", encoding="utf-8") as f:
            json.dump({"python": sys.executable, "env": self.env,
                       "sockets": [server.socket_path for server in self.servers]}, f)
        os.replace(path + ".tmp", path)

    def stop(self) -> None:
        for server in self.servers:
            server.stop()
        self.servers = []
        if self.folder:
            shutil.rmtree(self.folder, ignore_errors=True)


class _Server:
    """One `python -m tests.fork_server` process and its socket, in a temporary folder."""

    def __init__(self, env: dict, cwd: str, stand_in_path: str):
        self.folder = tempfile.mkdtemp(prefix="fork_server")
        self.socket_path = os.path.join(self.folder, "socket")
        self.log_path = os.path.join(self.folder, "log.txt")
        with open(self.log_path, "w") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "tests.fork_server", self.socket_path, stand_in_path],
                cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log)

    def alive(self) -> bool:
        return self.process.poll() is None

    def connect(self, patience: float) -> socket.socket:
        """A connection, once the server listens (its imports take seconds, minutes on a
        loaded machine)."""
        deadline = time.monotonic() + patience
        while not os.path.exists(self.socket_path):
            if not self.alive():
                with open(self.log_path, encoding="utf-8", errors="replace") as log:
                    raise RuntimeError(f"the fork server ended: {log.read()[-3000:]}")
            if time.monotonic() > deadline:
                raise RuntimeError("the fork server never listened")
            time.sleep(0.05)
        connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        connection.connect(self.socket_path)
        return connection

    def stop(self) -> None:
        if self.alive():
            self.process.kill()
        self.process.wait()
        shutil.rmtree(self.folder, ignore_errors=True)


class ForkedProcess:
    """A command a fork server forked, seen as the `subprocess.Popen` (text mode) it stands for:
    `pid`, `args`, `returncode`, `poll`, `wait`, `communicate`, `send_signal`, `terminate`,
    `kill`, and for output asked for as PIPE, `stdout` and `stderr`: the text ends of pipes."""

    def __init__(self, server: _Server, module: str, args: list[str], env: dict, cwd: str,
                 stdout, stderr, new_session: bool):
        self.args = [sys.executable, "-m", module, *args]
        self.returncode: int | None = None
        self.stdout = self.stderr = None
        self._received = b""
        opened = []
        fds = [0]
        for name, target in (("stdout", stdout), ("stderr", stderr)):
            if target == subprocess.PIPE:
                read_end, write_end = os.pipe()
                opened.append(write_end)  # the child's alone once sent
                fds.append(write_end)
                # Decoded as Popen's text mode decodes (universal newlines).
                setattr(self, name, open(read_end, encoding=locale.getpreferredencoding(False),
                                         errors="strict"))
            elif target == subprocess.DEVNULL:
                opened.append(os.open(os.devnull, os.O_WRONLY))
                fds.append(opened[-1])
            elif target is None:
                fds.append(len(fds))  # inherited, as Popen's None
            else:
                fds.append(target.fileno())
        self._connection = server.connect(patience=3600)
        try:
            _send_request(self._connection, {"module": module, "args": args, "env": env,
                                             "cwd": cwd, "new_session": new_session}, fds)
        finally:
            for fd in opened:
                os.close(fd)
        self.pid = int(self._line(timeout=None))

    def _line(self, timeout: float | None) -> bytes:
        self._connection.settimeout(timeout)
        while b"\n" not in self._received:
            try:
                more = self._connection.recv(64)
            except (socket.timeout, BlockingIOError):
                raise subprocess.TimeoutExpired(self.args, timeout) from None
            if not more:
                raise RuntimeError(f"the fork server ended before {self.args} did")
            self._received += more
        line, _, self._received = self._received.partition(b"\n")
        return line

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            status = int(self._line(timeout))
            self.returncode = os.waitstatus_to_exitcode(status)
            self._connection.close()
        return self.returncode

    def poll(self) -> int | None:
        try:
            return self.wait(timeout=0)
        except subprocess.TimeoutExpired:
            return None

    def communicate(self, timeout: float | None = None) -> tuple[str | None, str | None]:
        """What is left in the pipes, read to their ends side by side (as Popen does, so that
        neither fills while the other is read), once the command has ended."""
        streams = {name: stream for name, stream in (("stdout", self.stdout),
                                                     ("stderr", self.stderr)) if stream}
        read: dict[str, str] = {}
        readers = [threading.Thread(target=lambda name=name, stream=stream:
                                    read.__setitem__(name, stream.read()), daemon=True)
                   for name, stream in streams.items()]
        for reader in readers:
            reader.start()
        for reader in readers:
            reader.join(timeout)
            if reader.is_alive():
                raise subprocess.TimeoutExpired(self.args, timeout)
        self.wait(timeout)
        for stream in streams.values():
            stream.close()
        return read.get("stdout"), read.get("stderr")

    def send_signal(self, signum: int) -> None:
        if self.poll() is None:
            os.kill(self.pid, signum)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


def _send_request(connection: socket.socket, request: dict, fds: list[int]) -> None:
    """A request as the server reads it: its JSON's length, a newline and the JSON, sent with
    the command's stdin, stdout and stderr."""
    message = json.dumps(request).encode()
    socket.send_fds(connection, [f"{len(message)}\n".encode() + message], fds)


# The signals a stand-in passes on to the command it stands in for.
PASSED_ON = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1,
             signal.SIGUSR2)


def stand_in(config_path: str) -> None:
    """The stand-in interpreter, run as `python ARGS...` by a forked orchestrator: `-m module`
    of FORKED_PACKAGES in the servers' environment (THREAD_VARIABLES and parent_death's aside)
    is forked by a server (chosen by this process's pid, so stages do not all share one hash
    seed) and stood in for until it ends; anything else is the real interpreter's."""
    from official import parent_death  # no TensorFlow: it loads in milliseconds

    with open(config_path, encoding="utf-8") as f:
        config = json.load(f)
    args = sys.argv[1:]
    free = (*THREAD_VARIABLES, parent_death.STOP_WITH_PARENT)

    def fixed(env: dict) -> dict:
        return {name: value for name, value in env.items() if name not in free}

    if not (len(args) >= 2 and args[0] == "-m" and args[1].startswith(FORKED_PACKAGES)
            and fixed(dict(os.environ)) == fixed(config["env"])):
        os.execv(config["python"], [config["python"], *args])
    child: list[int] = []  # the command's pid, once the server has answered
    pending: list[int] = []  # signals that came before it

    def pass_on(signum, frame):
        if not child:
            pending.append(signum)
            return
        try:
            os.kill(child[0], signum)
        except ProcessLookupError:
            pass  # it has ended; its status is on its way

    for signum in PASSED_ON:
        signal.signal(signum, pass_on)
    parent_death.stop_with_parent()  # the orchestrator's death: SIGTERM here, passed on
    sockets = config["sockets"]
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    connection.connect(sockets[os.getpid() % len(sockets)])
    _send_request(connection, {"module": args[1], "args": args[2:], "env": dict(os.environ),
                               "cwd": os.getcwd(), "new_session": os.getsid(0) == os.getpid(),
                               "end_with": os.getpid()}, [0, 1, 2])
    answers = connection.makefile("rb")
    child.append(int(answers.readline()))
    for signum in pending:
        pass_on(signum, None)
    code = os.waitstatus_to_exitcode(int(answers.readline()))
    if code < 0:  # killed by a signal: so is its stand-in
        if -code in PASSED_ON:
            signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    os._exit(code)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
