"""data_prep's entry points (create_pretraining_data, build_vocab) given bad input or stopped, run
as a user runs them (subprocesses).

Bad input: one line naming the flag or file and what is wrong, last on stderr, exit status 1, no
traceback, and the output place as it was (nothing created, nothing overwritten). Output places
are refused before any input is read, so these runs take about a second each.

Stopped: SIGTERM to the coordinator, ctrl-C (SIGINT to the whole process group) and SIGKILL, each
once a multi-worker run is under way. The first two end with 143 and 130, one line saying that
rerunning finishes the job, no traceback, no process of the run left, no temp file, and nothing
in output_dir changing after the exit; a SIGKILLed coordinator's workers die with it. Then the
same command, rerun, makes the bytes of an uninterrupted run. These runs share one corpus and one
output folder (each interrupted run is a rerun of the previous one), since every worker spends
seconds loading TensorFlow.
"""

import json
import os
import shutil
import signal
import time

import pytest

from official.pretraining_shards import SHARD_NAME, SUMMARY_FILE
from tests.cli import REPO, BackgroundRun, refused, run_module, snapshot, succeeded

VOCAB = os.path.join(REPO, "data", "vocab", "uncased_vocab.txt")
GUTENBERG = os.path.join(REPO, "data", "gutenberg", "corpus.txt")
CREATE = "data_prep.create_pretraining_data"
BUILD_VOCAB = "data_prep.build_vocab"
TEXT = ("The cat sat on the mat.\nIt was a sunny day.\n\n"
        "Another document starts here.\nIt talks about running and walking.\n\n")
# A place no process may write in, root included: sysfs makes no regular files (the probe of
# official/output_paths.py sees it).
UNWRITABLE = "/sys/bert_out"


@pytest.fixture
def corpus(tmp_path):
    path = tmp_path / "corpus.txt"
    path.write_text(TEXT)
    return path


@pytest.fixture
def a_file(tmp_path):
    path = tmp_path / "a_file"
    path.write_text("keep me")
    return path


# --- create_pretraining_data: output places and flags refused before any work --------------------

def _create(corpus, *flags):
    return run_module(CREATE, f"--input_file={corpus}", f"--vocab_file={VOCAB}", *flags)


def test_output_dir_that_is_a_file(corpus, a_file):
    before = snapshot(a_file)
    refused(_create(corpus, f"--output_dir={a_file}"),
            f"--output_dir={a_file}", "is a file, not a directory")
    assert snapshot(a_file) == before


def test_output_dir_inside_a_file(corpus, a_file):
    before = snapshot(a_file)
    refused(_create(corpus, f"--output_dir={a_file}/records"),
            f"--output_dir={a_file}/records", f"is inside the file {a_file}")
    assert snapshot(a_file) == before


def test_output_dir_that_cannot_be_written(corpus):
    refused(_create(corpus, f"--output_dir={UNWRITABLE}"),
            f"--output_dir={UNWRITABLE}", "cannot write in /sys")
    assert not os.path.exists(UNWRITABLE)


def test_output_file_that_is_a_directory(corpus, tmp_path):
    """Every file of --reproduce_original's comma list is checked, before the first is made."""
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "inside.txt").write_text("keep me")
    first = tmp_path / "first.tfrecord"
    refused(_create(corpus, "--reproduce_original", f"--output_file={first},{folder}"),
            f"--output_file={folder}", "is a directory, not a file")
    assert snapshot(folder) == {"inside.txt": b"keep me"}
    assert not first.exists()


def test_output_file_that_cannot_be_written(corpus):
    refused(_create(corpus, "--reproduce_original", f"--output_file={UNWRITABLE}.tfrecord"),
            f"--output_file={UNWRITABLE}.tfrecord", "cannot write in /sys")
    assert not os.path.exists(f"{UNWRITABLE}.tfrecord")


@pytest.mark.parametrize("flag", ["num_shards", "num_workers"])
def test_counts_below_one(corpus, tmp_path, flag):
    refused(_create(corpus, f"--output_dir={tmp_path / 'out'}", f"--{flag}=0"),
            f"--{flag}=0: must be at least 1")
    assert not (tmp_path / "out").exists()


def test_input_that_is_a_directory(tmp_path):
    (tmp_path / "texts").mkdir()
    refused(_create(tmp_path / "texts", f"--output_dir={tmp_path / 'out'}"),
            f"{tmp_path / 'texts'}: is a directory, not a text file")
    assert not (tmp_path / "out").exists()


def test_an_empty_corpus_leaves_the_earlier_output_alone(tmp_path):
    """Refused before the earlier run's output is removed (a rerun replaces it only once the
    inputs are known to be usable)."""
    out = tmp_path / "out"
    out.mkdir()
    (out / SUMMARY_FILE).write_text("{}")
    (out / "pretraining-00000-of-00001.tfrecord").write_bytes(b"earlier")
    before = snapshot(out)
    blank = tmp_path / "blank.txt"
    blank.write_text("\n  \n\n")
    refused(_create(blank, f"--output_dir={out}"), f"{blank}: no document with any text")
    assert snapshot(out) == before


# --- build_vocab -------------------------------------------------------------------------------

def _build_vocab(corpus, *flags):
    return run_module(BUILD_VOCAB, f"--input_file={corpus}", *flags)


def test_vocab_output_file_that_is_a_directory(corpus, tmp_path):
    (tmp_path / "folder").mkdir()
    refused(_build_vocab(corpus, f"--output_file={tmp_path / 'folder'}"),
            f"--output_file={tmp_path / 'folder'}", "is a directory, not a file")
    assert snapshot(tmp_path / "folder") == {}


def test_vocab_output_file_inside_a_file(corpus, a_file):
    refused(_build_vocab(corpus, f"--output_file={a_file}/vocab.txt"),
            f"--output_file={a_file}/vocab.txt", f"is inside the file {a_file}")
    assert snapshot(a_file) == {"": b"keep me"}


def test_vocab_output_file_that_cannot_be_written(corpus):
    refused(_build_vocab(corpus, f"--output_file={UNWRITABLE}.txt"),
            f"--output_file={UNWRITABLE}.txt", "cannot write in /sys")
    assert not os.path.exists(f"{UNWRITABLE}.txt")


def test_min_piece_count_below_one(corpus, tmp_path):
    refused(_build_vocab(corpus, f"--output_file={tmp_path / 'vocab.txt'}",
                         "--min_piece_count=0"), "--min_piece_count=0: must be at least 1")
    assert not (tmp_path / "vocab.txt").exists()


def test_a_short_vocab_says_why_and_how_to_get_more(tmp_path):
    """A corpus with too few pieces seen --min_piece_count times: the last line says how many
    tokens were written, fewer than asked, why, and what gives more (that a lower
    --min_piece_count does is tests/test_build_vocab.py's)."""
    corpus = tmp_path / "corpus.txt"
    # Each word a different number of times: "w1" once ... "w30" thirty times.
    corpus.write_text("".join(f"w{n} " * n + "\n" for n in range(1, 31)))
    vocab = tmp_path / "vocab.txt"
    result = succeeded(_build_vocab(corpus, f"--output_file={vocab}", "--vocab_size=200",
                                    "--min_piece_count=3"))
    last = result.stderr.strip().splitlines()[-1]
    size = len(vocab.read_text().splitlines())
    assert size < 200
    assert last.startswith(f"wrote {size} tokens to {vocab}, fewer than --vocab_size=200: "
                           f"every piece seen at least "), last
    assert last.endswith("(--min_piece_count=3); more text or a lower --min_piece_count gives "
                         "more tokens"), last


# --- create_pretraining_data stopped -------------------------------------------------------------

NUM_SHARDS = 4
FLAGS = ["--max_seq_length=128", "--max_predictions_per_seq=20", "--dupe_factor=2",
         f"--num_shards={NUM_SHARDS}"]


def _names(where) -> list[str]:
    """The names in a folder, or in a listing or snapshot of one."""
    return os.listdir(where) if isinstance(where, (str, os.PathLike)) else list(where)


def _temp_files(where) -> list[str]:
    return [name for name in _names(where) if name.endswith(".tmp")]


def _shards(where) -> list[str]:
    return sorted(name for name in _names(where) if SHARD_NAME.fullmatch(name))


def _output(folder) -> dict:
    """The shards' bytes and the summary without its timing: what a rerun must reproduce."""
    found = {name: data for name, data in snapshot(folder).items()
             if SHARD_NAME.fullmatch(name)}
    with open(os.path.join(folder, SUMMARY_FILE), encoding="utf-8") as f:
        summary = json.load(f)
    del summary["seconds"]
    found[SUMMARY_FILE] = summary
    return found


@pytest.fixture(scope="module", autouse=True)
def _no_run_left():
    yield
    BackgroundRun.stop_all()


@pytest.fixture(scope="module")
def stopped(tmp_path_factory):
    """{case: (result, facts)}: an uninterrupted run, then the same command in another folder
    (with two workers) stopped by SIGTERM, by ctrl-C and by SIGKILL in turn, then run to the
    end."""
    root = tmp_path_factory.mktemp("stopped")
    corpus = root / "corpus.txt"
    with open(corpus, "wb") as f:  # ~3 MB: seconds of work for two workers
        for _ in range(2):
            with open(GUTENBERG, "rb") as part:
                shutil.copyfileobj(part, f)
    logs = root / "logs"
    logs.mkdir()

    def command(out, workers=2):
        return [f"--input_file={corpus}", f"--vocab_file={VOCAB}", f"--output_dir={out}",
                f"--num_workers={workers}", *FLAGS]

    results = {}
    clean = root / "clean"
    # One process (one TensorFlow start, not two): the bytes do not depend on the workers.
    run = BackgroundRun(CREATE, logs, *command(clean, workers=1))
    results["clean"] = (run.finish(), {"output": _output(clean)})

    out = root / "out"
    out.mkdir()
    # An earlier complete run with another --num_shards, and a file of the user's own.
    (out / SUMMARY_FILE).write_text('{"num_shards": 2}')
    (out / "pretraining-00001-of-00002.tfrecord").write_bytes(b"an earlier run's shard")
    (out / "notes.txt").write_text("mine")

    for case, stop_signal, to_group in [("SIGTERM", signal.SIGTERM, False),
                                        ("SIGINT", signal.SIGINT, True),  # as ctrl-C does
                                        ("SIGKILL", signal.SIGKILL, False)]:
        os.makedirs(logs / case)
        run = BackgroundRun(CREATE, logs / case, *command(out))
        run.wait_until(lambda: _temp_files(out))
        facts = {"names_at_start": sorted(os.listdir(out))}
        if case == "SIGTERM":  # Once a shard is complete: the old bug moved more in later.
            run.wait_until(lambda: _shards(out) and _temp_files(out))
        facts["under_way"] = sorted(os.listdir(out))
        (os.killpg if to_group else os.kill)(run.pid, stop_signal)
        result = run.finish()
        facts["live_at_exit"] = run.live_processes()
        if case == "SIGKILL":
            killed = time.monotonic()
            while run.live_processes() and time.monotonic() < killed + 10:
                time.sleep(0.05)
            facts.update(live=run.live_processes(), gone_after=time.monotonic() - killed)
        facts["at_exit"] = snapshot(out)
        time.sleep(1.5)
        facts["later"] = snapshot(out)
        results[case] = (result, facts)

    run = BackgroundRun(CREATE, logs, *command(out))
    results["rerun"] = (run.finish(), {"output": _output(out), "names": sorted(os.listdir(out))})
    return results


def test_an_uninterrupted_run(stopped):
    result, facts = stopped["clean"]
    succeeded(result)
    assert len(facts["output"]) == NUM_SHARDS + 1


def test_a_rerun_first_removes_the_earlier_runs_output(stopped):
    """Before any work: the earlier summary.json and shards (another --num_shards) are gone, so
    the folder is visibly incomplete; the user's own file stays."""
    result, facts = stopped["SIGTERM"]
    assert "notes.txt" in facts["names_at_start"]
    assert SUMMARY_FILE not in facts["names_at_start"]
    assert "pretraining-00001-of-00002.tfrecord" not in facts["names_at_start"]
    assert (f"removed the earlier run's output ({SUMMARY_FILE} and 1 shard files) before "
            f"writing this run's") in result.stderr


@pytest.mark.parametrize("case,status", [("SIGTERM", 143), ("SIGINT", 130)])
def test_stopped_runs_end_at_once_with_their_workers(stopped, case, status):
    result, facts = stopped[case]
    refused(result, f"stopped by {case}", "is incomplete (no summary.json)",
            "rerunning the same command finishes the job", code=status)
    assert facts["live_at_exit"] == []
    assert facts["at_exit"] == facts["later"]  # nothing moved in after the exit
    # Complete shards may stay; no temp file, no summary.json.
    assert sorted(facts["at_exit"]) == ["notes.txt"] + _shards(facts["at_exit"])
    assert all(name.endswith(f"-of-{NUM_SHARDS:05d}.tfrecord")
               for name in _shards(facts["at_exit"]))
    assert _temp_files(facts["under_way"])  # It was stopped while making shards.
    if case == "SIGTERM":
        assert _shards(facts["under_way"])


def test_a_killed_coordinators_workers_die_with_it(stopped):
    result, facts = stopped["SIGKILL"]
    assert result.returncode == -signal.SIGKILL
    assert facts["live"] == [] and facts["gone_after"] < 5
    assert facts["at_exit"] == facts["later"]  # Its temp files stay, for the rerun to delete.


def test_the_rerun_makes_the_uninterrupted_runs_bytes(stopped):
    result, facts = stopped["rerun"]
    succeeded(result)
    assert facts["output"] == stopped["clean"][1]["output"]
    # What the interrupted runs left (temp files of the killed workers included) is gone.
    assert facts["names"] == ["notes.txt"] + sorted(
        f"pretraining-{i:05d}-of-{NUM_SHARDS:05d}.tfrecord" for i in range(NUM_SHARDS)) + [
        SUMMARY_FILE]


@pytest.fixture(scope="module")
def stopped_in_one_process(tmp_path_factory):
    """{case: (result, what is in its output folder, processes left)}: the fast generator with
    one worker, stopped by SIGTERM while it writes its shard, and --reproduce_original
    (everything in memory, written at the end) stopped by ctrl-C while it works; run together."""
    root = tmp_path_factory.mktemp("one_process")
    folders = {case: root / case for case in ("fast", "reproduce")}
    for folder in folders.values():
        folder.mkdir()
    out = folders["fast"] / "out"
    reproduced = [folders["reproduce"] / "out" / "a.tfrecord",
                  folders["reproduce"] / "out" / "b.tfrecord"]
    reproduced[0].parent.mkdir()
    runs = {
        "fast": BackgroundRun(CREATE, folders["fast"], f"--input_file={GUTENBERG}",
                              f"--vocab_file={VOCAB}", f"--output_dir={out}", "--num_shards=1",
                              "--dupe_factor=3"),
        "reproduce": BackgroundRun(CREATE, folders["reproduce"], "--reproduce_original",
                                   f"--input_file={GUTENBERG}", f"--vocab_file={VOCAB}",
                                   f"--output_file={reproduced[0]},{reproduced[1]}")}
    runs["fast"].wait_until(lambda: out.is_dir() and _temp_files(out))
    os.kill(runs["fast"].pid, signal.SIGTERM)
    runs["reproduce"].wait_until(lambda: "Reading 1 input file(s)" in runs["reproduce"].stderr())
    os.killpg(runs["reproduce"].pid, signal.SIGINT)
    results = {}
    for case, run in runs.items():
        result = run.finish()
        results[case] = (result, snapshot(out if case == "fast" else reproduced[0].parent),
                         run.live_processes())
    return results


def test_a_single_worker_run_stopped_by_sigterm(stopped_in_one_process):
    """--num_workers=1: the shard being written is not left behind, half or whole."""
    result, left, live = stopped_in_one_process["fast"]
    refused(result, "stopped by SIGTERM", "rerunning the same command finishes the job",
            code=143)
    assert left == {} and live == []


def test_reproduce_original_stopped_by_ctrl_c(stopped_in_one_process):
    result, left, live = stopped_in_one_process["reproduce"]
    out = stopped_in_one_process["reproduce"][0].args[-1].split("=", 1)[1].split(",")
    refused(result, "stopped by SIGINT", f"{out[0]}, {out[1]} not written",
            "rerunning the same command finishes the job", code=130)
    assert "KeyboardInterrupt" not in result.stderr
    assert left == {} and live == []
