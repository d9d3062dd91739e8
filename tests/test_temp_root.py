"""tests/temp_root.py: each pytest process's temporary folder, and the sweep of those whose
process ended without removing its own (SIGKILL)."""

import os
import subprocess
import sys
import tempfile

from tests import temp_root


def _ended_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def test_the_folder_of_an_ended_process_is_removed_and_a_living_ones_kept(tmp_path):
    ended = tmp_path / f"bert-tests-{_ended_pid()}-abc"
    (ended / "autograph").mkdir(parents=True)
    (ended / "autograph" / "source.py").write_text("x = 1\n")
    living = tmp_path / f"bert-tests-{os.getppid()}-def"
    living.mkdir()
    other = tmp_path / "bert-tests-notapid"
    other.mkdir()

    made = temp_root.own_folder(str(tmp_path))

    assert not ended.exists()
    assert living.is_dir() and other.is_dir()
    assert os.path.basename(made).startswith(f"bert-tests-{os.getpid()}-")
    assert sorted(os.listdir(tmp_path)) == sorted(
        [living.name, other.name, os.path.basename(made)])


def test_this_suites_folder_is_the_temporary_folder_and_names_this_process():
    name = os.path.basename(tempfile.gettempdir())
    assert name.startswith(f"bert-tests-{os.getpid()}-")
    assert os.environ["TMPDIR"] == tempfile.gettempdir()
