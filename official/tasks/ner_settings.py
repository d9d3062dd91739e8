"""NER's feature-based setting (the BERT paper's Table 7): `FeatureBasedSettings`, checked once,
without TensorFlow.

    --feature_based=NAME     the encoder frozen (official/peft/frozen.py), the layers NAME
                             chooses (official/modeling/feature_layers.py: concat_last_4,
                             weighted_sum_last_4, weighted_sum_all, second_to_last, last,
                             embeddings) under a two-layer BiLSTM and a tag classifier
                             (official/modeling/feature_tagger.py)
    --feature_lstm_units=N   each LSTM direction's units (default 768, the paper's BERT-Base
                             runs; fewer on a CPU)

    --mix_layers             fine-tuning (not feature-based): the tagger reads a learned mix of
                             every transformer layer (`TaggerSettings`), not the last alone; the
                             run writes tagger.json (`TAGGER_FILE`) beside its checkpoints so its
                             export rebuilds the same model

Shared by run_ner (flags, checked before TensorFlow loads), the NER task (its model, and its
serving spec's "feature_based" entry, which peft_config.json keeps) and the NER export (the same
model rebuilt from the spec). Without the setting NER fine-tunes BertTokenClassifier as before.

Example:
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

from official.modeling import feature_layers

SPEC_KEY = "feature_based"  # the setting's entry in the NER task's serving spec
DEFAULT_LSTM_UNITS = 768
TAGGER_FILE = "tagger.json"


@dataclasses.dataclass(frozen=True)
class TaggerSettings:
    """What a fine-tuned tagger reads of its encoder: the last layer, or with `mix_layers` a
    learned mix of every transformer layer (official/modeling/models.py BertTokenClassifier)."""
    mix_layers: bool = False


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
