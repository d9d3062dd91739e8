"""tests/fork_server.py against fresh processes: a forked command sees what `python -m` gives
it (argv, flags, cwd, environment, default signals, its own session when asked), writes to the
files it is given, and ends with the exit code or signal a fresh process ends with."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from tests import fork_server
from tests.cli import ENV, REPO


@pytest.fixture(scope="module")
def servers():
    made = fork_server.Servers(ENV, REPO)
    yield made
    made.stop()


def _both(servers, *args, new_session=False):
    """The probe run forked and fresh: [(exit code, stdout, stderr)] in that order."""
    forked = servers.start("tests.fork_probe", list(args), subprocess.PIPE, subprocess.PIPE,
                           new_session)
    fresh = subprocess.Popen([sys.executable, "-m", "tests.fork_probe", *args], cwd=REPO,
                             env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             start_new_session=new_session)
    return [(process.returncode, stdout, stderr) for process in (forked, fresh)
            for stdout, stderr in [process.communicate()]]


def test_a_forked_command_sees_what_a_fresh_one_sees(servers):
    (forked_code, forked_out, forked_err), (fresh_code, fresh_out, fresh_err) = _both(
        servers, "--then=exit:0", "left", "over")
    assert forked_code == fresh_code == 0
    forked, fresh = json.loads(forked_out), json.loads(fresh_out)
    del forked["hash_seed"], fresh["hash_seed"]  # drawn anew by each process (the next test)
    assert forked == fresh
    assert fresh["rest"] == ["left", "over"] and "then" in fresh["flags"]
    assert forked_err.strip().splitlines()[-1] == fresh_err.strip().splitlines()[-1] == \
        "on stderr"


def test_two_commands_in_a_row_have_different_hash_seeds(servers):
    seeds = [json.loads(servers.start("tests.fork_probe", [], subprocess.PIPE, subprocess.PIPE,
                                      False).communicate()[0])["hash_seed"] for _ in range(2)]
    assert seeds[0] != seeds[1]


@pytest.mark.parametrize("then, code", [("exit:3", 3), ("raise", 1),
                                        ("interrupt", -signal.SIGINT)])
def test_a_forked_command_ends_as_a_fresh_one_does(servers, then, code):
    (forked_code, _, forked_err), (fresh_code, _, fresh_err) = _both(servers, f"--then={then}")
    assert forked_code == fresh_code == code
    assert forked_err.strip().splitlines()[-1] == fresh_err.strip().splitlines()[-1]


@pytest.mark.parametrize("stop, to_group", [(signal.SIGTERM, False), (signal.SIGINT, True),
                                            (signal.SIGKILL, False)])
def test_a_forked_command_is_signalled_by_pid_or_by_its_session(servers, tmp_path, stop,
                                                                to_group):
    with open(tmp_path / "out.txt", "w") as out:
        forked = servers.start("tests.fork_probe", ["--then=wait"], out, subprocess.DEVNULL,
                               True)
    deadline = time.monotonic() + 3600
    while not (tmp_path / "out.txt").read_text():
        assert forked.poll() is None and time.monotonic() < deadline
        time.sleep(0.05)
    assert json.loads((tmp_path / "out.txt").read_text())["session_leader"]
    assert os.getpgid(forked.pid) == forked.pid
    (os.killpg if to_group else os.kill)(forked.pid, stop)
    # SIGINT is absl's KeyboardInterrupt, which Python ends by SIGINT; the others kill it.
    assert forked.wait() == -stop
