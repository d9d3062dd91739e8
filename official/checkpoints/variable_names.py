"""A checkpoint's variable names without TensorFlow, so that an entry point can refuse a
checkpoint that lacks what it needs (a masked-LM head, say) in its checks, before TensorFlow
loads.

    checkpoint_prefix(path) -> str       a prefix itself, or the newest checkpoint of a folder
                                         (its `checkpoint` file), else its bert_model.ckpt
    variable_names(path) -> [str]        the keys of a checkpoint's .index file, or of a Hugging
                                         Face folder's model.safetensors
    has_masked_lm_head(path) -> bool     whether a checkpoint in any format holds the masked-LM
                                         head: the original's cls/predictions/* (this project's
                                         TF2 format escapes its "/" as ".S"), a training
                                         checkpoint's heads/masked_lm/*, Hugging Face's
                                         cls.predictions.*

A checkpoint's .index file is a sorted string table (TensorFlow's tensor bundle, the format of
LevelDB's tables; tensorflow/tsl/lib/io/table_format.txt): data blocks of prefix-compressed
entries (shared key bytes, new key bytes, value bytes, each length a varint), an index block
pointing at them, and a 48-byte footer holding the index block's place and a magic number. The
bundle writes its blocks uncompressed; every key but the empty one (the bundle's header) is a
variable's name. tests/test_checkpoint_variable_names.py checks the names against
tf.train.list_variables.

Raises ValueError (a CheckpointError) with one line naming the file for a folder without a
checkpoint or a file that is not one.
"""

from __future__ import annotations

import json
import os
import re
import struct

from official.checkpoints.errors import CheckpointError

_FOOTER_SIZE = 48
_MAGIC = 0xDB4775248B80FB57
_BLOCK_TRAILER = 5  # a block's compression type (1 byte) and CRC (4)
_HEAD_PATTERNS = (re.compile(r"(^|/)cls(/|\.S)predictions(/|\.S)"),
                  re.compile(r"^heads/masked_lm/"), re.compile(r"^cls\.predictions\."))
_HF_WEIGHTS = "model.safetensors"


def checkpoint_prefix(path: str) -> str:
    """The checkpoint prefix `path` names (see the module docstring).

    Raises:
      CheckpointError: no checkpoint there.
    """
    if os.path.isdir(path):
        state = os.path.join(path, "checkpoint")
        if os.path.isfile(state):
            with open(state, encoding="utf-8") as f:
                found = re.search(r'^model_checkpoint_path:\s*"(.*)"', f.read(), re.MULTILINE)
            if found:
                return os.path.join(path, found.group(1).encode().decode("unicode_escape"))
        path = os.path.join(path, "bert_model.ckpt")
    if not os.path.isfile(path + ".index"):
        raise CheckpointError(f"{path}: no checkpoint there (no {os.path.basename(path)}.index)")
    return path


def _varint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[at]
        value |= (byte & 0x7F) << shift
        at += 1
        if byte < 0x80:
            return value, at
        shift += 7


def _block(data: bytes, offset: int, size: int, path: str) -> bytes:
    if data[offset + size] != 0:
        raise CheckpointError(f"{path}: a compressed table block (not a tensor bundle's index)")
    return data[offset:offset + size]


def _entries(block: bytes):
    """(key, value) of each entry of a table block, keys rebuilt from their shared prefixes."""
    (restarts,) = struct.unpack_from("<I", block, len(block) - 4)
    end, at, key = len(block) - 4 - 4 * restarts, 0, b""
    while at < end:
        shared, at = _varint(block, at)
        fresh, at = _varint(block, at)
        length, at = _varint(block, at)
        key = key[:shared] + block[at:at + fresh]
        at += fresh
        yield key, block[at:at + length]
        at += length


def _index_keys(index_file: str) -> list[str]:
    with open(index_file, "rb") as f:
        data = f.read()
    try:
        if len(data) < _FOOTER_SIZE or struct.unpack_from("<Q", data, len(data) - 8)[0] != _MAGIC:
            raise CheckpointError(f"{index_file}: not a checkpoint's index (no table footer)")
        footer = data[-_FOOTER_SIZE:]
        _, at = _varint(footer, 0)  # the meta-index block, unused
        _, at = _varint(footer, at)
        index_offset, at = _varint(footer, at)
        index_size, _ = _varint(footer, at)
        names = []
        for _, handle in _entries(_block(data, index_offset, index_size, index_file)):
            offset, at = _varint(handle, 0)
            size, _ = _varint(handle, at)
            names += [key.decode("utf-8") for key, _ in
                      _entries(_block(data, offset, size, index_file)) if key]
    except (IndexError, struct.error, UnicodeDecodeError):
        raise CheckpointError(f"{index_file}: not a checkpoint's index (its table is cut short "
                              "or damaged)") from None
    return names


def _safetensors_keys(path: str) -> list[str]:
    """The tensor names in a safetensors file's JSON header (8-byte length, then the JSON)."""
    with open(path, "rb") as f:
        (length,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(length))
    return [key for key in header if key != "__metadata__"]


def variable_names(path: str) -> list[str]:
    """The variable names of the checkpoint at `path` (see the module docstring)."""
    weights = os.path.join(path, _HF_WEIGHTS)
    if os.path.isdir(path) and os.path.isfile(weights):
        try:
            return _safetensors_keys(weights)
        except (struct.error, ValueError, UnicodeDecodeError):
            raise CheckpointError(f"{weights}: not a safetensors file") from None
    return _index_keys(checkpoint_prefix(path) + ".index")


def has_masked_lm_head(path: str) -> bool:
    """Whether the checkpoint at `path` holds a masked-LM head (see the module docstring)."""
    return any(pattern.search(name) for name in variable_names(path)
               for pattern in _HEAD_PATTERNS)
