"""How a text's vector is made from its tokens' (official/modeling/sentence_pooling.py computes
it): `SentenceSettings`, and the names and defaults, with no TensorFlow (an entry point checks
them before it loads it).

    POOLINGS            mean (padding left out), cls ([CLS]'s vector), max (each component's)
    SentenceSettings    pooling, normalize (unit length), max_seq_length; None: not said
    DEFAULT_SETTINGS    what nothing else says: sentence-transformers' mean pooling, not
                        normalised, rows of 128 tokens

The settings come from flags, from a sentence-transformers folder
(official/checkpoints/sentence_transformers.py) or from the `sentence_encoder.json` record a
conversion or a run_sentence_embedding run leaves (`records.to_json` of them).
"""

from __future__ import annotations

import dataclasses

POOLINGS = ("mean", "cls", "max")


@dataclasses.dataclass(frozen=True)
class SentenceSettings:
    """pooling (one of POOLINGS), normalize (unit-length vectors), max_seq_length; None: not
    said (the default, or what another source says)."""
    pooling: str | None = None
    normalize: bool | None = None
    max_seq_length: int | None = None

    def __post_init__(self):
        if self.pooling is not None and self.pooling not in POOLINGS:
            raise ValueError(f"pooling must be one of {', '.join(POOLINGS)}, got "
                             f"{self.pooling!r}")
        if self.max_seq_length is not None and self.max_seq_length < 2:
            raise ValueError(f"max_seq_length must be at least 2, got {self.max_seq_length}")

    def over(self, other: SentenceSettings | None) -> SentenceSettings:
        """These settings, with `other`'s where these say nothing."""
        if other is None:
            return self
        return SentenceSettings(*(mine if mine is not None else theirs for mine, theirs in
                                  zip(dataclasses.astuple(self), dataclasses.astuple(other))))


DEFAULT_SETTINGS = SentenceSettings("mean", False, 128)
