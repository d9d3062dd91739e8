"""Our serializer writes exactly the bytes of protobuf's deterministic serialisation."""

import numpy as np
import pytest
import tensorflow as tf

from data_prep.example_bytes import ExampleSerializer

INTS = ["input_ids", "input_mask", "segment_ids", "masked_lm_positions", "masked_lm_ids",
        "next_sentence_labels"]


def reference(batch, row):
    feature = {}
    for key, values in batch.items():
        if key == "masked_lm_weights":
            feature[key] = tf.train.Feature(float_list=tf.train.FloatList(value=values[row]))
        else:
            feature[key] = tf.train.Feature(int64_list=tf.train.Int64List(value=values[row]))
    example = tf.train.Example(features=tf.train.Features(feature=feature))
    return example.SerializeToString(deterministic=True)


@pytest.mark.parametrize("largest_id", [1, 200, 30522, 2**21 + 5, 2**40, 2**63 - 1])
def test_bytes_equal_deterministic_protobuf(largest_id):
    rng = np.random.default_rng(largest_id % 1000)
    rows = 40
    batch = {
        "input_ids": rng.integers(0, largest_id, (rows, 16), endpoint=True),
        "input_mask": rng.integers(0, 2, (rows, 16)),
        "segment_ids": rng.integers(0, 2, (rows, 16)),
        "masked_lm_positions": rng.integers(0, 16, (rows, 3)),
        "masked_lm_ids": rng.integers(0, largest_id, (rows, 3), endpoint=True),
        "masked_lm_weights": rng.random((rows, 3)).astype(np.float32),
        "next_sentence_labels": rng.integers(0, 2, (rows, 1)),
    }
    records = ExampleSerializer(INTS, ["masked_lm_weights"]).serialize(batch)
    assert len(records) == rows
    for row, record in enumerate(records):
        assert record == reference(batch, row)
        parsed = tf.train.Example.FromString(record)
        assert list(parsed.features.feature["input_ids"].int64_list.value) == list(
            batch["input_ids"][row])


def test_long_rows_need_multi_byte_lengths():
    batch = {"input_ids": np.full((2, 512), 30000), "input_mask": np.ones((2, 512), int),
             "segment_ids": np.zeros((2, 512), int), "masked_lm_positions": np.arange(160)[None]
             .repeat(2, 0), "masked_lm_ids": np.full((2, 160), 999),
             "masked_lm_weights": np.ones((2, 160), np.float32),
             "next_sentence_labels": np.array([[0], [1]])}
    records = ExampleSerializer(INTS, ["masked_lm_weights"]).serialize(batch)
    assert records == [reference(batch, 0), reference(batch, 1)]


def test_negative_values_are_refused():
    with pytest.raises(ValueError, match="input_ids: negative"):
        ExampleSerializer(["input_ids"], []).serialize({"input_ids": np.array([[1, -1]])})
