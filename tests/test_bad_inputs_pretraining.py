"""run_pretraining with bad input and faults, as a user meets them: one line, no traceback, nothing
lost or left behind.

Each case is a subprocess (tests/cli.py), on the records conftest.pretraining_records makes from
the shipped sample (a tiny model, seq 32, 5 predictions). What each case asserts:
  - bad input: the exit status, a last stderr line naming the flag or file and what is wrong,
    no traceback, and the output location as it was (tests.cli.snapshot before and after);
  - faults (a diverging loss, SIGTERM, ctrl-C, SIGKILL in the middle of a save): the checkpoints
    that were whole before the fault are kept byte for byte, nothing written after it, and a
    rerun of the same command goes on from there.
"""

import os
import re
import shutil
import signal
import subprocess
import time

import numpy as np
import pytest
import tensorflow as tf

from data_prep import fast_generation
from data_prep import pretraining_examples as pe
from data_prep.pretraining_options import PretrainingDataOptions
from official import checkpoints
from official.configs import BertConfig
from official.training.pretraining_input import changed_files, fingerprint
from tests.cli import (
    ENV,
    PATIENCE,
    REPO,
    lines_until,
    outputs,
    refused,
    run_modules,
    snapshot,
    start,
    succeeded,
)
from tests.pretraining_helpers import one_layer

SEQ, PREDICTIONS = 32, 5
# The environment of a user's shell: no TF_CPP_MIN_LOG_LEVEL (tests/cli.py's ENV sets one).
USER_ENV = {k: v for k, v in ENV.items() if k != "TF_CPP_MIN_LOG_LEVEL"}
ABSL_PREFIX = re.compile(r"^[IWEF]\d{4} \d\d:\d\d:\d\d\.\d+ +\d+ \S+:\d+\]")


def assert_plain_lines(stderr, steps):
    """What a user reads: the progress as bare lines, no absl prefix, no TensorFlow C++ notes
    (official/console.py)."""
    lines = stderr.strip().splitlines()
    assert any(line.startswith(f"step {steps}/{steps}  mlm_acc") for line in lines), lines
    assert not [line for line in lines if ABSL_PREFIX.match(line)]
    for note in ("oneDNN", "cuda", "absl::InitializeLog", "cpu_feature_guard"):
        assert note not in stderr, note


def pretrain_flags(data, output_dir, *flags):
    return [f"--input_file={data['input_file']}", f"--output_dir={output_dir}",
            f"--bert_config_file={data['bert_config_file']}", f"--max_seq_length={SEQ}",
            f"--max_predictions_per_seq={PREDICTIONS}", "--train_batch_size=8",
            "--learning_rate=1e-3", "--num_warmup_steps=0", *flags]


def pretrain(data, output_dir, *flags, env=None):
    return outputs(start("run_scripts.run_pretraining", *pretrain_flags(data, output_dir, *flags),
                         env=env))


def checkpoint_steps(output_dir) -> list[int]:
    return sorted(int(name[len("model.ckpt-"):-len(".index")]) for name in os.listdir(output_dir)
                  if re.fullmatch(r"model\.ckpt-\d+\.index", name))


def checkpoint_files(output_dir) -> dict:
    """The checkpoints' own files (not TensorBoard's events, which a rerun appends to)."""
    return {name: data for name, data in snapshot(output_dir).items()
            if name.startswith("model.ckpt-") or name in ("checkpoint", "bert_config.json")}


@pytest.fixture(scope="module")
def finished_run(pretraining_records, tmp_path_factory):
    """A finished 4-step run, (its output_dir, its result): model.ckpt-2 and model.ckpt-4 in
    its output_dir. Its --input_file is the generator's output folder, and it runs as a user's
    shell runs it, TF_CPP_MIN_LOG_LEVEL unset: one process for the facts of
    test_the_generators_output_folder_is_an_input_file too."""
    out = tmp_path_factory.mktemp("finished") / "out"
    folder = os.path.dirname(pretraining_records["input_file"])
    result = succeeded(pretrain(dict(pretraining_records, input_file=folder), out, "--do_train",
                                "--num_train_steps=4", "--save_checkpoints_steps=2",
                                "--iterations_per_loop=1", "--log_steps=1", env=USER_ENV))
    assert checkpoint_steps(out) == [2, 4]
    return out, result


@pytest.fixture(scope="module")
def finished(finished_run):
    """The finished run's output_dir."""
    return finished_run[0]


@pytest.fixture(scope="module")
def light(pretraining_records, tmp_path_factory):
    """The records with their model at one layer (tests/pretraining_helpers.py), for the runs
    that neither resume from the finished run nor name its model."""
    return one_layer(pretraining_records, tmp_path_factory.mktemp("one_layer"))


def copy_of(finished, tmp_path):
    out = tmp_path / "out"
    shutil.copytree(finished, out)
    return out


def test_a_diverging_loss_stops_at_its_step_and_keeps_every_earlier_checkpoint(
        pretraining_records, finished, tmp_path):
    out = copy_of(finished, tmp_path)
    before = checkpoint_files(out)
    result = pretrain(pretraining_records, out, "--do_train", "--num_train_steps=20",
                      "--save_checkpoints_steps=1", "--iterations_per_loop=1",
                      "--learning_rate=1e10")
    line = refused(result, "run_pretraining: ", "not finite", "training stopped without saving")
    step = int(re.search(r"at step (\d+)", line).group(1))
    assert 4 < step < 20
    # Every checkpoint from before the divergence is whole and unchanged; none from its step on.
    after = checkpoint_files(out)
    for name, data in before.items():
        if name != "checkpoint":
            assert after[name] == data, name
    steps = checkpoint_steps(out)
    assert steps[:2] == [2, 4] and max(steps) < step
    assert f"model.ckpt-{max(steps)}" in line
    for kept in steps:
        weights = checkpoints.read_weights(str(out / f"model.ckpt-{kept}"))
        assert all(np.isfinite(v).all() for v in weights.values()), kept


def test_a_rerun_with_another_config_is_refused_and_changes_nothing(pretraining_records,
                                                                    finished, tmp_path):
    out = copy_of(finished, tmp_path)
    wider = BertConfig.from_json_file(pretraining_records["bert_config_file"])
    wider = BertConfig(**dict(wider.to_dict(), hidden_size=64, intermediate_size=128))
    wider.to_json_file(str(tmp_path / "wider.json"))
    before = snapshot(out)
    result = pretrain(dict(pretraining_records, bert_config_file=str(tmp_path / "wider.json")),
                      out, "--do_train", "--num_train_steps=8")
    refused(result, f"{out}/bert_config.json", f"--bert_config_file={tmp_path / 'wider.json'}",
            "hidden_size (32 vs 64)", "intermediate_size (64 vs 128)", "nothing was changed")
    assert snapshot(out) == before
    # The teardown warnings TensorFlow used to print after the error are gone.
    assert "Value in checkpoint could not be found" not in result.stderr


def all_threads_stopped(pid) -> bool:
    """Whether every thread of process `pid` is stopped (SIGSTOP) or gone: what it has written
    stays as it is until it runs again."""
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue  # a thread that ended
        if state not in "tTZX":
            return False
    return True


def test_sigkill_in_the_middle_of_a_save_leaves_nothing_a_rerun_trips_over(light, tmp_path):
    """A SIGKILL loses only the steps after the last whole checkpoint, and what it cut short
    (TensorFlow's model.ckpt-N_temp/ folder) is removed by the rerun."""
    out = tmp_path / "out"
    flags = pretrain_flags(light, out, "--do_train", "--num_train_steps=12",
                           "--save_checkpoints_steps=1", "--iterations_per_loop=1")
    # A save writes model.ckpt-N_temp/ and then merges it into model.ckpt-N.*. When such a
    # folder is seen (after the first whole checkpoint, so that there is one to resume from),
    # the run is stopped (SIGSTOP) and looked at again: the save still in progress, it is
    # killed there; already done, it goes on (SIGCONT) to its next save. One run, a save at
    # every step: one of its 11 saves after the first is soon caught (the first, as a rule).
    process = start("run_scripts.run_pretraining", *flags, stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL)
    deadline = time.time() + PATIENCE
    while process.poll() is None:
        assert time.time() < deadline, "the run never ended"
        names = os.listdir(out) if os.path.isdir(out) else []
        if "checkpoint" in names and any(name.endswith("_temp") for name in names):
            process.send_signal(signal.SIGSTOP)
            while not all_threads_stopped(process.pid):
                assert time.time() < deadline, "the run never stopped"
            if any(name.endswith("_temp") for name in os.listdir(out)):
                process.kill()
                break
            process.send_signal(signal.SIGCONT)
        time.sleep(0.002)
    process.wait(timeout=PATIENCE)
    assert process.returncode == -signal.SIGKILL, "never caught a save in progress"
    assert [name for name in os.listdir(out) if name.endswith("_temp")]
    assert checkpoint_steps(out)
    # The state file names the newest whole checkpoint: the one the rerun must resume from.
    resumed_from = int(tf.train.latest_checkpoint(str(out)).rsplit("-", 1)[1])
    result = succeeded(pretrain(light, out, "--do_train", "--num_train_steps=12",
                                "--save_checkpoints_steps=1", "--iterations_per_loop=1"))
    assert f"Resuming from {out}/model.ckpt-{resumed_from} at step {resumed_from}" in \
        result.stderr
    assert not [name for name in os.listdir(out) if "_temp" in name]
    assert max(checkpoint_steps(out)) == 12


def test_ctrl_c_saves_one_line_and_the_rerun_resumes(light, tmp_path):
    """As SIGTERM does (test_run_pretraining), with 130, what a shell expects of ctrl-C."""
    out = tmp_path / "out"
    process = start("run_scripts.run_pretraining",
                    *pretrain_flags(light, out, "--do_train", "--num_train_steps=100000",
                                    "--save_checkpoints_steps=100000",
                                    "--iterations_per_loop=1", "--log_steps=1"),
                    stdout=subprocess.DEVNULL)
    deadline = time.time() + PATIENCE
    while not (out / "train").exists():
        assert process.poll() is None and time.time() < deadline, process.stderr.read()[-3000:]
        time.sleep(0.1)
    said = lines_until(process.stderr, r"\bstep [1-9]\d*/")  # a step is done
    process.send_signal(signal.SIGINT)
    _, rest = process.communicate(timeout=PATIENCE)
    stderr = said + rest
    result = subprocess.CompletedProcess(process.args, process.returncode, "", stderr)
    line = refused(result, "stopped by SIGINT at step", "the checkpoint is saved", code=130)
    step = int(re.search(r"at step (\d+)", line).group(1))
    # Saved at the step it stopped at (a rerun resumes from it: test_run_pretraining's SIGTERM).
    assert step >= 1 and checkpoint_steps(out) == [step]
    assert tf.train.latest_checkpoint(str(out)).endswith(f"model.ckpt-{step}")


def test_a_damaged_record_file_is_named_with_the_offset(light, tmp_path):
    """A shard cut short a tenth of the way in (an interrupted copy; its first record intact).
    tests/test_record_errors.py has a flipped byte too."""
    folder = tmp_path / "records"
    shutil.copytree(os.path.dirname(light["input_file"]), folder)
    damaged = folder / "pretraining-00001-of-00002.tfrecord"
    damaged.write_bytes(damaged.read_bytes()[:damaged.stat().st_size // 10])
    out = tmp_path / "out"
    result = pretrain(dict(light, input_file=str(folder / "*.tfrecord")), out,
                      "--do_train", "--num_train_steps=200")
    refused(result, f"run_pretraining: {damaged}: truncated record at byte", "the file is damaged")
    assert checkpoint_steps(out) == []


def test_records_regenerated_under_a_saved_input_are_named_and_restart_input_goes_on(
        light, tmp_path):
    """A checkpoint's input iterator holds its place in the record files: after they are
    regenerated (another seed) a resume is refused, naming them, before anything is written
    (it used to read the new files at the old places: 'a record file is damaged', naming no
    file, or here, without a word); --restart_input goes on from the checkpoint with the input
    started afresh."""
    folder = tmp_path / "records"
    shutil.copytree(os.path.dirname(light["input_file"]), folder)
    data = dict(light, input_file=str(folder))
    out, restarted = tmp_path / "out", tmp_path / "restarted"
    succeeded(pretrain(data, out, "--do_train", "--num_train_steps=2"))
    options = PretrainingDataOptions(max_seq_length=SEQ, max_predictions_per_seq=PREDICTIONS,
                                     dupe_factor=1, random_seed=5)
    fast_generation.generate([os.path.join(REPO, "tests", "data", "pretraining_sample.txt")],
                             str(folder), light["vocab_file"], True, options,
                             num_shards=2)
    shutil.copytree(out, restarted)
    before = snapshot(out)
    resumed, restarted_run = run_modules(  # side by side, each in its own output_dir
        ["run_scripts.run_pretraining", *pretrain_flags(data, out, "--do_train",
                                                        "--num_train_steps=4")],
        ["run_scripts.run_pretraining", *pretrain_flags(data, restarted, "--do_train",
                                                        "--num_train_steps=4",
                                                        "--restart_input")])
    refused(resumed, f"run_pretraining: --output_dir={out}: model.ckpt-2 saved the input's place "
            "in record files that have changed since", f"{folder}/pretraining-00000-of-00002",
            f"{folder}/pretraining-00001-of-00002", "bytes then", "pass --restart_input",
            "a fresh --output_dir")
    assert snapshot(out) == before  # not even an events file
    assert (f"Resuming from {restarted}/model.ckpt-2 at step 2, the input started afresh"
            in succeeded(restarted_run).stderr)
    assert checkpoint_steps(restarted) == [2, 4]


def test_a_records_fingerprint_tells_every_change_apart(tmp_path):
    """What the refusal above names: a file of another size, one rewritten to the same size,
    one gone and one new (a change in the middle alone goes unseen: the digest reads the ends,
    where a regeneration's first and last records differ)."""
    def flip_byte(path, offset):
        with open(path, "r+b") as f:
            f.seek(offset)
            byte = f.read(1)[0]
            f.seek(offset)
            f.write(bytes([byte ^ 0xFF]))

    paths = [str(tmp_path / name) for name in ("a", "b", "c")]
    for seed, path in enumerate(paths):
        with open(path, "wb") as f:
            f.write(np.random.default_rng(seed).bytes(200_000))
    saved = fingerprint(paths)
    assert changed_files(saved, paths) == []
    with open(paths[0], "ab") as f:
        f.write(b"x")
    flip_byte(paths[1], 100_000)
    assert changed_files(saved, paths) == [f"{paths[0]}: 200000 bytes then, 200001 now"]
    flip_byte(paths[1], 199_999)
    os.rename(paths[2], str(tmp_path / "d"))
    assert changed_files(saved, [*paths[:2], str(tmp_path / "d")]) == [
        f"{paths[0]}: 200000 bytes then, 200001 now", f"{paths[1]}: rewritten, same size",
        f"{paths[2]}: no longer read", f"{tmp_path / 'd'}: not read then"]


def write_records(path, ids_per_record):
    """A pretraining TFRecord file with one record per list of token ids."""
    with pe.open_shard(str(path)) as shard:
        for ids in ids_per_record:
            ids = [2, *ids, 3]
            shard.write(pe.make_example(ids, [0] * len(ids), [1], [ids[1]], 0,
                                        max_seq_length=SEQ, max_predictions_per_seq=PREDICTIONS))


def small_config(tmp_path, vocab_size):
    path = tmp_path / f"vocab_{vocab_size}.json"
    BertConfig(vocab_size=vocab_size, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
               intermediate_size=32, max_position_embeddings=SEQ).to_json_file(str(path))
    return str(path)


def test_records_with_token_ids_beyond_vocab_size_are_refused(pretraining_records, tmp_path):
    # The records' first one already holds ids beyond the config's: refused before any work.
    first, first_config = tmp_path / "first", small_config(tmp_path, 1000)
    # Only a later record does: the input pipeline's check stops training when it is read (on
    # a GPU the embedding gather would silently return zeros for it).
    rng = np.random.default_rng(0)
    rows = [list(rng.integers(5, 100, size=10)) for _ in range(40)]
    rows[25][3] = 150
    write_records(tmp_path / "late.tfrecord", rows)
    late, late_config = tmp_path / "late", small_config(tmp_path, 120)
    in_first, in_late = run_modules(  # side by side
        ["run_scripts.run_pretraining",
         *pretrain_flags(dict(pretraining_records, bert_config_file=first_config), first,
                         "--do_train", "--num_train_steps=2")],
        ["run_scripts.run_pretraining",
         *pretrain_flags(dict(pretraining_records, input_file=str(tmp_path / "late.tfrecord"),
                              bert_config_file=late_config), late, "--do_train",
                         "--num_train_steps=20")])
    refused(in_first, "pretraining-00000-of-00002.tfrecord: its first record holds token id",
            f"{first_config} says vocab_size=1000")
    assert not first.exists()
    refused(in_late, "late.tfrecord holds token id 150", f"{late_config} says vocab_size=120")
    assert checkpoint_steps(late) == []


def test_config_and_init_checkpoint_are_checked_before_any_work(pretraining_records, finished,
                                                                 tmp_path):
    out = tmp_path / "out"
    config = small_config(tmp_path, 30522)
    too_long, misfit = run_modules(  # side by side: neither may write
        ["run_scripts.run_pretraining",
         *pretrain_flags(pretraining_records, out, "--do_train", "--max_seq_length=128")],
        ["run_scripts.run_pretraining",
         *pretrain_flags(dict(pretraining_records, bert_config_file=config), out, "--do_train",
                         f"--init_checkpoint={finished}")])
    refused(too_long, "--max_seq_length=128 is more than the max_position_embeddings=64",
            pretraining_records["bert_config_file"])
    line = refused(misfit, f"{finished} does not fit the model:", "variables unexpected",
                   "variables of another shape")
    assert len(line) < 1000  # counted, the first few named: not hundreds of names
    assert not out.exists()


def test_the_generators_output_folder_is_an_input_file(finished_run):
    """Its shards, as its summary.json lists them (a glob over the folder, which matches
    summary.json too, is refused with this advice: test_pretraining_input). The finished run
    trained on it, run as a user's shell runs it, TF_CPP_MIN_LOG_LEVEL unset, so what it prints
    is checked too."""
    _, result = finished_run
    assert "on 2 file(s)" in result.stderr
    assert_plain_lines(result.stderr, steps=4)


def test_an_output_dir_that_is_a_file_is_refused_before_any_work(pretraining_records,
                                                                  tmp_path):
    (tmp_path / "a_file").write_text("not a folder")
    result = pretrain(pretraining_records, tmp_path / "a_file", "--do_train")
    refused(result, f"--output_dir={tmp_path / 'a_file'}: is a file, not a directory")
    assert (tmp_path / "a_file").read_text() == "not a folder"
