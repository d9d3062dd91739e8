"""The frozen encoder: nothing of the encoder trains, only the task head (and the pooler with
--peft_train_pooler, under a head that reads it).

It is the baseline every adaptation is measured against, under two names: the BERT paper's
feature-based approach (section 5.3, Table 7: contextual features of a frozen BERT under a
task model of their own; run_ner's --feature_based, official/modeling/feature_tagger.py, uses
this method) and, with a classifier's or a span labeler's one dense layer, the linear probe.

As a row of the PEFT table it costs nothing new: nothing is inserted, the checkpoints hold the
head alone (an empty `encoder_trained`), peft_config.json names the base by fingerprint, a
rerun resumes on the same base only, and an export restores the head on the base. Folding is
the identity: the encoder is the base's, bit for bit.
"""

from __future__ import annotations

import dataclasses

from official.peft.method import Flag, PeftMethod, PeftSettings


@dataclasses.dataclass(frozen=True, kw_only=True)
class FrozenSettings(PeftSettings):
    """A frozen encoder has no size: the head is what trains."""
    method = "frozen"

    @classmethod
    def from_flags(cls, freeze_encoder: bool, train_pooler: bool) -> FrozenSettings:
        return cls(train_pooler=train_pooler)

    def title(self) -> str:
        return "frozen encoder (the head alone trains)"


METHOD = PeftMethod(
    name=FrozenSettings.method, title="Frozen encoder", settings=FrozenSettings,
    flags=(Flag("freeze_encoder", bool, False,
                "Train the task head alone on a frozen encoder (the pooler too with "
                "--peft_train_pooler): the feature-based / linear-probe baseline; run_ner's "
                "--feature_based uses it. output_dir keeps only the head."),),
    insert=lambda encoder, settings: None, trains=lambda name, settings: False,
    fold=lambda weights, settings: weights)
