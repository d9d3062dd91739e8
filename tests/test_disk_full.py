"""A full disk, however the writer says it, ends as one line naming the path, and leaves nothing
half-made behind (official/atomic_files.py; the training loop's saves; the entry points).

The errors are real where a test can make them (/dev/full refuses every write with ENOSPC); the
checkpoint saver's is injected with the message TensorFlow gives on a full tmpfs.
"""

import errno
import os

import numpy as np
import pytest
import tensorflow as tf

from official import command_line
from official.atomic_files import atomic_folder, atomic_path, disk_full, open_atomically
from tests import distributed_worker

# What SaveV2 raised on a full 3 MB tmpfs (the first line of its message).
SAVER_MESSAGE = ("{{function_node __wrapped__SaveV2_dtypes_3_device_/job:localhost/replica:0/task"
                 ":0/device:CPU:0}} {temp}/part-00000-of-00001.data-00000-of-00001.tempstate16658"
                 "74544565170791; No space left on device [Op:SaveV2]")


def _raised(write) -> BaseException:
    try:
        write()
    except BaseException as e:  # the error itself is what is tested
        return e
    raise AssertionError("the write did not fail")


def _dev_full_errors():
    def python_write():
        with open("/dev/full", "w") as f:
            f.write("x" * 100_000)

    def numpy_save():
        with open("/dev/full", "wb") as f:
            np.save(f, np.zeros(100_000, np.float32))

    def tensorflow_write():
        tf.io.write_file("/dev/full", tf.constant("x" * 100_000))

    return [_raised(python_write), _raised(numpy_save), _raised(tensorflow_write)]


def test_each_writers_full_disk_is_one_oserror_naming_the_path(tmp_path):
    for error in _dev_full_errors():
        full = disk_full(error, str(tmp_path / "vectors.npy"))
        assert full.errno == errno.ENOSPC and full.filename == str(tmp_path / "vectors.npy")
        assert command_line.describe(full) == f"{tmp_path}/vectors.npy: no space left on device"
    # Without a path: TensorFlow's message names one (here /dev/full itself, which exists).
    assert disk_full(_dev_full_errors()[2]).filename == "/dev/full"
    # numpy's other form, a short write without an errno.
    short = OSError("1280000 requested and 524256 written")
    assert disk_full(short, "x.npy").filename == "x.npy"
    # Anything else is not a full disk.
    for other in (OSError(errno.EACCES, "Permission denied", "x"), ValueError("bad"),
                  tf.errors.ResourceExhaustedError(None, None, "OOM when allocating tensor")):
        assert disk_full(other, "x") is None


def test_a_saver_message_names_the_nearest_folder_that_still_exists(tmp_path):
    temp = tmp_path / "out" / "model.ckpt-5_temp"
    (tmp_path / "out").mkdir()
    error = tf.errors.ResourceExhaustedError(None, None, SAVER_MESSAGE.format(temp=temp))
    assert disk_full(error).filename == str(tmp_path / "out")


def test_a_failed_atomic_write_leaves_nothing_and_names_the_final_file(tmp_path):
    target = tmp_path / "vectors.npy"
    target.write_bytes(b"the old file")

    with pytest.raises(OSError) as raised:
        with atomic_path(str(target)) as tmp:
            with open(tmp, "wb") as f:
                f.write(b"\x93NUMPY half")
            raise OSError("1280000 requested and 524256 written")
    assert raised.value.errno == errno.ENOSPC and raised.value.filename == str(target)
    assert os.listdir(tmp_path) == ["vectors.npy"] and target.read_bytes() == b"the old file"

    with pytest.raises(ValueError, match="^not a disk$"):  # other errors pass through as they are
        with open_atomically(str(target)) as f:
            f.write("half")
            raise ValueError("not a disk")
    assert os.listdir(tmp_path) == ["vectors.npy"]


def test_a_checkpoint_save_on_a_full_disk_removes_its_partial_folder(tmp_path, monkeypatch):
    output_dir = tmp_path / "out"

    def full_save(self, checkpoint_number=None, **kwargs):
        temp = output_dir / f"model.ckpt-{checkpoint_number}_temp"
        temp.mkdir()
        (temp / "part-00000-of-00001.data-00000-of-00001.tempstate1").write_bytes(b"\0" * 4096)
        raise tf.errors.ResourceExhaustedError(None, None, SAVER_MESSAGE.format(temp=temp))

    monkeypatch.setattr(tf.train.CheckpointManager, "save", full_save)
    with pytest.raises(OSError) as raised:
        distributed_worker.train_model(str(output_dir))
    assert raised.value.errno == errno.ENOSPC and raised.value.filename == str(output_dir)
    assert not [name for name in os.listdir(output_dir) if name.endswith("_temp")]


def test_the_entry_point_says_it_in_one_line(tmp_path, capsys, monkeypatch):
    """official/command_line.py's ending, in this process: console's set-up for a command's
    process (its logging handlers, TensorFlow's import) is left out."""
    class NoConsole:
        def __getattr__(self, name):
            return lambda *args: None

    monkeypatch.setattr(command_line, "console", NoConsole())

    def job(_):
        raise tf.errors.ResourceExhaustedError(
            None, None, f"{tmp_path}/events.tmp123; No space left on device [Op:WriteFile]")

    with pytest.raises(SystemExit) as exited:
        command_line._run("run_classifier", lambda: None, job, [], False, "")
    assert exited.value.code == 1
    assert capsys.readouterr().err.strip().splitlines()[-1] == \
        f"run_classifier: {tmp_path}: no space left on device"


def test_a_folder_written_as_one_is_whole_or_not_there(tmp_path):
    """atomic_folder (probe_layers' probes/): a full disk mid-way names the folder and leaves
    the earlier one as it was and no staging folder; a success replaces the earlier one."""
    target = tmp_path / "probes"
    target.mkdir()
    (target / "old.npz").write_bytes(b"an earlier run's")
    with pytest.raises(OSError) as raised:
        with atomic_folder(str(target)) as staging:
            with open(os.path.join(staging, "layer_00.npz"), "wb") as f:
                f.write(b"half")
            raise OSError(errno.ENOSPC, "No space left on device")
    assert command_line.describe(raised.value) == f"{target}: no space left on device"
    assert sorted(os.listdir(tmp_path)) == ["probes"]
    assert os.listdir(target) == ["old.npz"]
    with atomic_folder(str(target)) as staging:
        with open(os.path.join(staging, "layer_00.npz"), "wb") as f:
            f.write(b"whole")
    assert sorted(os.listdir(tmp_path)) == ["probes"] and os.listdir(target) == ["layer_00.npz"]


def test_a_memory_mapped_cache_takes_its_space_before_it_writes(tmp_path, monkeypatch):
    """A page of a memory map that a full disk cannot back is a SIGBUS, not an error: the
    cache's blocks are reserved first, so a full disk is one line naming the cache file."""
    from official.probing import word_vectors

    def no_space(descriptor, offset, length):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "posix_fallocate", no_space)
    with pytest.raises(OSError) as raised:
        word_vectors.cached_word_vectors(str(tmp_path), "key", [["a", "b"]], None, None,
                                         num_layers=3, hidden=4, max_seq_length=16,
                                         doc_stride=0, batch_size=8, subword_pool="first")
    assert command_line.describe(raised.value) == f"{tmp_path}/key.npy: no space left on device"
    assert os.listdir(tmp_path) == []


def test_a_progress_line_is_whole_or_not_there(tmp_path, monkeypatch):
    """attack_classifier's progress file: a line the disk could hold only half of is cut back,
    and the error names the file (a rerun then goes on after the last whole line)."""
    from data_prep.attack_data import AttackProgress

    progress = AttackProgress(str(tmp_path / "attack.jsonl"), "key")
    progress.start([])
    progress.add({"status": "failed"})
    before = open(progress.path, "rb").read()
    real_write = os.write

    def half_then_full(descriptor, data):
        if real_write(descriptor, bytes(data[:len(data) // 2])) and len(data) > 1:
            raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "write", half_then_full)
    with pytest.raises(OSError) as raised:
        progress.add({"status": "successful", "original": "a good movie"})
    monkeypatch.undo()
    assert command_line.describe(raised.value) == f"{progress.path}: no space left on device"
    assert open(progress.path, "rb").read() == before
    assert progress.done() == [{"status": "failed"}]
