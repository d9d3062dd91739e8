"""What a command sees of its process, as JSON on stdout (tests/test_fork_server.py compares a
forked run with a fresh one): `python -m tests.fork_probe --then=exit:N|raise|interrupt|wait`.
"""

import json
import os
import signal
import sys
import time

from absl import app, flags

flags.DEFINE_string("then", "exit:0", "how to end: exit:N, raise, interrupt, or wait")
FLAGS = flags.FLAGS


def main(argv):
    print(json.dumps({
        "argv": sys.argv, "rest": argv[1:], "cwd": os.getcwd(), "path0": sys.path[0],
        "environ": dict(os.environ), "flags": sorted(FLAGS),
        "signals": {name: str(signal.getsignal(getattr(signal, name)))
                    for name in ("SIGINT", "SIGTERM", "SIGCHLD", "SIGPIPE", "SIGXFSZ")},
        "session_leader": os.getsid(0) == os.getpid(),
        "hash_seed": hash("a fixed text"), "main": sys.modules["__main__"].__file__,
        "executable": sys.executable, "pid": os.getpid(), "parent": os.getppid(),
    }), flush=True)
    print("on stderr", file=sys.stderr, flush=True)
    how, _, code = FLAGS.then.partition(":")
    if how == "raise":
        raise ValueError("raised")
    if how == "interrupt":
        raise KeyboardInterrupt
    if how == "wait":
        while True:
            time.sleep(0.05)
    return int(code)


if __name__ == "__main__":
    app.run(main)
