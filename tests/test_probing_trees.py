"""Tests for official.probing.trees: tree distances and Hewitt & Manning's scores, against hand
computations and scipy."""

import numpy as np
import pytest
import scipy.sparse.csgraph
import scipy.stats

from official.probing import trees

# "the old dog barked loudly ." : the <- dog, old <- dog, dog <- barked (root), loudly <- barked,
# . <- barked
HEADS = [3, 3, 4, 0, 4, 4]


def test_tree_distances_and_depths_by_hand():
    d = trees.tree_distances(HEADS)
    assert d[0].tolist() == [0, 2, 1, 2, 3, 3]  # the: dog 1, barked 2, loudly 3
    assert d[1, 4] == 3 and d[3, 5] == 1
    assert (d == d.T).all()
    assert trees.tree_depths(HEADS).tolist() == [2, 2, 1, 0, 1, 1]


def test_uuas_of_a_hand_built_prediction():
    # Predicted distances whose spanning tree is the chain 0-1-2-3-4 (5 left out: punctuation).
    predicted = np.full((6, 6), 10.0)
    for i in range(4):
        predicted[i, i + 1] = predicted[i + 1, i] = 1.0
    keep = [True] * 5 + [False]
    # Gold edges among kept words: (0,2) (1,2) (2,3) (3,4); the chain shares (1,2) (2,3) (3,4).
    assert trees.uuas([predicted], [HEADS], [keep]) == pytest.approx(3 / 4)
    gold = trees.tree_distances(HEADS).astype(float)
    assert trees.uuas([gold], [HEADS], [[True] * 6]) == 1.0


def test_minimum_spanning_tree_weighs_what_scipys_does():
    rng = np.random.default_rng(0)
    for n in (2, 5, 12):
        points = rng.normal(size=(n, 3))
        distances = np.linalg.norm(points[:, None] - points[None], axis=-1)
        edges = trees.minimum_spanning_edges(distances)
        assert len(edges) == n - 1
        ours = sum(distances[i, j] for i, j in edges)
        assert ours == pytest.approx(
            scipy.sparse.csgraph.minimum_spanning_tree(distances).sum())


def test_spearman_matches_scipy_with_ties():
    rng = np.random.default_rng(1)
    for _ in range(5):
        a, b = rng.integers(0, 4, 9), rng.normal(size=9)
        assert trees.spearman(a, b) == pytest.approx(scipy.stats.spearmanr(a, b).statistic)


def test_root_accuracy_and_depth_spearman_by_hand():
    depths = np.array([2.0, 2.5, 1.2, 0.1, 0.9, 1.1])
    assert trees.root_accuracy([depths], [HEADS], [[True] * 6]) == 1.0
    wrong = np.array([0.0, 2.5, 1.2, 0.1, 0.9, 1.1])
    assert trees.root_accuracy([wrong], [HEADS], [[True] * 6]) == 0.0
    # Leaving out word 0 (as punctuation) makes the root the least deep again.
    assert trees.root_accuracy([wrong], [HEADS], [[False] + [True] * 5]) == 1.0
    expected = scipy.stats.spearmanr(depths, [2, 2, 1, 0, 1, 1]).statistic
    assert trees.depth_spearman([depths], [HEADS]) == pytest.approx(expected)


def test_distance_spearman_averages_words_then_lengths():
    gold = trees.tree_distances(HEADS).astype(float)
    noisy = gold + np.random.default_rng(2).normal(0, 0.6, gold.shape)
    per_word = [scipy.stats.spearmanr(noisy[i], gold[i]).statistic for i in range(6)]
    chain = [0, 1, 2, 3, 4]  # a 5-word sentence: another length, weighed alike
    chain_gold = trees.tree_distances(chain).astype(float)
    expected = (np.mean(per_word) + 1.0) / 2
    assert trees.distance_spearman([noisy, chain_gold], [HEADS, chain]) == \
        pytest.approx(expected)
    # A 4-word sentence is outside the lengths 5-50 the paper averages.
    assert trees.distance_spearman([np.zeros((4, 4))], [[0, 1, 2, 3]]) == 0.0
