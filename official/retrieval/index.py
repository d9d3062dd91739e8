"""A corpus embedded once and kept on disk: the matrix search reads, and what it was made from.

A corpus is a UTF-8 text file, one text per line. Empty lines (and lines of whitespace only) are
skipped, but every text keeps its line number (1-based, as an editor shows it), so a result
points back into the file. Lines are split on "\\n" alone, a "\\r" before it dropped, so the
numbers are those of `wc -l`, `sed -n Np` and editors (Python's `splitlines` would also split on
form feeds and Unicode line separators).

The index is a folder (default `<corpus_file>.index/`, beside the corpus):

    vectors.npy   float32 [count, dim], each row the export's vector of one text, L2-normalised
                  so that a dot product is the cosine similarity
    index.json    the record: the corpus file's path and sha256, the texts' line numbers and
                  texts (row i is lines[i]), the export's version folder and fingerprint, count,
                  dim, and vectors.npy's sha256

`load_or_build` reuses the index when the record's corpus sha256 and export (path and
fingerprint) are the corpus's and the encoder's, and vectors.npy is the file the record was
written with (its sha256) and holds finite numbers only (a NaN row would silently never be
found); otherwise it embeds the corpus again. The record is what makes a folder an index, so it
is written last and removed first: a rebuild deletes the old index.json before it writes the new
vectors.npy, each file is written under a temporary name and renamed when complete
(official/atomic_files.py), and so a build stopped at any point (ctrl-C, a full disk, SIGKILL)
leaves either the old whole index, a folder with no record (rebuilt by the next run), or the new
whole index: never a record beside vectors it does not describe. Temporary files a killed build
left are removed by the next build. Two runs building the same index folder at once are not
supported.

Vectors are computed `batch_size` texts at a time, with a progress line. The batch size does not
change the index's identity: a batch's rows are padded to its longest text, which moves a vector
by float rounding only.
"""

from __future__ import annotations

import dataclasses
import glob
import hashlib
import json
import os
import time
from typing import Callable

import numpy as np
from absl import logging

from official.atomic_files import TEMP_SUFFIX, open_atomically
from official.console import PROGRESS

VECTORS = "vectors.npy"
RECORD = "index.json"
FORMAT_VERSION = 2
_PROGRESS_SECONDS = 10.0

# texts -> float32 [texts, dim]: an encoder.SentenceEncoder, or any function (tests).
Embed = Callable[[list[str]], np.ndarray]


@dataclasses.dataclass
class Texts:
    """A text file's non-empty lines: `texts[i]` is line `lines[i]` (1-based) of `path`."""
    path: str
    sha256: str
    lines: list[int]
    texts: list[str]


def read_texts(path: str, name: str = "") -> Texts:
    """Reads a UTF-8 file of one text per line (see the module docstring).

    Raises a one-line ValueError starting with `name=path` (or `path`): a missing file or a
    folder, bytes that are not UTF-8 (with the line), a file without any text.
    """
    where = f"{name}={path}" if name else path
    if not os.path.exists(path):
        raise ValueError(f"{where}: no such file")
    if os.path.isdir(path):
        raise ValueError(f"{where}: is a directory, not a text file")
    with open(path, "rb") as f:
        data = f.read()
    try:
        content = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise ValueError(f"{where}: not UTF-8 (line {line}, byte {e.start})") from None
    if content.startswith("\ufeff"):  # a byte-order mark is not text
        content = content[1:]
    lines, texts = [], []
    for number, line in enumerate(content.split("\n"), start=1):
        line = line.removesuffix("\r")
        if line.strip():
            lines.append(number)
            texts.append(line)
    if not texts:
        raise ValueError(f"{where}: holds no text (every line is empty)")
    return Texts(path, hashlib.sha256(data).hexdigest(), lines, texts)


def normalize(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit L2 norm, float32 [n, dim]; a zero row stays zero (it matches
    nothing)."""
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.maximum(norms, np.finfo(np.float32).tiny)


def embed_texts(embed: Embed, texts: list[str], batch_size: int,
                what: str = "texts") -> np.ndarray:
    """`embed` over `texts`, `batch_size` at a time, with a progress line; the rows normalised:
    float32 [len(texts), dim]. A non-finite vector is an error (a broken export)."""
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    parts, last_report, started = [], time.monotonic(), time.monotonic()
    for start in range(0, len(texts), batch_size):
        batch = np.asarray(embed(texts[start:start + batch_size]), dtype=np.float32)
        if batch.ndim != 2 or batch.shape[0] != len(texts[start:start + batch_size]):
            raise ValueError(f"the encoder returned shape {batch.shape} for "
                             f"{len(texts[start:start + batch_size])} texts")
        if not np.all(np.isfinite(batch)):
            raise ValueError(f"the encoder returned a non-finite vector for {what} "
                             f"{start + 1}-{start + len(batch)}")
        parts.append(normalize(batch))
        done = start + len(batch)
        if time.monotonic() - last_report > _PROGRESS_SECONDS or done == len(texts):
            last_report = time.monotonic()
            rate = done / max(last_report - started, 1e-9)
            logging.info("embedded %d/%d %s (%.1f/s)", done, len(texts), what, rate,
                         extra=PROGRESS)
    return np.concatenate(parts, axis=0)


@dataclasses.dataclass
class Index:
    """Unit vectors float32 [count, dim] (a read-only memory map when loaded) and what each
    row is: `texts[i]`, line `lines[i]` of the corpus."""
    vectors: np.ndarray
    lines: list[int]
    texts: list[str]
    record: dict

    def __len__(self) -> int:
        return len(self.texts)


def default_index_dir(corpus_file: str) -> str:
    """`<corpus_file>.index`, beside the corpus."""
    return corpus_file.rstrip("/\\") + ".index"


def _export_record(encoder) -> dict:
    return {"path": encoder.path, "fingerprint": encoder.fingerprint}


def _why_stale(index_dir: str, corpus: Texts, export: dict) -> tuple[str | None, Index | None]:
    """(None, the index) when `index_dir` holds a whole index of `corpus` made by `export`;
    else (why not, None)."""
    try:
        with open(os.path.join(index_dir, RECORD), encoding="utf-8") as f:
            record = json.load(f)
    except FileNotFoundError:
        return "no index yet", None
    except (OSError, ValueError) as e:
        return f"its {RECORD} is unreadable ({e})", None
    if not isinstance(record, dict) or record.get("format") != FORMAT_VERSION:
        return f"its {RECORD} is of another format", None
    if record.get("corpus", {}).get("sha256") != corpus.sha256:
        return "the corpus changed", None
    if record.get("export") != export:
        return "the export changed", None
    try:
        vectors = np.load(os.path.join(index_dir, VECTORS), mmap_mode="r")
    except (OSError, ValueError) as e:
        return f"its {VECTORS} is unreadable ({e})", None
    lines, texts = record.get("lines"), record.get("texts")
    if vectors.dtype != np.float32 or vectors.ndim != 2 or \
            vectors.shape != (record.get("count"), record.get("dim")) or \
            not isinstance(lines, list) or not isinstance(texts, list) or \
            not len(lines) == len(texts) == vectors.shape[0]:
        return f"its {VECTORS} is not the matrix {RECORD} describes", None
    if _sha256(os.path.join(index_dir, VECTORS)) != record.get("vectors_sha256"):
        return f"its {VECTORS} changed since {RECORD} was written", None
    if not np.all(np.isfinite(vectors)):
        return f"its {VECTORS} holds numbers that are not finite", None
    return None, Index(vectors, lines, texts, record)


def _sha256(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def _remove_leftovers(index_dir: str) -> None:
    """The old record first (what follows no longer matches it), and any temporary file a
    killed build left (official/atomic_files.py names them `.NAME.<hex>.tmp`)."""
    for name in (RECORD, VECTORS):
        for leftover in glob.glob(os.path.join(glob.escape(index_dir),
                                               f".{name}.*{TEMP_SUFFIX}")):
            os.unlink(leftover)
    if os.path.exists(os.path.join(index_dir, RECORD)):
        os.unlink(os.path.join(index_dir, RECORD))


def build(index_dir: str, corpus: Texts, encoder, batch_size: int) -> Index:
    """Embeds `corpus` with `encoder` and writes the index (see the module docstring)."""
    vectors = embed_texts(encoder, corpus.texts, batch_size, what="corpus texts")
    os.makedirs(index_dir, exist_ok=True)
    _remove_leftovers(index_dir)
    with open_atomically(os.path.join(index_dir, VECTORS), "wb") as f:
        np.save(f, vectors)
    record = {
        "format": FORMAT_VERSION,
        "corpus": {"path": os.path.abspath(corpus.path), "sha256": corpus.sha256},
        "export": _export_record(encoder),
        "count": int(vectors.shape[0]),
        "dim": int(vectors.shape[1]),
        "lines": corpus.lines,
        "texts": corpus.texts,
        "vectors_sha256": _sha256(os.path.join(index_dir, VECTORS)),
    }
    with open_atomically(os.path.join(index_dir, RECORD)) as f:
        json.dump(record, f, ensure_ascii=False)
    return Index(vectors, corpus.lines, corpus.texts, record)


def load_or_build(index_dir: str, corpus: Texts, encoder, batch_size: int
                  ) -> tuple[Index, bool]:
    """The index of `corpus` by `encoder` in `index_dir`: reused when whole and current, else
    built. Returns (index, reused). `encoder` has `path`, `fingerprint` and is called on lists
    of texts (encoder.SentenceEncoder)."""
    why, index = _why_stale(index_dir, corpus, _export_record(encoder))
    if index is not None:
        logging.info("reusing the index in %s (%d texts, dim %d)", index_dir, len(index),
                     index.vectors.shape[1])
        return index, True
    logging.info("building the index in %s: %s", index_dir, why)
    return build(index_dir, corpus, encoder, batch_size), False
