"""Serialises batches of pretraining examples to `tf.train.Example` bytes with numpy.

Building a protobuf object per instance costs more in Python than making the instance; this
writes the same wire format straight from the batch arrays, with no per-row object: each field's
bytes are a block of rows padded to one width, and one boolean gather over the blocks side by
side reads out every record
(bench/pretraining_data.py measures the generator it serves, against the original). The output is
byte-identical to `tf.train.Example.SerializeToString(deterministic=True)` of the same features
(tests/test_example_bytes.py proves it), so readers cannot tell the two apart.

Wire format written, per example (map entries in sorted key order, as deterministic
serialisation sorts them):
    Example   { 1: Features { 1: repeated Entry { 1: key, 2: Feature } } }
    Feature   { 2: FloatList { 1: packed float32 } | 3: Int64List { 1: packed varint } }
"""

from __future__ import annotations

from typing import Iterator, NamedTuple

import numpy as np

_LENGTH_DELIMITED = 2
_FLOAT_LIST, _INT64_LIST = 2, 3
_SLICE_ROWS = 1024


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | _LENGTH_DELIMITED) + _varint(len(payload)) + payload


def _entry_prefix(key: str, kind: int, payload_len: int) -> bytes:
    """The bytes of a map entry before its packed values (which take payload_len bytes)."""
    list_header = _varint(1 << 3 | _LENGTH_DELIMITED) + _varint(payload_len)
    feature_len = len(list_header) + payload_len
    feature_header = _varint(kind << 3 | _LENGTH_DELIMITED) + _varint(feature_len)
    value_len = len(feature_header) + feature_len
    value_header = _varint(2 << 3 | _LENGTH_DELIMITED) + _varint(value_len)
    body_len = len(_field(1, key.encode())) + len(value_header) + value_len
    return (_varint(1 << 3 | _LENGTH_DELIMITED) + _varint(body_len) + _field(1, key.encode())
            + value_header + feature_header + list_header)


class Block(NamedTuple):
    """Bytes of every row, padded to one width: a record is its blocks' kept bytes in order."""
    data: np.ndarray     # uint8 [rows, width]
    kept: np.ndarray     # bool [rows, width]: which bytes are real
    lengths: np.ndarray  # int [rows]: how many are


def _left_aligned(data: np.ndarray, lengths: np.ndarray) -> Block:
    """A block whose row r is its first lengths[r] bytes."""
    return Block(data, np.arange(data.shape[1])[None, :] < lengths[:, None], lengths)


def _whole(data: np.ndarray) -> Block:
    """A block of rows with no padding."""
    return Block(data, np.ones(data.shape, bool), np.full(len(data), data.shape[1]))


def _prefix_block(key: str, kind: int, payload_lens: np.ndarray) -> Block:
    """Every row's map-entry prefix (it holds the payload's length, so rows differ)."""
    unique, which = np.unique(payload_lens, return_inverse=True)
    prefixes = [_entry_prefix(key, kind, int(n)) for n in unique]
    lengths = np.array([len(p) for p in prefixes])
    table = np.zeros((len(prefixes), lengths.max()), np.uint8)
    for i, prefix in enumerate(prefixes):
        table[i, :len(prefix)] = np.frombuffer(prefix, np.uint8)
    return _left_aligned(table[which], lengths[which])


def _varint_block(values: np.ndarray) -> Block:
    """Each row of non-negative int [rows, k] as packed varints: k slots as wide as the largest
    value's varint, each value's bytes at the start of its slot."""
    rows, k = values.shape
    largest = int(values.max(initial=0))
    if largest < 0x80:  # Masks, segment ids, positions, labels: one byte per value.
        return _whole(values.astype(np.uint8))
    dtype = np.uint32 if largest < 2**32 else np.uint64
    values = values.astype(dtype)
    width = (largest.bit_length() + 6) // 7
    num_bytes = np.ones(values.shape, np.uint8)
    for i in range(1, width):
        num_bytes += values >= dtype(1 << 7 * i)
    encoded = np.empty((rows, k, width), np.uint8)
    for i in range(width):
        more = (num_bytes > i + 1).astype(dtype) << dtype(7)
        encoded[..., i] = ((values >> dtype(7 * i)) & dtype(0x7F)) | more
    kept = np.arange(width, dtype=np.uint8)[None, None, :] < num_bytes[..., None]
    return Block(encoded.reshape(rows, k * width), kept.reshape(rows, k * width),
                 num_bytes.sum(axis=1, dtype=np.int64))


def _records(blocks: list[Block]) -> list[bytes]:
    """Each row's record: its blocks' kept bytes in order.

    The blocks side by side are one [rows, total width] array; a boolean gather reads it in
    row-major order, which is each record's blocks in turn."""
    data = np.concatenate([block.data for block in blocks], axis=1)
    kept = np.concatenate([block.kept for block in blocks], axis=1)
    buffer = data[kept].tobytes()
    ends = np.cumsum(sum(block.lengths for block in blocks)).tolist()
    return [buffer[a:b] for a, b in zip([0, *ends[:-1]], ends)]


class ExampleSerializer:
    """Serialises batches whose features are named and typed as `int_features`/`float_features`.

    Rows are laid out in byte buffers with array operations (no per-row Python beyond slicing
    a buffer into records).

    Example (a batch of two rows; each record reads back as a `tf.train.Example` whose
    deterministic serialisation is the same bytes):
        >>> import tensorflow as tf
        >>> serializer = ExampleSerializer(["input_ids", "next_sentence_labels"],
        ...                                ["masked_lm_weights"])
        >>> records = serializer.serialize({
        ...     "input_ids": np.array([[101, 2000, 102], [101, 300, 102]]),
        ...     "next_sentence_labels": np.array([[0], [1]]),
        ...     "masked_lm_weights": np.array([[1.0, 0.0], [0.5, 1.0]])})
        >>> len(records), type(records[0]).__name__
        (2, 'bytes')
        >>> example = tf.train.Example.FromString(records[1])
        >>> features = example.features.feature
        >>> list(features["input_ids"].int64_list.value)
        [101, 300, 102]
        >>> list(features["masked_lm_weights"].float_list.value)
        [0.5, 1.0]
        >>> records[1] == example.SerializeToString(deterministic=True)
        True
    """

    def __init__(self, int_features: list[str], float_features: list[str]):
        self._kinds = {**{k: _INT64_LIST for k in int_features},
                       **{k: _FLOAT_LIST for k in float_features}}
        self._keys = sorted(self._kinds)

    def _payload(self, key: str, values: np.ndarray) -> Block:
        """Each row's packed values."""
        if self._kinds[key] == _FLOAT_LIST:
            data = np.ascontiguousarray(values, dtype="<f4")
            return _whole(data.view(np.uint8).reshape(len(values), -1))
        if values.size and values.min() < 0:
            raise ValueError(f"{key}: negative values are not written by this serializer")
        return _varint_block(values)

    def serialize(self, batch: dict[str, np.ndarray]) -> list[bytes]:
        """`batch[key]` is [rows, length] (int >= 0 or float32) -> one record per row."""
        return list(self.records(batch))

    def records(self, batch: dict[str, np.ndarray]) -> Iterator[bytes]:
        """`serialize`, as an iterator that works through `_SLICE_ROWS` rows at a time: the
        slice's arrays stay in the CPU's cache, and a large batch's records never all exist at
        once (a writer takes them as they come)."""
        rows = len(batch[self._keys[0]])
        for start in range(0, rows, _SLICE_ROWS):
            yield from self._slice({key: np.asarray(batch[key])[start:start + _SLICE_ROWS]
                                    for key in self._keys})

    def _slice(self, batch: dict[str, np.ndarray]) -> list[bytes]:
        rows = len(batch[self._keys[0]])
        blocks = []  # in record order, after the record's header
        for key in self._keys:
            payload = self._payload(key, batch[key].reshape(rows, -1))
            blocks += [_prefix_block(key, self._kinds[key], payload.lengths), payload]
        body_lens = sum(block.lengths for block in blocks)
        size = _varint_block(body_lens[:, None])
        tag = _whole(np.full((rows, 1), 1 << 3 | _LENGTH_DELIMITED, np.uint8))
        return _records([tag, size, *blocks])
