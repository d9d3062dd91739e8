"""NER's settings, checked once, without TensorFlow: the feature-based setting (the BERT paper's
Table 7), `FeatureBasedSettings`, and what a tagger is beyond its weights, `TaggerSettings`.

    --feature_based=NAME     the encoder frozen (official/peft/frozen.py), the layers NAME
                             chooses (official/modeling/feature_layers.py: concat_last_4,
                             weighted_sum_last_4, weighted_sum_all, second_to_last, last,
                             embeddings) under a two-layer BiLSTM and a tag classifier
                             (official/modeling/feature_tagger.py)
    --feature_lstm_units=N   each LSTM direction's units (default 768, the paper's BERT-Base
                             runs; fewer on a CPU)

    --mix_layers             fine-tuning (not feature-based): the tagger reads a learned mix of
                             every transformer layer (`TaggerSettings`), not the last alone

What a tagger is beyond its weights, `TaggerSettings`, is the run's tagger.json (`TAGGER_FILE`),
written beside its checkpoints so that an evaluation-only rerun, its export and the API rebuild
the same model: whether it mixes layers, and its tags in output order unless they are
CoNLL-2003's. A run records nothing for CoNLL-2003's tags, as every run did before tags were
read from the training file, so the absence of a record means them (`TaggerSettings.tags`;
run_ner's reruns read a run of another format made before then as that format's tag set).

Shared by run_ner (flags, checked before TensorFlow loads), the NER task (its model, and its
serving spec's "feature_based" entry, which peft_config.json keeps) and the NER export (the same
model rebuilt from the spec). Without the setting NER fine-tunes BertTokenClassifier as before.

Example:
    >>> TaggerSettings.of(False, ("O", "B-Disease", "I-Disease")).tags()
    ['O', 'B-Disease', 'I-Disease']
    >>> TaggerSettings.of(False, CONLL2003_LABELS) == TaggerSettings()  # nothing recorded
    True
    >>> settings = FeatureBasedSettings("weighted_sum_last_4", lstm_units=128)
    >>> settings.to_spec()
    {'feature_based': {'layers': 'weighted_sum_last_4', 'lstm_units': 128}}
    >>> from_spec(settings.to_spec()) == settings, from_spec({"labels": ["O"]})
    (True, None)
    >>> FeatureBasedSettings("concat_last_4").check_depth(2)
    Traceback (most recent call last):
    ...
    ValueError: --feature_based=concat_last_4 reads the last 4 transformer layers: the model has 2
"""

from __future__ import annotations

import dataclasses
from typing import Sequence

from official.modeling import feature_layers
from official.tasks.ner_metrics import CONLL2003_LABELS

SPEC_KEY = "feature_based"  # the setting's entry in the NER task's serving spec
DEFAULT_LSTM_UNITS = 768
TAGGER_FILE = "tagger.json"


@dataclasses.dataclass(frozen=True)
class TaggerSettings:
    """A tagger beyond its weights, as its run's tagger.json keeps it.

    Attributes:
      mix_layers: a fine-tuned tagger reads a learned mix of every transformer layer, not the
        last layer alone (official/modeling/models.py BertTokenClassifier).
      labels: its tags in output order (a tag's id is its index), None for CoNLL-2003's: a run
        records only tags that are not (data_prep/conll.py `tag_set` chooses them).
    """
    mix_layers: bool = False
    labels: tuple[str, ...] | None = None

    @classmethod
    def of(cls, mix_layers: bool, labels: Sequence[str]) -> TaggerSettings:
        """The settings a run records for a tagger of these tags."""
        return cls(mix_layers, None if tuple(labels) == CONLL2003_LABELS else tuple(labels))

    def tags(self, unrecorded: Sequence[str] = CONLL2003_LABELS) -> list[str]:
        """The tags in output order: the recorded ones, else `unrecorded` (CoNLL-2003's)."""
        return list(unrecorded if self.labels is None else self.labels)


@dataclasses.dataclass(frozen=True)
class FeatureBasedSettings:
    """Attributes:
      layers: one of feature_layers.CHOICES.
      lstm_units: each LSTM direction's units (the BiLSTM's outputs are twice as wide).
    """
    layers: str
    lstm_units: int = DEFAULT_LSTM_UNITS

    def __post_init__(self):
        """The choices, however the settings were made (flags, or a record's spec read back)."""
        if self.layers not in feature_layers.CHOICES:
            raise ValueError(f"--feature_based: {self.layers!r} is not one of "
                             f"{', '.join(feature_layers.CHOICES)}")
        if isinstance(self.lstm_units, bool) or not isinstance(self.lstm_units, int) \
                or self.lstm_units < 1:
            raise ValueError(f"--feature_lstm_units must be a positive integer, got "
                             f"{self.lstm_units!r}")

    @classmethod
    def from_flags(cls, feature_based: str | None,
                   feature_lstm_units: int | None) -> FeatureBasedSettings | None:
        """The flags' setting; None without --feature_based.

        Raises:
          ValueError: --feature_lstm_units without --feature_based, or a bad value.
        """
        if feature_based is None:
            if feature_lstm_units is not None:
                raise ValueError("--feature_lstm_units is a setting of --feature_based: give "
                                 "both, or neither")
            return None
        return cls(feature_based, DEFAULT_LSTM_UNITS if feature_lstm_units is None
                   else feature_lstm_units)

    def check_depth(self, num_hidden_layers: int) -> None:
        """Raises ValueError naming the flag when a model of `num_hidden_layers` layers lacks
        the layers the choice reads."""
        try:
            feature_layers.choose(self.layers, num_hidden_layers)
        except ValueError as e:
            raise ValueError(f"--feature_based={e}") from None

    def to_spec(self) -> dict:
        """The setting's entry in a serving spec."""
        return {SPEC_KEY: dataclasses.asdict(self)}


def from_spec(spec: dict) -> FeatureBasedSettings | None:
    """The setting a serving spec holds (None: fine-tuning).

    Raises:
      ValueError: an entry that is not the setting's.
    """
    values = spec.get(SPEC_KEY)
    if values is None:
        return None
    if not isinstance(values, dict) or set(values) != {"layers", "lstm_units"}:
        raise ValueError(f"{SPEC_KEY} must be an object of layers and lstm_units, got {values!r}")
    return FeatureBasedSettings(**values)
