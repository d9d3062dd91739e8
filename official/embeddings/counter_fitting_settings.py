"""Counter-fitting's settings (official/embeddings/counter_fitting.py), checked without
TensorFlow: the paper's hyperparameters and the descent's."""

from __future__ import annotations

import dataclasses


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
        if self.learning_rate <= 0:
            raise ValueError(f"--learning_rate={self.learning_rate}: must be positive")
