"""Exact cosine search: every query against every corpus vector, by one matrix product.

    indices, scores = top_k(queries, corpus, k)   int64 / float32 [queries, min(k, corpus)]

`queries` [m, dim] and `corpus` [n, dim] are unit rows (official/retrieval/index.py normalises
both), so the dot product is the cosine similarity. For each batch of queries the scores
[batch, n] are one matrix product; `np.argpartition` finds each row's k best in O(n), and only
those (with any corpus row tied with the k-th) are sorted. The order is deterministic: higher
score first, and among equal scores the lower corpus row (the earlier line) first, so the
result does not depend on how argpartition happened to split a tie.

How far this goes. Exact search costs m * n * dim multiply-adds and needs the matrix in memory
(or memory-mapped, as the index is): n * dim * 4 bytes, 1.5 GB for 1M vectors of 384
(MiniLM), 3 GB at 768 (BERT-Base). On one machine that is enough up to a few million vectors:
a batch of queries is one BLAS matrix product over memory read in order, and the results are
exact. Beyond that, or when the time per query must not grow with the corpus, use the
approximate index over the same normalised vectors (ann.py, semantic_search --index=ann:
FAISS IVF with 4-bit codes and exact re-ranking), which trades a little recall for speed.
"""

from __future__ import annotations

import numpy as np

# Scores held at once: a batch of queries is cut so that [batch, n] float32 stays near 256 MB.
_SCORES_PER_BATCH = 1 << 26


def top_k(queries: np.ndarray, corpus: np.ndarray, k: int,
          batch_size: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The k corpus rows of highest dot product with each query (see the module docstring).

    Args:
      queries: float32 [m, dim].
      corpus: float32 [n, dim] (a memory map is fine).
      k: at least 1; more than n returns all n rows.
      batch_size: queries per matrix product (default: as many as keep [batch, n] near 256 MB).

    Returns:
      indices: int64 [m, min(k, n)], corpus rows, best first.
      scores: float32 [m, min(k, n)], their dot products.
    """
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    queries = np.asarray(queries, dtype=np.float32)
    n = corpus.shape[0]
    if queries.ndim != 2 or corpus.ndim != 2 or queries.shape[1] != corpus.shape[1]:
        raise ValueError(f"queries {queries.shape} and corpus {corpus.shape} are not "
                         "[m, dim] and [n, dim] of one dim")
    k = min(k, n)
    m = queries.shape[0]
    batch_size = batch_size or max(1, _SCORES_PER_BATCH // max(n, 1))
    indices = np.empty((m, k), dtype=np.int64)
    scores = np.empty((m, k), dtype=np.float32)
    for start in range(0, m, batch_size):
        batch = queries[start:start + batch_size] @ np.asarray(corpus).T  # [batch, n]
        if k < n:
            best = np.argpartition(-batch, k - 1, axis=1)[:, :k]
            kth = np.take_along_axis(batch, best, axis=1).min(axis=1)
        for row, row_scores in enumerate(batch):
            # Every row at least as good as the k-th: the k best and anything tied with the
            # k-th, which argpartition may have left out; then score down, index up.
            candidates = (np.flatnonzero(row_scores >= kth[row]) if k < n
                          else np.arange(n))
            order = np.lexsort((candidates, -row_scores[candidates]))[:k]
            indices[start + row] = candidates[order]
            scores[start + row] = row_scores[candidates[order]]
    return indices, scores
