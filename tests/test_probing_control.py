"""Tests for official.probing.control: Hewitt & Liang's control task labels."""

import collections

import numpy as np

from official.probing.control import control_labels, label_distribution


def test_a_label_is_a_function_of_the_word_type_alone():
    distribution = {"A": 0.5, "B": 0.3, "C": 0.2}
    words = ["dog", "cat", "dog", "the", "cat", "dog"]
    labels = control_labels(words, distribution, seed=7)
    by_type = collections.defaultdict(set)
    for w, label in zip(words, labels):
        by_type[w].add(label)
    assert all(len(v) == 1 for v in by_type.values())
    # The same type in another split or order gets the same label; another seed redraws.
    again = control_labels(["the", "dog", "zebra"], distribution, seed=7)
    assert again[:2] == [labels[3], labels[0]]
    draws = [control_labels([f"w{i}" for i in range(200)], distribution, s) for s in (1, 2)]
    assert draws[0] != draws[1]


def test_types_follow_the_tasks_label_distribution():
    distribution = label_distribution(["N"] * 60 + ["V"] * 30 + ["D"] * 10)
    assert distribution == {"D": 0.1, "N": 0.6, "V": 0.3}
    types = [f"type{i}" for i in range(20000)]
    counts = collections.Counter(control_labels(types, distribution, seed=3))
    shares = np.array([counts[label] / len(types) for label in distribution])
    # Binomial standard error at 20,000 draws is at most 0.0035: 4 of them.
    np.testing.assert_allclose(shares, list(distribution.values()), atol=0.014)
