"""Every layer's vector of every word of a labelled corpus, computed once and cached on disk.

Probing trains many small models (per layer, per task, the control task, the mix) on the same
vectors, so the encoder runs once per split and the vectors are read back from a cache:

    layer_function(encoder)     (ids, mask, type_ids) -> float32 [L + 1, batch, seq, hidden]:
                                layer 0 is the embedding layer's output (word + position +
                                segment after its LayerNorm), layer l >= 1 transformer layer l's
    word_vectors(...)           sentences (lists of words) -> float32 [L + 1, words, hidden],
                                written into the array given (a memory map)
    cached_word_vectors(...)    the same through the cache: one .npy file per split, its name
                                a hash of everything the vectors depend on

Words and pieces. Each word is WordPiece-tokenized alone (as CoNLL's NER records are; a word
the tokenizer deletes entirely becomes one [UNK]), a sentence is its words' pieces in order,
and a word's vector is its first piece's (the BERT paper's choice for tagging) or, with
subword_pool "mean", its pieces' mean. Its layer 0 still carries its position.

Long sentences. A sentence of more than max_seq_length - 2 pieces is read in windows of
max_seq_length - 2 pieces, one every doc_stride, each piece's vectors from the window where it
has the most context (`official.features.doc_windows.max_context`, run_squad's rule): the same
windows extract_features --doc_stride reads, through the same code
(`official.tasks.feature_extraction.windowed_vectors`).

The cache. `<cache_dir>/<key>.npy`, [L + 1, words, hidden] float32 (one layer's vectors
contiguous, so a probe of one layer reads only its own), read back as a read-only memory map.
The key is a sha256 of the encoder's weights' fingerprint, the vocab's bytes and do_lower_case,
the split file's bytes, the sentences' count, max_seq_length, doc_stride, subword_pool and a
format version: any change makes another file, and a stale file is never read. The file
appears only when complete (written under a temporary name, then renamed); temporary files an
interrupted run left are removed by the next one.
"""

from __future__ import annotations

import errno
import glob
import hashlib
import json
import os
import shutil
from typing import Callable, Sequence

import numpy as np
import tensorflow as tf
from absl import logging

from official.atomic_files import TEMP_SUFFIX, atomic_path
from official.console import PROGRESS
from official.modeling.encoder import BertEncoder
from official.probing.settings import SUBWORD_POOLS
from official.tasks.feature_extraction import windowed_vectors
from official.text.tokenizer import UNKNOWN_TOKEN, FullTokenizer

# Part of every cache key: raise it when the vectors written for the same inputs change.
_FORMAT_VERSION = 1
# Sentences tokenized and windowed per step: bounds the windows' index arrays.
_CHUNK = 512

LayerFunction = Callable[[np.ndarray, np.ndarray, np.ndarray], tf.Tensor]


def layer_function(encoder: BertEncoder) -> LayerFunction:
    """A tf.function of (word_ids, mask, type_ids), int32 [batch, seq_len] each, to every
    layer's output, float32 [num_hidden_layers + 1, batch, seq_len, hidden]: the embedding
    layer's, then each transformer layer's."""
    spec = tf.TensorSpec([None, None], tf.int32)

    @tf.function(input_signature=[spec, spec, spec])
    def layers(word_ids, mask, type_ids):
        inputs = {"input_word_ids": word_ids, "input_mask": mask, "input_type_ids": type_ids}
        outputs = encoder.forward(inputs, per_layer_outputs=True, training=False)
        every = [encoder.embed(word_ids, type_ids, training=False),
                 *outputs["encoder_outputs"]]
        return tf.cast(tf.stack(every), tf.float32)

    return layers


def word_pieces(sentences: Sequence[Sequence[str]],
                tokenizer: FullTokenizer) -> list[list[np.ndarray]]:
    """Each sentence's words' WordPiece ids ([UNK] for a word the tokenizer deletes)."""
    unknown = np.array([tokenizer.vocab[UNKNOWN_TOKEN]], np.int32)
    flat = tokenizer.tokenize_batch_ids([w for sentence in sentences for w in sentence])
    flat = [p if len(p) else unknown for p in flat]
    out, start = [], 0
    for sentence in sentences:
        out.append(flat[start:start + len(sentence)])
        start += len(sentence)
    return out


def word_vectors(sentences: Sequence[Sequence[str]], tokenizer: FullTokenizer,
                 layers: LayerFunction, out: np.ndarray, max_seq_length: int, doc_stride: int,
                 batch_size: int = 32, subword_pool: str = "first") -> None:
    """Fills `out`, float32 [layers, words, hidden] (words: every sentence's, in order), with
    each word's vector at each layer (the module docstring)."""
    if subword_pool not in SUBWORD_POOLS:
        raise ValueError(f"subword_pool: must be one of {', '.join(SUBWORD_POOLS)}, "
                         f"got {subword_pool!r}")
    cls_id, sep_id = tokenizer.convert_tokens_to_ids(["[CLS]", "[SEP]"])
    word = 0
    for chunk_start in range(0, len(sentences), _CHUNK):
        chunk = word_pieces(sentences[chunk_start:chunk_start + _CHUNK], tokenizer)
        counts = [len(s) for s in chunk]
        firsts = word + np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(int)
        for i, vectors in windowed_vectors([np.concatenate(s) for s in chunk], layers,
                                           max_seq_length, doc_stride, batch_size, cls_id,
                                           sep_id):
            lengths = np.array([len(p) for p in chunk[i]])
            starts = 1 + np.concatenate([[0], np.cumsum(lengths)[:-1]])  # after [CLS]
            target = slice(firsts[i], firsts[i] + len(lengths))
            if subword_pool == "first":
                out[:, target] = vectors[:, starts]
            else:
                sums = np.add.reduceat(vectors[:, 1:-1], starts - 1, axis=1)
                out[:, target] = sums / lengths[None, :, None]
        word += sum(counts)
        logging.info("%d of %d sentences read", min(chunk_start + _CHUNK, len(sentences)),
                     len(sentences), extra=PROGRESS)


def _sha256_of_file(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def cache_key(fingerprint: str, tokenizer: FullTokenizer, data_file: str, sentences: int,
              max_seq_length: int, doc_stride: int, subword_pool: str) -> str:
    """The hex sha256 naming a split's vectors (the module docstring's list)."""
    fields = {"version": _FORMAT_VERSION, "encoder": fingerprint,
              "vocab": _sha256_of_file(tokenizer.vocab_file),
              "do_lower_case": bool(tokenizer.do_lower_case),
              "data": _sha256_of_file(data_file), "sentences": sentences,
              "max_seq_length": max_seq_length, "doc_stride": doc_stride,
              "subword_pool": subword_pool}
    return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()


def reserve_blocks(path: str) -> None:
    """Allocates the blocks of the file at `path` (as long as it is) now. A file written through
    a memory map is sparse until each page is first written, and a page a full disk cannot back
    is a SIGBUS that kills the process; reserved first, a full disk is an OSError (ENOSPC) here,
    which atomic_path turns into one line naming the cache file. Where the file system cannot
    reserve, its free space is checked instead."""
    with open(path, "r+b") as f:
        size = os.fstat(f.fileno()).st_size
        try:
            os.posix_fallocate(f.fileno(), 0, size)
        except OSError as e:
            if e.errno not in (errno.EOPNOTSUPP, errno.EINVAL):
                raise
            if shutil.disk_usage(os.path.dirname(os.path.abspath(path))).free < size:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), path) from None


def remove_leftovers(cache_dir: str) -> None:
    """Deletes the temporary files an interrupted run left in `cache_dir`."""
    for path in glob.glob(os.path.join(cache_dir, f".*{TEMP_SUFFIX}")):
        os.remove(path)


def cached_word_vectors(cache_dir: str, key: str, sentences: Sequence[Sequence[str]],
                        tokenizer: FullTokenizer, layers: LayerFunction, num_layers: int,
                        hidden: int, max_seq_length: int, doc_stride: int, batch_size: int,
                        subword_pool: str) -> np.ndarray:
    """The split's vectors, float32 [num_layers, words, hidden], read-only: from
    `<cache_dir>/<key>.npy` when there, else computed into it first."""
    path = os.path.join(cache_dir, f"{key}.npy")
    words = sum(len(s) for s in sentences)
    if not os.path.isfile(path):
        with atomic_path(path) as tmp:
            out = np.lib.format.open_memmap(tmp, mode="w+", dtype=np.float32,
                                            shape=(num_layers, words, hidden))
            reserve_blocks(tmp)
            word_vectors(sentences, tokenizer, layers, out, max_seq_length, doc_stride,
                         batch_size, subword_pool)
            check_finite(out, f"{path} (the encoder's output)")
            out.flush()
            del out
    else:
        logging.info("Vectors of %d words read from the cache %s", words, path)
    vectors = np.load(path, mmap_mode="r")
    if vectors.shape != (num_layers, words, hidden):
        raise ValueError(f"{path}: holds vectors of shape {list(vectors.shape)}, expected "
                         f"{[num_layers, words, hidden]}: remove it")
    check_finite(vectors, path)
    return vectors


def check_finite(vectors: np.ndarray, where: str) -> None:
    """Raises ValueError naming the first layer and word of `vectors` ([layers, words, hidden])
    that holds a nan or inf: a probe would learn from it silently. A layer at a time (a cache
    can be gigabytes)."""
    for layer, table in enumerate(vectors):
        bad = np.flatnonzero(~np.isfinite(table).all(axis=-1))
        if bad.size:
            raise ValueError(f"{where}: the vector of word {int(bad[0])} at layer {layer} is "
                             "not finite (nan or inf)")
