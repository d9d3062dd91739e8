"""An approximate index beside the exact one: FAISS IVF-flat over the same unit vectors.

    ann_index, reused = load_or_build(index_dir, index, AnnParams(lists=0))
    indices, scores = top_k(ann_index, queries, k, probe)   int64 / float32 [queries, k]

Exact search (search.py) scores every corpus row; its cost grows with the corpus. IVF-flat
("inverted file") cuts the unit vectors into `lists` clusters by k-means (inner product) and
keeps each row in its cluster's list; a query is scored against the centroids and then against
the rows of its `probe` best lists only, exactly (float32 inner products, no quantisation). So a
query costs about lists + count * probe / lists dot products instead of count, and a row is
missed only when it lies in a list the query did not probe: recall rises with `probe`, and with
probe = lists the results are exact search's. Why FAISS IVF-flat: bench/ann_search.md.

Parameters. `lists` is chosen at build (0: `default_lists`, about 4 * sqrt(count)); a change of
it rebuilds the file. `probe` is chosen per search and is not part of the file. The k-means
trains on at most `_TRAIN_PER_LIST` rows a list, drawn with `_SEED`, from FAISS's own seeded
k-means: the same vectors and lists give the same bytes (FAISS's threads do not change them).

Files, beside the exact index's (index.py's rules, kept for this file too):

    ann.faiss   the FAISS index (faiss.write_index's bytes): centroids, and each list's rows
                (their vectors.npy row numbers and vectors)
    ann.json    its record: lists, the seed, count, dim, the sha256 of the vectors.npy it was
                built from (index.json's `vectors_sha256`) and of ann.faiss

`load_or_build` reuses the files when the record's vectors sha256 is the exact index's (the
corpus, the export and so the vectors are the same), the parameters are the asked ones, and
ann.faiss is the file the record was written with (its sha256), of the record's count and dim,
its centroids and vectors all finite; otherwise it builds them again from the exact index's
vectors. The record is written last and removed first, each file under a temporary name renamed
when complete (official/atomic_files.py), so a stopped build leaves the old pair, no record
(rebuilt next run), or the new pair. Memory: the index holds its own copy of the vectors
(count * dim * 4 bytes) plus 8 bytes a row; search reads it, not vectors.npy.
"""

from __future__ import annotations

import dataclasses
import glob
import hashlib
import json
import math
import os
import time

import faiss
import numpy as np
from absl import logging

from official.atomic_files import TEMP_SUFFIX, open_atomically
from official.retrieval.index import Index

ANN_FILE = "ann.faiss"
ANN_RECORD = "ann.json"
FORMAT_VERSION = 1
_SEED = 1234
# FAISS's k-means warns below 39 training rows a centroid; 256 a list is its own default cap.
_TRAIN_PER_LIST = 256
# Rows handed to FAISS at once while adding: bounds the copy out of the memory map.
_ADD_ROWS = 1 << 16


@dataclasses.dataclass(frozen=True)
class AnnParams:
    """What the file is built with: `lists` k-means clusters (0: `default_lists(count)`)."""
    lists: int = 0


def default_lists(count: int) -> int:
    """About 4 * sqrt(count) lists (FAISS's guide: 4 to 16 * sqrt(n)), but at least 39 rows a
    list (below that FAISS's k-means warns that its centroids are poorly placed)."""
    return max(1, min(round(4 * math.sqrt(count)), count // 39))


@dataclasses.dataclass
class AnnIndex:
    """The FAISS IVF-flat index over an Index's rows (row i of it is row i of vectors.npy)."""
    faiss_index: faiss.IndexIVFFlat
    record: dict

    @property
    def lists(self) -> int:
        return self.faiss_index.nlist


def top_k(ann: AnnIndex, queries: np.ndarray, k: int, probe: int
          ) -> tuple[np.ndarray, np.ndarray]:
    """The k best rows of each query among its `probe` nearest lists (at most `lists`).

    Args:
      queries: float32 [m, dim], unit rows.
      k: at least 1; more than the index's count returns all rows (as search.top_k).
      probe: lists searched, at least 1 (more than `lists` searches them all).

    Returns:
      indices: int64 [m, min(k, count)], rows of vectors.npy, best first; -1 where the probed
        lists held fewer than k rows.
      scores: float32 [m, min(k, count)], their dot products (-inf beside a -1).
    Among equal scores the lower row comes first, as in search.top_k.
    """
    if k < 1 or probe < 1:
        raise ValueError(f"k and probe must be at least 1, got k={k}, probe={probe}")
    queries = np.ascontiguousarray(queries, dtype=np.float32)
    k = min(k, ann.faiss_index.ntotal)
    params = faiss.SearchParametersIVF(nprobe=min(probe, ann.lists))
    scores, indices = ann.faiss_index.search(queries, k, params=params)
    scores = np.where(indices < 0, -np.inf, scores).astype(np.float32)
    # FAISS orders by score only; a missing row (-1) sorts last, its score being -inf.
    order = np.lexsort((np.where(indices < 0, np.iinfo(np.int64).max, indices), -scores),
                       axis=1)
    return (np.take_along_axis(indices, order, axis=1).astype(np.int64),
            np.take_along_axis(scores, order, axis=1))


def _sha256(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def _all_finite(ivf: faiss.IndexIVFFlat) -> bool:
    """Every centroid and every stored vector finite: a NaN would never be found, or would
    pull every query's probe to its list."""
    centroids = ivf.quantizer.reconstruct_n(0, ivf.nlist)
    if not np.all(np.isfinite(centroids)):
        return False
    invlists = ivf.invlists
    for number in range(ivf.nlist):
        size = invlists.list_size(number)
        if size:
            codes = faiss.rev_swig_ptr(invlists.get_codes(number), size * ivf.code_size)
            if not np.all(np.isfinite(np.frombuffer(codes, dtype=np.float32))):
                return False
    return True


def _wanted(index: Index, params: AnnParams) -> dict:
    """The record's fields that must equal the current ones for the file to be reused."""
    count, dim = index.vectors.shape
    return {"format": FORMAT_VERSION, "vectors_sha256": index.record["vectors_sha256"],
            "lists": params.lists or default_lists(count), "seed": _SEED,
            "count": int(count), "dim": int(dim)}


def _why_stale(index_dir: str, wanted: dict) -> tuple[str | None, AnnIndex | None]:
    """(None, the index) when `index_dir` holds a whole ANN index as `wanted`; else (why not,
    None)."""
    try:
        with open(os.path.join(index_dir, ANN_RECORD), encoding="utf-8") as f:
            record = json.load(f)
    except FileNotFoundError:
        return "no approximate index yet", None
    except (OSError, ValueError) as e:
        return f"its {ANN_RECORD} is unreadable ({e})", None
    if not isinstance(record, dict) or record.get("format") != FORMAT_VERSION:
        return f"its {ANN_RECORD} is of another format", None
    if record.get("vectors_sha256") != wanted["vectors_sha256"]:
        return "the vectors changed", None
    if record.get("lists") != wanted["lists"] or record.get("seed") != wanted["seed"]:
        return f"it was built with lists={record.get('lists')}, not {wanted['lists']}", None
    path = os.path.join(index_dir, ANN_FILE)
    try:
        if _sha256(path) != record.get("file_sha256"):
            return f"its {ANN_FILE} changed since {ANN_RECORD} was written", None
        ivf = faiss.read_index(path)
    except (OSError, RuntimeError) as e:  # FAISS raises RuntimeError on a file it cannot read
        return f"its {ANN_FILE} is unreadable ({str(e).splitlines()[0] if str(e) else e})", None
    if not isinstance(ivf, faiss.IndexIVFFlat) or ivf.metric_type != faiss.METRIC_INNER_PRODUCT \
            or (ivf.ntotal, ivf.d, ivf.nlist) != (wanted["count"], wanted["dim"],
                                                  wanted["lists"]):
        return f"its {ANN_FILE} is not the index {ANN_RECORD} describes", None
    if not _all_finite(ivf):
        return f"its {ANN_FILE} holds numbers that are not finite", None
    return None, AnnIndex(ivf, record)


def _remove_leftovers(index_dir: str) -> None:
    """The old record first, then any temporary file a killed build left."""
    for name in (ANN_RECORD, ANN_FILE):
        for leftover in glob.glob(os.path.join(glob.escape(index_dir),
                                               f".{name}.*{TEMP_SUFFIX}")):
            os.unlink(leftover)
    if os.path.exists(os.path.join(index_dir, ANN_RECORD)):
        os.unlink(os.path.join(index_dir, ANN_RECORD))


def build(index_dir: str, index: Index, params: AnnParams) -> AnnIndex:
    """Trains the lists on a seeded sample of `index`'s vectors, adds every row, writes the pair
    of files (see the module docstring)."""
    wanted = _wanted(index, params)
    count, dim, lists = wanted["count"], wanted["dim"], wanted["lists"]
    started = time.monotonic()
    ivf = faiss.IndexIVFFlat(faiss.IndexFlatIP(dim), dim, lists, faiss.METRIC_INNER_PRODUCT)
    ivf.cp.seed = _SEED
    ivf.cp.max_points_per_centroid = _TRAIN_PER_LIST
    sample = min(count, lists * _TRAIN_PER_LIST)
    rows = np.sort(np.random.default_rng(_SEED).choice(count, sample, replace=False))
    ivf.train(np.ascontiguousarray(index.vectors[rows], dtype=np.float32))
    for start in range(0, count, _ADD_ROWS):
        ivf.add(np.ascontiguousarray(index.vectors[start:start + _ADD_ROWS], dtype=np.float32))
    logging.info("built the approximate index (%d lists over %d vectors) in %.1f s", lists,
                 count, time.monotonic() - started)
    _remove_leftovers(index_dir)
    path = os.path.join(index_dir, ANN_FILE)
    with open_atomically(path, "wb") as f:
        f.write(faiss.serialize_index(ivf).tobytes())
    record = dict(wanted, file_sha256=_sha256(path))
    with open_atomically(os.path.join(index_dir, ANN_RECORD)) as f:
        json.dump(record, f)
    return AnnIndex(ivf, record)


def load_or_build(index_dir: str, index: Index, params: AnnParams) -> tuple[AnnIndex, bool]:
    """The approximate index of `index` (index.load_or_build's, in `index_dir`): reused when
    whole and current, else built. Returns (ann index, reused)."""
    why, ann = _why_stale(index_dir, _wanted(index, params))
    if ann is not None:
        logging.info("reusing the approximate index in %s (%d lists)", index_dir, ann.lists)
        return ann, True
    logging.info("building the approximate index in %s: %s", index_dir, why)
    return build(index_dir, index, params), False
