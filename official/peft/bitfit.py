"""BitFit (Ben Zaken, Ravfogel and Goldberg 2022, "BitFit: Simple Parameter-efficient Fine-tuning
for Transformer-based Masked Language-models"): only the encoder's bias terms train, with the
task head.

The bias terms are every `bias` of the encoder's projections (query, key, value, attention
output, the feed-forward's two, the pooler's) and every LayerNorm's beta, the paper's b^(.)
terms: about 0.08% of BERT-Base's parameters, within about a point of full fine-tuning on GLUE
dev in the paper's Table 1. Nothing is inserted, so the model's shape is the base's and the
trained biases are plain BERT weights: a run folds by taking them as they are, and converts and
serves as a plain model.
"""

from __future__ import annotations

import dataclasses

from official.peft.method import Flag, PeftMethod, PeftSettings


@dataclasses.dataclass(frozen=True, kw_only=True)
class BitFitSettings(PeftSettings):
    """BitFit has no size: the bias terms are what trains."""
    method = "bitfit"

    @classmethod
    def from_flags(cls, bitfit: bool, train_pooler: bool) -> BitFitSettings:
        return cls(train_pooler=train_pooler)

    def title(self) -> str:
        return "BitFit (bias terms)"


def _trains(name: str, settings: BitFitSettings) -> bool:
    return name.endswith(("/bias", "/LayerNorm/beta"))


METHOD = PeftMethod(
    name=BitFitSettings.method, title="BitFit", settings=BitFitSettings,
    flags=(Flag("bitfit", bool, False,
                "BitFit: train only the encoder's bias terms (every bias and LayerNorm beta) "
                "and the task head (the pooler's kernel too with --peft_train_pooler); "
                "output_dir keeps only those."),),
    insert=lambda encoder, settings: None, trains=_trains, fold=lambda weights, settings: weights)
