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


@pytest.mark.parametrize("text,message", [
    ('{"num_shards": "3"}', "field num_shards must be a positive integer, got '3'"),
    ('{"num_shards": 0}', "field num_shards must be a positive integer, got 0"),
    ('{"options": {"objective": "nsp"}}', "field num_shards must be a positive integer, got None"),
    ('{"num_shards": 1, "options": []}', "field options must be an object, got []"),
    ('{"num_shards": 1, "options": {"objective": "mlm"}}',
     "field options.objective must be one of nsp, sop, none, got 'mlm'"),
    ("[1]", "not a JSON object"),
    ('{"num_shards": 1,', "unreadable (Expecting property name"),
])
def test_a_summary_is_checked_field_by_field(tmp_path, text, message):
    (tmp_path / "summary.json").write_text(text)
    with pytest.raises(ValueError) as raised:
        pretraining_shards.read_summary(str(tmp_path))
    assert str(raised.value).startswith(f"{tmp_path}/summary.json: {message}")


def test_a_summary_without_options_is_next_sentence_data(tmp_path):
    (tmp_path / "summary.json").write_text('{"num_shards": 2}')
    assert pretraining_shards.read_summary(str(tmp_path))["options"]["objective"] == "nsp"
