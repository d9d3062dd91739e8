"""Which of the encoder's layers a feature-based model reads, and how it combines them: the rule
of the BERT paper's feature-based NER (Devlin et al. 2019, section 5.3, Table 7), in one place.

Layers are numbered as in probing work: 0 is the embedding layer's output (word + position +
segment embeddings after their LayerNorm, through ALBERT's projection if any: what
`encoder.embed(ids, type_ids)` returns),
1 .. L the transformer layers' outputs (L = num_hidden_layers; L is `sequence_output`).

    name                  layers              combine   features [batch, seq_len, ...]
    embeddings            0                   one       hidden
    second_to_last        L - 1               one       hidden
    last                  L                   one       hidden
    concat_last_4         L-3, L-2, L-1, L    concat    4 * hidden (concatenated on the last axis)
    weighted_sum_last_4   L-3, L-2, L-1, L    mix       hidden (official/modeling/scalar_mix.py)
    weighted_sum_all      0, 1, .., L         mix       hidden

weighted_sum_all mixes the embedding layer's output too: L + 1 layers, not the paper's "all 12
layers". The paper does not say whether its 12 include the embeddings; ELMo's scalar mix, where
the weighted sum comes from, and Tenney et al.'s probes both include layer 0, and a learned
softmax can give it no weight when it does not help, while leaving it out could not be undone.

This module imports no TensorFlow: run_ner checks a choice against the model's depth before
TensorFlow loads (official/tasks/ner_settings.py), and official/modeling/feature_tagger.py builds
from the same rule.

Example:
    >>> choose("concat_last_4", 6)
    LayerChoice(layers=(3, 4, 5, 6), combine='concat')
    >>> choose("weighted_sum_all", 2)
    LayerChoice(layers=(0, 1, 2), combine='mix')
    >>> choose("weighted_sum_last_4", 2)
    Traceback (most recent call last):
    ...
    ValueError: weighted_sum_last_4 reads the last 4 transformer layers: the model has 2
"""

from __future__ import annotations

import dataclasses

# In Table 7's order, the paper's best first.
CHOICES = ("concat_last_4", "weighted_sum_last_4", "weighted_sum_all", "second_to_last", "last",
           "embeddings")
# The choices that read transformer layers counted from the last: (how many, how many above
# them are skipped, combine).
_FROM_TOP = {"concat_last_4": (4, 0, "concat"), "weighted_sum_last_4": (4, 0, "mix"),
             "second_to_last": (1, 1, "one"), "last": (1, 0, "one")}


@dataclasses.dataclass(frozen=True)
class LayerChoice:
    """The layers read (0: the embeddings' output; 1..L: the transformer layers') and how they
    combine: "one" (a single layer as it is), "concat" (on the hidden axis) or "mix" (a
    ScalarMix)."""
    layers: tuple[int, ...]
    combine: str


def choose(name: str, num_hidden_layers: int) -> LayerChoice:
    """The layers `name` (one of CHOICES) reads of a model of `num_hidden_layers` layers.

    Raises:
      ValueError: an unknown name, or a model with fewer layers than the choice reads.
    """
    if name == "embeddings":
        return LayerChoice((0,), "one")
    if name == "weighted_sum_all":
        return LayerChoice(tuple(range(num_hidden_layers + 1)), "mix")
    if name not in _FROM_TOP:
        raise ValueError(f"{name!r} is not one of {', '.join(CHOICES)}")
    count, skip, combine = _FROM_TOP[name]
    if num_hidden_layers < count + skip:
        what = "the second-to-last transformer layer" if skip else \
            f"the last {count} transformer layers"
        raise ValueError(f"{name} reads {what}: the model has {num_hidden_layers}")
    top = num_hidden_layers - skip
    return LayerChoice(tuple(range(top - count + 1, top + 1)), combine)
