"""Pretraining instances as `tf.train.Example`s, and the TFRecord shards they are written to.

The format itself (feature names, dtypes, lengths, padding) is official/pretraining_records.py,
shared with the input pipeline that reads it; this module builds and writes Examples of it, one
at a time, as the original's `write_instance_to_example_files` does (the `--reproduce_original`
generator).
"""

from __future__ import annotations

import contextlib
from typing import Iterator, Sequence

import tensorflow as tf

from official.atomic_files import atomic_path
from official.pretraining_records import INT_FEATURES


def make_example(input_ids: Sequence[int], segment_ids: Sequence[int],
                 masked_lm_positions: Sequence[int], masked_lm_ids: Sequence[int],
                 next_sentence_label: int, *, max_seq_length: int,
                 max_predictions_per_seq: int) -> tf.train.Example:
    """One instance, unpadded ([CLS] A [SEP] B [SEP] ids and its predictions), as a padded Example.

    Raises:
      ValueError: the instance does not fit the lengths, or paired lists differ in length.
    """
    if len(input_ids) != len(segment_ids) or len(input_ids) > max_seq_length:
        raise ValueError(f"{len(input_ids)} input ids and {len(segment_ids)} segment ids for "
                         f"max_seq_length {max_seq_length}")
    if (len(masked_lm_positions) != len(masked_lm_ids)
            or len(masked_lm_positions) > max_predictions_per_seq):
        raise ValueError(f"{len(masked_lm_positions)} positions and {len(masked_lm_ids)} ids for "
                         f"max_predictions_per_seq {max_predictions_per_seq}")
    seq_pad = [0] * (max_seq_length - len(input_ids))
    prediction_pad = [0] * (max_predictions_per_seq - len(masked_lm_positions))
    values = {
        "input_ids": [*input_ids, *seq_pad],
        "input_mask": [1] * len(input_ids) + seq_pad,
        "segment_ids": [*segment_ids, *seq_pad],
        "masked_lm_positions": [*masked_lm_positions, *prediction_pad],
        "masked_lm_ids": [*masked_lm_ids, *prediction_pad],
        "next_sentence_labels": [next_sentence_label],
    }
    feature = {name: tf.train.Feature(int64_list=tf.train.Int64List(value=values[name]))
               for name in INT_FEATURES}
    feature["masked_lm_weights"] = tf.train.Feature(float_list=tf.train.FloatList(
        value=[1.0] * len(masked_lm_positions) + [0.0] * len(prediction_pad)))
    return tf.train.Example(features=tf.train.Features(feature=feature))


def serialize(example: tf.train.Example) -> bytes:
    """The record's bytes. Deterministic: the feature map is written in sorted key order, so the
    same instance always makes the same bytes (protobuf maps are otherwise unordered)."""
    return example.SerializeToString(deterministic=True)


class ShardWriter:
    """Appends Examples to one open TFRecord file; `count` is how many it has written."""

    def __init__(self, writer: tf.io.TFRecordWriter):
        self._writer = writer
        self.count = 0

    def write(self, example: tf.train.Example) -> None:
        self._writer.write(serialize(example))
        self.count += 1


@contextlib.contextmanager
def open_shard(path: str) -> Iterator[ShardWriter]:
    """A TFRecord file that appears at `path` only if the `with` block completes.

    Records go to a temp name in the same folder, renamed on success and deleted on failure, so a
    reader never meets a truncated file.

    Example (one instance, [CLS] the cat [SEP] sat [SEP] with "cat" masked, padded to the
    lengths given):
        >>> import os, shutil, tempfile
        >>> folder = tempfile.mkdtemp()
        >>> path = os.path.join(folder, "pretrain.tfrecord")
        >>> with open_shard(path) as shard:
        ...     shard.write(make_example([101, 1996, 103, 102, 2938, 102], [0, 0, 0, 0, 1, 1],
        ...                              [2], [4937], 0, max_seq_length=8,
        ...                              max_predictions_per_seq=2))
        >>> shard.count, os.listdir(folder)
        (1, ['pretrain.tfrecord'])
        >>> record = next(iter(tf.data.TFRecordDataset(path))).numpy()
        >>> features = tf.train.Example.FromString(record).features.feature
        >>> list(features["input_ids"].int64_list.value)
        [101, 1996, 103, 102, 2938, 102, 0, 0]
        >>> list(features["masked_lm_weights"].float_list.value)
        [1.0, 0.0]
        >>> shutil.rmtree(folder)
    """
    with atomic_path(path) as tmp_path, tf.io.TFRecordWriter(tmp_path) as writer:
        yield ShardWriter(writer)
