"""The settings of static word vectors (official/embeddings/static_vectors.py), checked with no
TensorFlow (build_static_embeddings refuses a bad flag before it loads it).

    --layers                 0 (the embedding layer's output) to num_hidden_layers
    --subword_pool           how a word's WordPieces' vectors in one sentence make one vector
    --context_pool           how a word's vectors in its sentences make its static vector
    --max_contexts_per_word  the occurrences pooled (the first met)
"""

from __future__ import annotations

import dataclasses

from official.configs import BertConfig

SUBWORD_POOLS = ("mean", "max", "min", "last")
CONTEXT_POOLS = ("mean", "max", "min")


@dataclasses.dataclass(frozen=True)
class Settings:
    """How the vectors are made; `validate` checks them against the model, naming the flag."""
    layers: tuple[int, ...]  # 0 = the embedding layer's output, i = transformer layer i
    subword_pool: str = "mean"
    context_pool: str = "mean"
    max_contexts_per_word: int = 100
    max_seq_length: int = 128
    batch_size: int = 32

    def validate(self, config: BertConfig) -> None:
        top = config.num_hidden_layers
        if not self.layers:
            raise ValueError("--layers: no layer given")
        for layer in self.layers:
            if not 0 <= layer <= top:
                raise ValueError(f"--layers: layer {layer} is beyond the model's layers 0..{top} "
                                 "(0: the embeddings, then one per transformer layer)")
        if len(set(self.layers)) != len(self.layers):
            raise ValueError(f"--layers: a layer is listed twice in {list(self.layers)}")
        if self.subword_pool not in SUBWORD_POOLS:
            raise ValueError(f"--subword_pool: {self.subword_pool!r} is not one of "
                             f"{', '.join(SUBWORD_POOLS)}")
        if self.context_pool not in CONTEXT_POOLS:
            raise ValueError(f"--context_pool: {self.context_pool!r} is not one of "
                             f"{', '.join(CONTEXT_POOLS)}")
        if self.max_contexts_per_word < 1:
            raise ValueError(f"--max_contexts_per_word: must be at least 1, "
                             f"not {self.max_contexts_per_word}")
        config.check_seq_length(self.max_seq_length, "the model's config")
        if self.batch_size < 1:
            raise ValueError(f"--batch_size: must be at least 1, not {self.batch_size}")
