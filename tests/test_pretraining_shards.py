"""official/pretraining_shards.py: run_pretraining's --input_file (globs, or a generator's output
folder) expanded to its files, with no TensorFlow."""

import pytest

from official import pretraining_shards


def test_expand_input_files(tmp_path):
    for name in ("b_1.tfrecord", "a_1.tfrecord", "a_2.tfrecord"):
        (tmp_path / name).write_bytes(b"")
    expanded = pretraining_shards.expand_input_files(
        f"{tmp_path}/b_*, {tmp_path}/a_*,{tmp_path}/a_1.tfrecord")
    assert expanded == [str(tmp_path / n) for n in ("a_1.tfrecord", "a_2.tfrecord", "b_1.tfrecord")]
    with pytest.raises(ValueError, match="c_\\*"):
        pretraining_shards.expand_input_files(f"{tmp_path}/a_*,{tmp_path}/c_*")
    with pytest.raises(ValueError):
        pretraining_shards.expand_input_files(" , ")


def test_a_generators_output_folder_gives_its_shards(tmp_path):
    """create_pretraining_data's --output_dir as --input_file: the shards its summary.json (written
    last) counts, all of them; a folder without one (unfinished, or not its output) is refused."""
    for shard in range(3):
        (tmp_path / f"pretraining-{shard:05d}-of-00003.tfrecord").write_bytes(b"")
    with pytest.raises(ValueError, match=f"--input_file={tmp_path}: a folder without "
                                         f"summary.json"):
        pretraining_shards.expand_input_files(str(tmp_path))
    (tmp_path / "summary.json").write_text('{"num_shards": 3}')
    (tmp_path / "notes.txt").write_text("not a shard")
    assert pretraining_shards.expand_input_files(str(tmp_path)) == [
        str(tmp_path / f"pretraining-{shard:05d}-of-00003.tfrecord") for shard in range(3)]
    (tmp_path / "pretraining-00001-of-00003.tfrecord").unlink()
    with pytest.raises(ValueError, match="lists 3 shards, but 1 are missing, e.g. .*"
                                         "pretraining-00001-of-00003.tfrecord"):
        pretraining_shards.expand_input_files(str(tmp_path))
    with pytest.raises(ValueError, match=f"matches {tmp_path}/summary.json, which is no "
                                         f"TFRecord file: give the folder {tmp_path} itself"):
        pretraining_shards.expand_input_files(f"{tmp_path}/*")
