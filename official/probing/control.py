"""Hewitt & Liang's control tasks (2019, "Designing and Interpreting Probes with Control Tasks").

A probe that reaches high accuracy may have learnt the task itself rather than read it off the
representation. The control task keeps the task's shape but gives every word *type* a label of
its own, drawn at random from the task's label distribution, so only memorising word identities
solves it. Selectivity = task accuracy - control accuracy: a good probe of a good layer is
accurate on the task and poor on the control.

    control_labels(words, distribution, seed)
        each word's control label: a function of the word's text and the seed alone (the
        same type gets the same label in every split and sentence), drawn from `distribution`
        ({label: probability}: the task's labels' frequencies among the training words) by
        the inverse of its cumulative distribution at a uniform number hashed from
        (seed, word). Types met only in dev or test get their labels the same way.
    label_distribution(labels)  {label: share} of a sequence of labels, labels in sorted order

Example:
    >>> distribution = label_distribution(["NOUN", "NOUN", "VERB", "DET"])
    >>> distribution
    {'DET': 0.25, 'NOUN': 0.5, 'VERB': 0.25}
    >>> a = control_labels(["the", "dog", "the"], distribution, seed=1)
    >>> a[0] == a[2], set(a) <= set(distribution)
    (True, True)
"""

from __future__ import annotations

import collections
import hashlib
from typing import Sequence

import numpy as np


def label_distribution(labels: Sequence[str]) -> dict[str, float]:
    counts = collections.Counter(labels)
    total = sum(counts.values())
    return {label: counts[label] / total for label in sorted(counts)}


def _uniform(seed: int, word: str) -> float:
    """A number in [0, 1) from (seed, word): the top 53 bits of their sha256."""
    digest = hashlib.sha256(f"{seed}\t{word}".encode("utf-8")).digest()
    return (int.from_bytes(digest[:8], "big") >> 11) / float(1 << 53)


def control_labels(words: Sequence[str], distribution: dict[str, float],
                   seed: int) -> list[str]:
    labels = list(distribution)
    cumulative = np.cumsum([distribution[label] for label in labels])
    cumulative[-1] = 1.0  # rounding must not leave the last label unreachable
    memo: dict[str, str] = {}
    out = []
    for word in words:
        if word not in memo:
            index = int(np.searchsorted(cumulative, _uniform(seed, word), side="right"))
            memo[word] = labels[min(index, len(labels) - 1)]
        out.append(memo[word])
    return out
