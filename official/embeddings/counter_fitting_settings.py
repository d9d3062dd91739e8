"""Counter-fitting's settings and constraints (official/embeddings/counter_fitting.py), checked
without TensorFlow: the paper's hyperparameters, the descent's, and which listed pairs count
(`pair_rows`: counter_fit_vectors refuses a list none of whose pairs counts before TensorFlow
loads)."""

from __future__ import annotations

import dataclasses
import math
from typing import Iterable

import numpy as np


@dataclasses.dataclass(frozen=True)
class CounterFitting:
    """The paper's hyperparameters (section 4), and the descent's."""
    delta: float = 1.0
    gamma: float = 0.0
    rho: float = 0.2
    k_antonyms: float = 0.1
    k_synonyms: float = 0.1
    k_preservation: float = 0.1
    epochs: int = 20
    learning_rate: float = 1.0

    def check(self) -> None:
        if self.epochs < 1:
            raise ValueError(f"--epochs={self.epochs}: must be at least 1")
        if not (self.learning_rate > 0 and math.isfinite(self.learning_rate)):
            raise ValueError(f"--learning_rate={self.learning_rate}: must be positive and finite")


def pair_rows(words: list[str], pairs: Iterable[tuple[str, str]]) -> np.ndarray:
    """int64 [pairs, 2]: the table rows of each distinct pair of two different known words (a
    pair listed both ways counts once)."""
    row = {word: i for i, word in enumerate(words)}
    found = sorted({tuple(sorted((row[a], row[b]))) for a, b in pairs
                    if a in row and b in row and a != b})
    return np.array(found, np.int64).reshape(-1, 2)
