"""`SentenceEmbeddingSettings`: how run_sentence_embedding's encoder pools and how its loss scales
the cosines, checked once with no TensorFlow (the entry point refuses a bad value before it loads
it; official/tasks/sentence_embedding.py trains with them).

    --pooling    mean (sentence-transformers' default), cls or max (official/sentence_settings.py)
    --scale      the cosines' multiplier in the loss, the inverse of a softmax temperature
                 (sentence-transformers' default 20)
"""

from __future__ import annotations

import dataclasses
import math

from official.sentence_settings import DEFAULT_SETTINGS, POOLINGS

DEFAULT_SCALE = 20.0


@dataclasses.dataclass(frozen=True)
class SentenceEmbeddingSettings:
    """pooling (None: mean), scale, and the rows' max_seq_length; a bad value is a one-line
    ValueError naming its flag."""
    pooling: str | None = None
    scale: float = DEFAULT_SCALE
    max_seq_length: int = 128

    def __post_init__(self):
        if self.pooling is None:
            object.__setattr__(self, "pooling", DEFAULT_SETTINGS.pooling)
        if self.pooling not in POOLINGS:
            raise ValueError(f"--pooling must be one of {', '.join(POOLINGS)}, got "
                             f"{self.pooling!r}")
        if not (self.scale > 0 and math.isfinite(self.scale)):
            raise ValueError(f"--scale must be positive, got {self.scale}")
        object.__setattr__(self, "scale", float(self.scale))
