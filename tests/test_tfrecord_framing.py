"""data_prep/tfrecord_framing.py writes the bytes tf.io.TFRecordWriter writes."""

import io

import numpy as np
import tensorflow as tf

from data_prep.tfrecord_framing import write_records


def test_the_bytes_are_tensorflows(tmp_path):
    rng = np.random.default_rng(0)
    records = [b"", b"x", rng.bytes(127), rng.bytes(128), rng.bytes(70_000), b"x"]
    path = str(tmp_path / "theirs.tfrecord")
    with tf.io.TFRecordWriter(path) as writer:
        for record in records:
            writer.write(record)
    ours = io.BytesIO()
    write_records(ours, records[:3])
    write_records(ours, records[3:])  # appended: one file written chunk by chunk
    with open(path, "rb") as f:
        assert ours.getvalue() == f.read()
    (tmp_path / "ours.tfrecord").write_bytes(ours.getvalue())
    read = [r.numpy() for r in tf.data.TFRecordDataset(str(tmp_path / "ours.tfrecord"))]
    assert read == records
