"""official/training/record_errors.py: damaged TFRecord files found and named with the offset;
token ids beyond vocab_size stopped in the input pipeline."""

import numpy as np
import pytest
import tensorflow as tf

from official.training import record_errors


def write(path, records):
    with tf.io.TFRecordWriter(str(path)) as writer:
        for record in records:
            writer.write(record)


def test_damage_is_found_with_its_offset(tmp_path):
    records = [bytes([i]) * 100 for i in range(20)]
    write(tmp_path / "whole.tfrecord", records)
    raw = (tmp_path / "whole.tfrecord").read_bytes()
    # Each record is framed by 16 bytes: length (8), its checksum (4), data, its checksum (4).
    (tmp_path / "cut.tfrecord").write_bytes(raw[:5 * 116 + 50])
    flipped = bytearray(raw)
    flipped[7 * 116 + 12 + 3] ^= 0xFF  # a byte of record 7's data
    (tmp_path / "flipped.tfrecord").write_bytes(bytes(flipped))
    assert record_errors.damage(str(tmp_path / "whole.tfrecord")) is None
    assert record_errors.damage(str(tmp_path / "cut.tfrecord")) == \
        f"truncated record at byte {5 * 116}"
    # A bad data checksum is reported at the data's offset, 12 bytes into the record.
    assert record_errors.damage(str(tmp_path / "flipped.tfrecord")) == \
        f"corrupted record at byte {7 * 116 + 12}"

    files = [str(tmp_path / "whole.tfrecord"), str(tmp_path / "flipped.tfrecord")]
    with pytest.raises(ValueError, match=rf"^{files[1]}: corrupted record at byte 824: the file"):
        with record_errors.naming_bad_records(files):
            for _ in tf.data.TFRecordDataset(files):
                pass


def test_token_ids_beyond_vocab_size_stop_the_batch_that_holds_them():
    ids = np.array([[1, 5, 9], [2, 3, 4], [1, 12, 2]], np.int32)
    dataset = tf.data.Dataset.from_tensor_slices({"input_word_ids": ids}).batch(1).map(
        lambda features: record_errors.checked_token_ids(features, vocab_size=10))
    iterator = iter(dataset)
    np.testing.assert_array_equal(next(iterator)["input_word_ids"], ids[:1])
    next(iterator)
    with pytest.raises(ValueError, match=r"^a record of a.tfrecord holds token id 12, but "
                                         r"cfg.json says vocab_size=10"):
        with record_errors.naming_bad_records(["a.tfrecord"], "cfg.json"):
            next(iterator)
