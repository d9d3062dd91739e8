"""Bad records met while training, reported as one line naming the file and what is wrong.

    checked_token_ids(features, vocab_size)   in a tf.data map: fails a batch holding a token id
                                              the model's embedding table has no row for
    naming_bad_records(files, config_file)    around training or prediction: TensorFlow's
                                              errors for those batches and for damaged files
                                              become ValueErrors that name the file or config

Why in the input pipeline: an out-of-range id reaches the word-embedding gather, which on a CPU
fails deep inside the first step ("indices[3,7] = 30600 is not in [0, 30522)") and on a GPU
silently returns zeros. The pipeline runs on the host whatever the device, so the check is the
same everywhere, and costs one reduction per batch.

A damaged TFRecord file (truncated by an interrupted copy, a flipped byte) fails as
`DataLossError: truncated record at 682852`, without the file's name; the files are then read
once more, one by one, to find the first damaged one.
"""

from __future__ import annotations

import contextlib
import re
from typing import Iterator, Mapping, Sequence

import numpy as np
import tensorflow as tf

# What the id check's assertion says, and how the message is recognised afterwards.
_ID_CHECK_TEXT = "token id beyond vocab_size"
_ID_CHECK_MESSAGE = re.compile(re.escape(_ID_CHECK_TEXT) + r"\] \[(\d+)\] \[(\d+)\]")
_DAMAGE = re.compile(r"(truncated|corrupted) record at (\d+)")


def checked_token_ids(features: Mapping[str, tf.Tensor], vocab_size: int,
                      id_features: Sequence[str] = ("input_word_ids",)) -> dict[str, tf.Tensor]:
    """`features` unchanged, once their `id_features` are known to be below `vocab_size`.

    Raises (when the batch is read): InvalidArgumentError that `naming_bad_records` turns into
    a one-line ValueError.
    """
    largest = tf.reduce_max(tf.stack([tf.reduce_max(features[name]) for name in id_features]))
    check = tf.debugging.Assert(largest < vocab_size, [_ID_CHECK_TEXT, largest, vocab_size])
    with tf.control_dependencies([check]):
        return {name: tf.identity(value) for name, value in features.items()}


def damage(path: str) -> str | None:
    """"truncated record at byte N" or "corrupted record at byte N" for a damaged TFRecord file;
    None when every record reads back whole (lengths and checksums)."""
    try:
        tf.data.TFRecordDataset(path).reduce(np.int64(0), lambda count, _: count + 1)
    except tf.errors.DataLossError as e:
        found = _DAMAGE.search(e.message)
        return (f"{found.group(1)} record at byte {found.group(2)}" if found
                else e.message.strip().splitlines()[0])
    return None


@contextlib.contextmanager
def naming_bad_records(files: Sequence[str], config_file: str | None = None) -> Iterator[None]:
    """Turns the errors of bad records read inside the block into one-line ValueErrors.

    Args:
      files: every TFRecord file the block reads.
      config_file: the bert_config.json whose vocab_size the ids were checked against.
    """
    try:
        yield
    except tf.errors.DataLossError as e:
        for path in files:
            found = damage(path)
            if found:
                raise ValueError(f"{path}: {found}: the file is damaged (an interrupted copy or "
                                 f"write?); make or copy it again") from None
        raise ValueError(f"a record file is damaged ({e.message.strip().splitlines()[0]})"
                         ) from None
    except tf.errors.InvalidArgumentError as e:
        found = _ID_CHECK_MESSAGE.search(e.message)
        if not found:
            raise
        where = ", ".join(files) if len(files) <= 3 else f"the {len(files)} input files"
        raise ValueError(
            f"a record of {where} holds token id {found.group(1)}, but "
            f"{config_file or 'the config'} says "
            f"vocab_size={found.group(2)}: were the records made with another vocab?") from None
