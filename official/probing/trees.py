"""Dependency trees as structural probes see them (Hewitt & Manning 2019, "A Structural Probe for
Finding Syntax in Word Representations"), and their evaluation, in numpy.

A sentence's tree is its heads (1-based, 0 for the root, as CoNLL-U writes them), taken as an
undirected graph over the words:

    tree_distances(heads)   [n, n] path lengths between words: what the distance probe fits
    tree_depths(heads)      [n] each word's distance from the root: what the depth probe fits

The probes' predictions are scored as the paper's code (john-hewitt/structural-probes) does:

    uuas(predicted, heads, keep)
        the predicted distances' minimum spanning tree over the kept words (the paper drops
        punctuation) against the gold tree's edges between kept words: shared edges / gold
        edges, summed over the sentences before dividing
    root_accuracy(predicted_depths, heads, keep)
        whether the kept word of least predicted depth is the root (the paper's "root%")
    spearman(a, b)      Spearman's rho, ties ranked by their mean rank (scipy's)
    distance_spearman / depth_spearman
        the paper's DSpr. and NSpr.: rho per word (its predicted against its gold distances
        to every word of the sentence) averaged over the sentence's words, or per sentence for
        depths; averaged within each sentence length from 5 to 50 words, then over those
        lengths (so long and short sentences weigh alike)

Example (the chain 1 <- 2 -> 3 rooted at 2):
    >>> tree_distances([2, 0, 2]).tolist(), tree_depths([2, 0, 2]).tolist()
    ([[0, 1, 2], [1, 0, 1], [2, 1, 0]], [1, 0, 1])
    >>> predicted = np.array([[0, 1, 1.5], [1, 0, 3], [1.5, 3, 0]])  # MST: 1-2 and 1-3
    >>> uuas([predicted], [[2, 0, 2]], [[True, True, True]])
    0.5
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

# The sentence lengths the paper's Spearman averages cover.
SPEARMAN_LENGTHS = (5, 50)


def tree_distances(heads: Sequence[int]) -> np.ndarray:
    """int64 [n, n]: the number of edges between words i and j of the tree `heads`."""
    n = len(heads)
    adjacent = [[] for _ in range(n)]
    for child, head in enumerate(heads):
        if head:
            adjacent[child].append(head - 1)
            adjacent[head - 1].append(child)
    distances = np.full((n, n), -1, np.int64)
    for source in range(n):  # breadth-first from each word
        distances[source, source] = 0
        frontier = [source]
        while frontier:
            following = []
            for word in frontier:
                for other in adjacent[word]:
                    if distances[source, other] < 0:
                        distances[source, other] = distances[source, word] + 1
                        following.append(other)
            frontier = following
    return distances


def tree_depths(heads: Sequence[int]) -> np.ndarray:
    """int64 [n]: each word's number of edges to the root."""
    root = list(heads).index(0)
    return tree_distances(heads)[root]


def minimum_spanning_edges(distances: np.ndarray) -> set[tuple[int, int]]:
    """Prim's minimum spanning tree of the complete graph weighted by `distances` [n, n]:
    its edges as (i, j) with i < j; ties go to the lower index, so the tree is deterministic."""
    n = len(distances)
    if n < 2:
        return set()
    inside = np.zeros(n, bool)
    inside[0] = True
    best = np.asarray(distances[0], np.float64).copy()
    parent = np.zeros(n, np.int64)
    edges = set()
    for _ in range(n - 1):
        candidates = np.where(inside, np.inf, best)
        word = int(np.argmin(candidates))
        edges.add((min(word, int(parent[word])), max(word, int(parent[word]))))
        inside[word] = True
        closer = ~inside & (distances[word] < best)
        best[closer] = distances[word][closer]
        parent[closer] = word
    return edges


def _gold_edges(heads: Sequence[int], keep: np.ndarray) -> set[tuple[int, int]]:
    return {(min(c, h - 1), max(c, h - 1)) for c, h in enumerate(heads)
            if h and keep[c] and keep[h - 1]}


def uuas(predicted: Sequence[np.ndarray], heads: Sequence[Sequence[int]],
         keep: Sequence[Sequence[bool]]) -> float:
    """Undirected unlabelled attachment score of the predicted distances' spanning trees.

    Args:
      predicted: per sentence, [n, n] predicted distances (squared ones do as well: the tree
        depends on their order only).
      heads: per sentence, the gold heads.
      keep: per sentence, [n] the words scored (False: punctuation).
    """
    shared = total = 0
    for distances, sentence_heads, sentence_keep in zip(predicted, heads, keep):
        kept = np.flatnonzero(sentence_keep)
        gold = _gold_edges(sentence_heads, np.asarray(sentence_keep, bool))
        found = {(int(kept[i]), int(kept[j]))
                 for i, j in minimum_spanning_edges(np.asarray(distances)[np.ix_(kept, kept)])}
        shared += len(gold & found)
        total += len(gold)
    return shared / total if total else 0.0


def root_accuracy(predicted_depths: Sequence[np.ndarray], heads: Sequence[Sequence[int]],
                  keep: Sequence[Sequence[bool]]) -> float:
    """The share of sentences whose kept word of least predicted depth is the gold root."""
    hits = counted = 0
    for depths, sentence_heads, sentence_keep in zip(predicted_depths, heads, keep):
        kept = np.flatnonzero(sentence_keep)
        if kept.size == 0:
            continue
        counted += 1
        hits += sentence_heads[int(kept[np.argmin(np.asarray(depths)[kept])])] == 0
    return hits / counted if counted else 0.0


def _ranks(values: np.ndarray) -> np.ndarray:
    """1-based ranks, ties given their mean rank."""
    order = np.argsort(values, kind="stable")
    sorted_values = values[order]
    ranks = np.empty(len(values), np.float64)
    start = 0
    while start < len(values):
        end = start
        while end + 1 < len(values) and sorted_values[end + 1] == sorted_values[start]:
            end += 1
        ranks[order[start:end + 1]] = (start + end) / 2 + 1
        start = end + 1
    return ranks


def spearman(a: Sequence[float], b: Sequence[float]) -> float:
    """Spearman's rank correlation of two equal-length sequences (nan when one is constant)."""
    ra, rb = _ranks(np.asarray(a, np.float64)), _ranks(np.asarray(b, np.float64))
    ra, rb = ra - ra.mean(), rb - rb.mean()
    denominator = np.sqrt((ra * ra).sum() * (rb * rb).sum())
    return float((ra * rb).sum() / denominator) if denominator > 0 else float("nan")


def _by_length(scores: Sequence[tuple[int, float]]) -> float:
    low, high = SPEARMAN_LENGTHS
    per_length: dict[int, list[float]] = {}
    for length, score in scores:
        if low <= length <= high and not np.isnan(score):
            per_length.setdefault(length, []).append(score)
    return float(np.mean([np.mean(v) for v in per_length.values()])) if per_length else 0.0


def distance_spearman(predicted: Sequence[np.ndarray], heads: Sequence[Sequence[int]]) -> float:
    """DSpr.: per sentence the mean over words of rho(predicted row, gold row); then the mean
    per sentence length (5-50 words), then over lengths."""
    scores = []
    for distances, sentence_heads in zip(predicted, heads):
        gold = tree_distances(sentence_heads)
        rows = [spearman(distances[i], gold[i]) for i in range(len(gold))]
        scores.append((len(gold), float(np.nanmean(rows)) if not np.all(np.isnan(rows))
                       else float("nan")))
    return _by_length(scores)


def depth_spearman(predicted_depths: Sequence[np.ndarray],
                   heads: Sequence[Sequence[int]]) -> float:
    """NSpr.: per sentence rho(predicted depths, gold depths); then the mean per sentence
    length (5-50 words), then over lengths."""
    return _by_length([(len(h), spearman(d, tree_depths(h)))
                       for d, h in zip(predicted_depths, heads)])
