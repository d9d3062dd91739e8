"""TFRecord files without TensorFlow: records framed as TensorFlow's reader checks them.

Each record on disk (tensorflow/core/lib/io/record_writer.cc):

    length   uint64, little-endian
    crc      the masked CRC-32C of those 8 bytes, uint32 little-endian
    data     the record
    crc      the masked CRC-32C of the data

A masked CRC is ((crc >> 15 | crc << 17) + 0xA282EAD8) mod 2^32, TensorFlow's guard against
CRCs of data that holds CRCs. google-crc32c (the C library behind Beam's TFRecord writer, a
runtime dependency already) computes the CRC-32C. The pretraining-data workers write their
shards with this and so never load TensorFlow (data_prep/fast_generation.py);
tests/test_tfrecord_framing.py checks the bytes against tf.io.TFRecordWriter's.
"""

from __future__ import annotations

import functools
import struct
from typing import BinaryIO, Iterable

import google_crc32c

_MASK_DELTA = 0xA282EAD8
_UINT32, _UINT64 = struct.Struct("<I"), struct.Struct("<Q")
_WRITE_RECORDS = 1024


def masked_crc(data: bytes) -> bytes:
    """The masked CRC-32C of `data`, as the 4 bytes written after it."""
    crc = google_crc32c.value(data)
    return _UINT32.pack((((crc >> 15) | (crc << 17)) + _MASK_DELTA) & 0xFFFFFFFF)


@functools.lru_cache(maxsize=1 << 12)
def _header(length: int) -> bytes:
    """The 12 bytes before a record of `length` bytes (lengths repeat: cached)."""
    size = _UINT64.pack(length)
    return size + masked_crc(size)


def write_records(file: BinaryIO, records: Iterable[bytes]) -> None:
    """Appends `records` to `file` (opened "wb"), each framed as a TFRecord, in writes of
    about `_WRITE_RECORDS` records."""
    parts: list[bytes] = []
    for record in records:
        parts += (_header(len(record)), record, masked_crc(record))
        if len(parts) >= 3 * _WRITE_RECORDS:
            file.write(b"".join(parts))
            parts.clear()
    file.write(b"".join(parts))
