"""An approximate index beside the exact one: FAISS IVF-PQ (fast scan), re-ranked exactly.

    ann_index, reused = load_or_build(index_dir, index, AnnParams(lists=0))
    indices, scores = top_k(ann_index, queries, k, probe, rerank)   int64 / float32 [queries, k]

Exact search (search.py) scores every corpus row; its cost grows with the corpus. Here the unit
vectors are cut into `lists` clusters by k-means (inner product), and each row is kept in its
cluster's list as a product-quantisation code: the vector in `dim / 2` pieces of two numbers, each
piece replaced by the number of the nearest of 16 learnt centroids (4 bits): a row of 384 float32
(1,536 bytes) becomes 96 bytes, whose scores come 32 rows at a time from tables held in SIMD
registers (FAISS's "fast scan"). A query is scored against the list centroids, then approximately
against the codes of its `probe` best lists; the `rerank` best of those rows are scored again
exactly, as float32 dot products with their rows of vectors.npy (the exact index's memory map), and
the k best returned in exact search's order (score down, then the lower row). A row is missed when
its list was not probed or its approximate score left it out of the `rerank`; with probe = lists
and rerank at least the corpus's count, the results are exact search's. Why this and not IVF-flat,
HNSW or ScaNN: bench/ann_search.md (on MiniLM vectors, IVF-flat needs a quarter of the lists probed
for recall@10 0.95, where scanning floats is no faster than BLAS; the 4-bit codes are ~10x faster
to scan).

Parameters. `lists` is chosen at build (0: `default_lists`, about sqrt(count)); a change of it
rebuilds the file. `probe` (0: `default_probe`, a quarter of the lists) and `rerank` are chosen
per search and are not part of the file. The k-means and the codebooks train on at most
`_TRAIN_ROWS` rows, drawn with `_SEED`, with FAISS's own seeded k-means: the same vectors and
lists give the same bytes (checked at 1, 2 and 4 FAISS threads).

Files, beside the exact index's (index.py's rules, kept for this file too):

    ann.faiss   the FAISS index (faiss.write_index's bytes): list centroids, codebooks, and each
                list's rows (their vectors.npy row numbers and codes)
    ann.json    its record: lists, pieces, the seed, count, dim, the sha256 of the vectors.npy it
                was built from (index.json's `vectors_sha256`) and of ann.faiss

`load_or_build` reuses the files when the record's vectors sha256 is the exact index's (the
corpus, the export and so the vectors are the same), the parameters are the asked ones, and
ann.faiss is the file the record was written with (its sha256), of the record's count, dim and
lists, its centroids and codebooks all finite; otherwise it builds them again from the exact
index's vectors. The record is written last and removed first, each file under a temporary
name renamed when complete (official/atomic_files.py), so a stopped build leaves the old pair,
no record (rebuilt next run), or the new pair. Memory: dim / 4 + 8 bytes a row (102 MB for 1M
rows of 384, measured) besides the exact index's vectors, of which only re-ranked rows are read.
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
FORMAT_VERSION = 2
_SEED = 1234
# Rows the list centroids and codebooks learn from: k-means needs 39 a centroid (FAISS warns
# below), and past ~64 a list more rows move the centroids little but cost build time.
_TRAIN_ROWS = 65536
_BITS = 4  # 16 centroids a piece: what FAISS's fast scan scores from registers
# Rows handed to FAISS at once while adding: bounds the copy out of the memory map.
_ADD_ROWS = 1 << 16


@dataclasses.dataclass(frozen=True)
class AnnParams:
    """What the file is built with: `lists` k-means clusters (0: `default_lists(count)`)."""
    lists: int = 0


def default_lists(count: int) -> int:
    """About sqrt(count) lists (1,000 at 1M rows: a query scans few lists, the build's k-means
    stays short), but at least 39 rows a list (below that FAISS's k-means warns that its
    centroids are poorly placed)."""
    return max(1, min(round(math.sqrt(count)), count // 39))


def default_probe(lists: int) -> int:
    """A quarter of the lists: what recall@10 >= 0.95 took on MiniLM vectors of book sentences
    (bench/ann_search.md); the fraction, not a count, is what holds the recall as lists grow."""
    return max(1, math.ceil(lists / 4))


def pieces(dim: int) -> int:
    """Product-quantisation pieces: two numbers each (one each for an odd dim)."""
    return dim // 2 if dim % 2 == 0 else dim


@dataclasses.dataclass
class AnnIndex:
    """The FAISS index over an Index's rows (its row i is row i of `vectors`, the exact index's
    float32 [count, dim], which re-ranking reads)."""
    faiss_index: faiss.IndexIVFPQFastScan
    vectors: np.ndarray
    record: dict

    @property
    def lists(self) -> int:
        return self.faiss_index.nlist


def top_k(ann: AnnIndex, queries: np.ndarray, k: int, probe: int, rerank: int
          ) -> tuple[np.ndarray, np.ndarray]:
    """The k best rows of each query among the `rerank` best by code of its `probe` nearest
    lists, re-scored exactly.

    Args:
      queries: float32 [m, dim], unit rows.
      k: at least 1; more than the index's count returns all rows (as search.top_k).
      probe: lists searched (0: default_probe; more than `lists` searches them all).
      rerank: rows re-scored exactly per query (fewer than k counts as k).

    Returns:
      indices: int64 [m, min(k, count)], rows of vectors.npy, best first; -1 where the probed
        lists held fewer than k rows.
      scores: float32 [m, min(k, count)], their dot products (-inf beside a -1).
    Among equal scores the lower row comes first, as in search.top_k.
    """
    if k < 1 or probe < 0 or rerank < 1:
        raise ValueError(f"k and rerank must be at least 1 and probe at least 0, got {k}, "
                         f"{rerank}, {probe}")
    queries = np.ascontiguousarray(queries, dtype=np.float32)
    count = ann.faiss_index.ntotal
    k, rerank = min(k, count), min(max(k, rerank), count)
    params = faiss.SearchParametersIVF(nprobe=min(probe or default_probe(ann.lists), ann.lists))
    _, candidates = ann.faiss_index.search(queries, rerank, params=params)  # [m, rerank]
    # Exact scores of the candidates: their rows gathered from vectors.npy, one dot each.
    rows = np.asarray(ann.vectors)[np.maximum(candidates, 0)]  # [m, rerank, dim]
    scores = np.einsum("mrd,md->mr", rows, queries, dtype=np.float32)
    scores[candidates < 0] = -np.inf
    # Score down, then row up; a missing row (-1) last.
    order = np.lexsort((np.where(candidates < 0, np.iinfo(np.int64).max, candidates), -scores),
                       axis=1)[:, :k]
    return (np.take_along_axis(candidates, order, axis=1).astype(np.int64),
            np.take_along_axis(scores, order, axis=1))


def _sha256(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def _all_finite(ivf: faiss.IndexIVFPQFastScan) -> bool:
    """Every list centroid and codebook centroid finite (the codes are small integers): a NaN
    would pull every query's probe to its list, or score a piece as nothing."""
    return bool(np.all(np.isfinite(ivf.quantizer.reconstruct_n(0, ivf.nlist))) and
                np.all(np.isfinite(faiss.vector_to_array(ivf.pq.centroids))))


def _wanted(index: Index, params: AnnParams) -> dict:
    """The record's fields that must equal the current ones for the file to be reused."""
    count, dim = index.vectors.shape
    return {"format": FORMAT_VERSION, "vectors_sha256": index.record["vectors_sha256"],
            "lists": params.lists or default_lists(count), "pieces": pieces(dim),
            "seed": _SEED, "count": int(count), "dim": int(dim)}


def _why_stale(index_dir: str, wanted: dict
               ) -> tuple[str | None, tuple[faiss.IndexIVFPQFastScan, dict] | None]:
    """(None, (the FAISS index, its record)) when `index_dir` holds a whole ANN index as
    `wanted`; else (why not, None)."""
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
    built_with = {key: record.get(key) for key in ("lists", "pieces", "seed")}
    if built_with != {key: wanted[key] for key in built_with}:
        return f"it was built with {built_with}, not lists={wanted['lists']}", None
    path = os.path.join(index_dir, ANN_FILE)
    try:
        if _sha256(path) != record.get("file_sha256"):
            return f"its {ANN_FILE} changed since {ANN_RECORD} was written", None
        ivf = faiss.read_index(path)
    except (OSError, RuntimeError) as e:  # FAISS raises RuntimeError on a file it cannot read
        return f"its {ANN_FILE} is unreadable ({str(e).splitlines()[0] if str(e) else e})", None
    if not isinstance(ivf, faiss.IndexIVFPQFastScan) or \
            ivf.metric_type != faiss.METRIC_INNER_PRODUCT or \
            (ivf.ntotal, ivf.d, ivf.nlist, ivf.pq.M) != (wanted["count"], wanted["dim"],
                                                       wanted["lists"], wanted["pieces"]):
        return f"its {ANN_FILE} is not the index {ANN_RECORD} describes", None
    if not _all_finite(ivf):
        return f"its {ANN_FILE} holds numbers that are not finite", None
    return None, (ivf, record)


def _remove_leftovers(index_dir: str) -> None:
    """The old record first, then any temporary file a killed build left."""
    for name in (ANN_RECORD, ANN_FILE):
        for leftover in glob.glob(os.path.join(glob.escape(index_dir),
                                               f".{name}.*{TEMP_SUFFIX}")):
            os.unlink(leftover)
    if os.path.exists(os.path.join(index_dir, ANN_RECORD)):
        os.unlink(os.path.join(index_dir, ANN_RECORD))


def build(index_dir: str, index: Index, params: AnnParams) -> AnnIndex:
    """Trains the lists and codebooks on a seeded sample of `index`'s vectors, adds every row,
    writes the pair of files (see the module docstring)."""
    wanted = _wanted(index, params)
    count, dim, lists = wanted["count"], wanted["dim"], wanted["lists"]
    started = time.monotonic()
    ivf = faiss.IndexIVFPQFastScan(faiss.IndexFlatIP(dim), dim, lists, wanted["pieces"], _BITS,
                                   faiss.METRIC_INNER_PRODUCT)
    ivf.cp.seed = ivf.pq.cp.seed = _SEED
    sample = min(count, _TRAIN_ROWS)
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
    return AnnIndex(ivf, index.vectors, record)


def load_or_build(index_dir: str, index: Index, params: AnnParams) -> tuple[AnnIndex, bool]:
    """The approximate index of `index` (index.load_or_build's, in `index_dir`): reused when
    whole and current, else built. Returns (ann index, reused)."""
    why, found = _why_stale(index_dir, _wanted(index, params))
    if found is not None:
        logging.info("reusing the approximate index in %s (%d lists)", index_dir,
                     found[0].nlist)
        return AnnIndex(found[0], index.vectors, found[1]), True
    logging.info("building the approximate index in %s: %s", index_dir, why)
    return build(index_dir, index, params), False
