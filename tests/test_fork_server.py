"""tests/fork_server.py against fresh processes: a forked command sees what `python -m` gives
it (argv, flags, cwd, environment, default signals, its own session when asked), writes to the
files it is given, and ends with the exit code or signal a fresh process ends with; and the
stand-in interpreter a forked command starts its own commands with (an orchestrator's stages) has
them forked too, passes its signals on, ends as they end and takes them with it when killed."""

import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time

import pytest

from tests import fork_server
from tests.cli import ENV, PATIENCE, REPO, lines_until


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
    # Drawn anew by each process (the next test); the stand-in; its own; the server.
    for differs in ("hash_seed", "executable", "pid", "parent"):
        del forked[differs], fresh[differs]
    assert forked == fresh
    assert fresh["rest"] == ["left", "over"] and "then" in fresh["flags"]
    assert forked_err.strip().splitlines()[-1] == fresh_err.strip().splitlines()[-1] == \
        "on stderr"


def test_two_commands_in_a_row_have_different_hash_seeds(servers):
    seeds = [json.loads(servers.start("tests.fork_probe", [], subprocess.PIPE, subprocess.PIPE,
                                      False).communicate()[0])["hash_seed"] for _ in range(2)]
    assert seeds[0] != seeds[1]


def test_the_servers_outlive_the_threads_that_started_them(tmp_path, monkeypatch):
    """Commands started by three threads at once (a fixture's thread pool) make one pair of
    servers, which serve after the threads have ended and leave nothing behind when stopped."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    made = fork_server.Servers(ENV, REPO)
    try:
        threads = [threading.Thread(target=lambda: made.start(
            "tests.fork_probe", [], subprocess.PIPE, subprocess.PIPE, False).communicate())
            for _ in range(3)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert len(os.listdir(tmp_path)) == 3  # the servers' folder, and one for each server
        for _ in made.servers:  # one command on each server, in turn
            probe = made.start("tests.fork_probe", ["--then=exit:0"], subprocess.PIPE,
                               subprocess.PIPE, False)
            out, _ = probe.communicate()
            assert probe.returncode == 0 and json.loads(out)["rest"] == []
    finally:
        made.stop()
    assert os.listdir(tmp_path) == []


def test_the_servers_end_with_the_process_that_started_them(tmp_path):
    """A pytest process killed outright (SIGKILL: no teardown runs) takes its servers along."""
    owner = subprocess.Popen(
        [sys.executable, "-c",
         "import os, signal, subprocess, sys\n"
         "from tests import fork_server\n"
         f"made = fork_server.Servers({ENV!r}, {REPO!r})\n"
         "made.start('tests.fork_probe', [], subprocess.PIPE, subprocess.PIPE,"
         " False).communicate()\n"
         "print(' '.join(str(s.process.pid) for s in made.servers), flush=True)\n"
         "os.kill(os.getpid(), signal.SIGKILL)\n"],
        cwd=REPO, env=dict(ENV, TMPDIR=str(tmp_path)), stdout=subprocess.PIPE, text=True)
    pids = [int(pid) for pid in owner.stdout.readline().split()]
    assert owner.wait(timeout=PATIENCE) == -signal.SIGKILL and len(pids) == 2
    for pid in pids:
        try:
            watched = os.pidfd_open(pid)
        except ProcessLookupError:
            continue  # gone already
        assert select.select([watched], [], [], PATIENCE)[0], f"server {pid} outlived pytest"
        os.close(watched)


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


def _stand_in(servers, *args, env=ENV, **popen):
    """`python args...` as a forked orchestrator starts its stages: with the stand-in, which
    is a forked command's sys.executable."""
    forked = servers.start("tests.fork_probe", [], subprocess.PIPE, subprocess.PIPE, False)
    stand_in = json.loads(forked.communicate()[0])["executable"]
    assert stand_in != sys.executable and os.path.dirname(stand_in) == servers.folder
    popen.setdefault("stdout", subprocess.PIPE)
    popen.setdefault("stderr", subprocess.PIPE)
    return subprocess.Popen([stand_in, *args], cwd=REPO, env=env, text=True, **popen)


def test_a_stage_the_stand_in_runs_is_forked_and_sees_what_a_fresh_one_sees(servers):
    stand_in = _stand_in(servers, "-m", "tests.fork_probe", "--then=exit:3", "left")
    stdout, stderr = stand_in.communicate()
    fresh = subprocess.run([sys.executable, "-m", "tests.fork_probe", "--then=exit:3", "left"],
                           cwd=REPO, env=ENV, capture_output=True, text=True)
    assert stand_in.returncode == fresh.returncode == 3
    forked, fresh_view = json.loads(stdout), json.loads(fresh.stdout)
    assert forked["parent"] in [server.process.pid for server in servers.servers]
    for differs in ("hash_seed", "executable", "pid", "parent"):
        del forked[differs], fresh_view[differs]
    assert forked == fresh_view and stderr.splitlines()[-1] == "on stderr"


@pytest.mark.parametrize("args, env", [
    (["-c", "import sys, os; print(sys.executable, os.getppid())"], ENV),
    (["-m", "tests.fork_probe"], dict(ENV, PYTHONHASHSEED="7")),  # read at start-up
])
def test_anything_else_the_stand_in_runs_is_the_real_interpreters(servers, args, env):
    stand_in = _stand_in(servers, *args, env=env)
    stdout, _ = stand_in.communicate()
    assert stand_in.returncode == 0
    if args[0] == "-c":
        assert stdout.split() == [sys.executable, str(os.getpid())]
    else:
        assert json.loads(stdout)["parent"] == os.getpid()


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT, signal.SIGKILL])
def test_the_stand_in_passes_signals_on_and_ends_as_its_stage_ends(servers, tmp_path, stop):
    with open(tmp_path / "out.txt", "w") as out:
        stand_in = _stand_in(servers, "-m", "tests.fork_probe", "--then=wait", stdout=out,
                             stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 3600
    while not (tmp_path / "out.txt").read_text():
        assert stand_in.poll() is None and time.monotonic() < deadline
        time.sleep(0.05)
    stage_pid = json.loads((tmp_path / "out.txt").read_text())["pid"]
    stand_in.send_signal(stop)
    assert stand_in.wait() == -stop
    # The stage is gone too (SIGKILL cannot be passed on: the stage follows its stand-in).
    while _alive(stage_pid):
        assert time.monotonic() < deadline
        time.sleep(0.05)


def test_an_orchestrators_death_reaches_its_stage(servers, tmp_path):
    """parent_death's variable is the stand-in's: the orchestrator's death is its SIGTERM,
    passed on to the stage, which ends by it."""
    assert _stand_in(servers, "-c", "pass").wait() == 0  # the servers and the stand-in made
    out = tmp_path / "out.txt"
    out.write_text("")
    orchestrator = subprocess.Popen([sys.executable, "-c", f"""
import os, subprocess, sys, time
env = dict(os.environ, BERT_STOP_WITH_PARENT=str(os.getpid()))
with open({str(out)!r}, "w") as out:
    subprocess.Popen([{servers.folder + "/python"!r}, "-m", "tests.fork_probe", "--then=wait"],
                     env=env, stdout=out, stderr=subprocess.DEVNULL)
time.sleep(3600)
"""], cwd=REPO, env=ENV)
    deadline = time.monotonic() + 3600
    while not out.read_text():
        assert orchestrator.poll() is None and time.monotonic() < deadline
        time.sleep(0.05)
    stage = json.loads(out.read_text())
    assert stage["parent"] in [server.process.pid for server in servers.servers]
    assert "BERT_STOP_WITH_PARENT" not in stage["environ"]
    orchestrator.kill()
    orchestrator.wait()
    while _alive(stage["pid"]):
        assert time.monotonic() < deadline
        time.sleep(0.05)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in "ZX"
    except OSError:
        return False


def test_a_forked_commands_pipes_are_read_while_it_runs(servers):
    """Its PIPE output is a pipe, as Popen's: a line is read while the command still runs."""
    forked = servers.start("tests.fork_probe", ["--then=wait"], subprocess.PIPE,
                           subprocess.PIPE, False)
    assert lines_until(forked.stderr, "^on stderr$") == "on stderr\n"
    assert forked.poll() is None
    forked.kill()
    stdout, stderr = forked.communicate()
    assert forked.returncode == -signal.SIGKILL
    assert json.loads(stdout)["pid"] == forked.pid and stderr == ""
