"""The BERT paper's feature-based NER (section 5.3, Table 7): the frozen encoder's layers as
features under a two-layer BiLSTM and a tag classifier.

    BertFeatureTagger(encoder, num_labels, layers, lstm_units)
        inputs   the encoder's Hub-convention dict, int32 [batch, seq_len] each
        features the layers `layers` chooses (official/modeling/feature_layers.py: which, and
                 concatenated, mixed by a ScalarMix, or one as it is), computed by
                 `EncoderLayers` with the encoder in inference mode
                 -> [batch, seq_len, hidden] (4 * hidden for concat_last_4)
        bilstm   two bidirectional LSTM layers of `lstm_units` per direction, padding masked
                 (input_mask): a real position's output never depends on padding
                 -> [batch, seq_len, 2 * lstm_units]
        logits   dropout (the config's hidden_dropout_prob, as BertTokenClassifier's head) and a
                 dense layer -> float32 [batch, seq_len, num_labels]

The paper extracts the activations once and trains the BiLSTM on them; here the encoder runs
inside the model, frozen by official/peft/frozen.py (run_ner --feature_based applies it), so
exports and resumes are those of any NER run. The features are the paper's, and the same at
training and at serving, because the encoder runs in inference mode: no dropout inside it even
while the head trains (a Keras functional graph would pass the outer call's training=True to
every layer of the encoder; `EncoderLayers` calls it with training=False itself). The head's
dropout is the only noise.

The checkpoint's heads are the ScalarMix (when the choice mixes), the two BiLSTM layers and the
classifier; the encoder is the base's.

Example (a 2-layer encoder, the second-to-last layer: the first transformer layer's output):
    >>> import numpy as np
    >>> from official.configs import preset
    >>> from official.modeling.encoder import build_encoder
    >>> model = BertFeatureTagger(build_encoder(preset("tiny", vocab_size=100)), num_labels=5,
    ...                           layers="second_to_last", lstm_units=8)
    >>> ids = np.array([[2, 7, 9, 3, 0]], "int32")
    >>> inputs = {"input_word_ids": ids, "input_mask": (ids > 0).astype("int32"),
    ...           "input_type_ids": 0 * ids}
    >>> tuple(model(inputs).shape), sorted(model.checkpoint_heads)
    ((1, 5, 5), ['bilstm_0', 'bilstm_1', 'classifier'])
"""

import keras
from keras import ops

from official.modeling import feature_layers
from official.modeling.encoder import BertEncoder, encoder_inputs
from official.modeling.heads import DenseLogits
from official.modeling.models import _EncoderModel
from official.modeling.scalar_mix import ScalarMix

LSTM_LAYERS = 2  # the paper's "two-layer 768-dimensional BiLSTM"


class EncoderLayers(keras.layers.Layer):
    """Every layer's output of `encoder`, run in inference mode whatever the caller's training
    flag: [layer 0 (the embeddings' output), layer 1, ..., layer L], [batch, seq_len, hidden]
    each. Holds no variables of its own (the encoder's are the model's `encoder`)."""

    def __init__(self, encoder: BertEncoder, **kwargs):
        super().__init__(**kwargs)
        self.encoder = encoder

    def call(self, inputs):
        encoded = self.encoder.forward(inputs, per_layer_outputs=True, training=False)
        embedded = self.encoder.embed(inputs["input_word_ids"], inputs["input_type_ids"],
                                      training=False)
        return [embedded, *encoded["encoder_outputs"]]


@keras.saving.register_keras_serializable(package="official")
class BertFeatureTagger(_EncoderModel):
    """Token tagging on a frozen encoder's features (the module docstring).

    Args:
      encoder: the encoder (frozen by the run's method, official/peft/frozen.py).
      num_labels: the tags.
      layers: one of feature_layers.CHOICES.
      lstm_units: each LSTM direction's units.

    Outputs float32 [batch, seq_len, num_labels] logits.
    """

    reads_pooler = False

    def __init__(self, encoder: BertEncoder, num_labels: int, layers: str = "concat_last_4",
                 lstm_units: int = 768, **kwargs):
        config = encoder.config
        # Layers (`self.layers` is Keras's list of sublayers: the choice is `layer_choice`).
        self.encoder = encoder
        self.num_labels, self.layer_choice, self.lstm_units = num_labels, layers, lstm_units
        self.choice = feature_layers.choose(layers, config.num_hidden_layers)
        self.encoder_layers = EncoderLayers(encoder, name="encoder_layers")
        self.scalar_mix = (ScalarMix(len(self.choice.layers), dtype=encoder.dtype_policy,
                                     name="scalar_mix")
                           if self.choice.combine == "mix" else None)
        self.bilstm = [keras.layers.Bidirectional(
            keras.layers.LSTM(lstm_units, return_sequences=True, dtype=encoder.dtype_policy),
            dtype=encoder.dtype_policy, name=f"bilstm_{i}") for i in range(LSTM_LAYERS)]
        self.classifier = DenseLogits(num_labels, config.hidden_dropout_prob,
                                      config.initializer_range, dtype=encoder.dtype_policy,
                                      name="classifier")

        self._build_graph(encoder, encoder_inputs(), **kwargs)

    def encode(self, encoder, inputs):
        """EncoderLayers' outputs: every layer, 0 the embeddings', in inference mode."""
        return self.encoder_layers(inputs)

    def features(self, hidden_layers: list):
        """The chosen layers of `hidden_layers` (EncoderLayers' outputs) combined:
        [batch, seq_len, hidden], or [batch, seq_len, 4 * hidden] concatenated."""
        chosen = [hidden_layers[i] for i in self.choice.layers]
        if self.choice.combine == "concat":
            return ops.concatenate(chosen, axis=-1)
        if self.choice.combine == "mix":
            return self.scalar_mix(ops.stack(chosen))
        return chosen[0]

    def head_outputs(self, encoded, inputs):
        """The logits from `encoded`, `encode`'s layers."""
        mask = ops.cast(inputs["input_mask"], "bool")
        x = self.features(encoded)
        for lstm in self.bilstm:
            x = lstm(x, mask=mask)
        return self.classifier(x)

    @property
    def checkpoint_heads(self):
        heads = {"scalar_mix": self.scalar_mix} if self.scalar_mix is not None else {}
        return {**heads, **{lstm.name: lstm for lstm in self.bilstm},
                "classifier": self.classifier}

    def _head_config(self):
        return {"num_labels": self.num_labels, "layers": self.layer_choice,
                "lstm_units": self.lstm_units}
