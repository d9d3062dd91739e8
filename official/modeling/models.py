"""Trainable wholes: a `BertEncoder` plus the heads of one job.

    BertPretrainer        masked LM + next sentence (run_pretraining)
    BertClassifier        pooled output -> num_labels logits, or 1 score for regression
    BertDocumentClassifier  a document's windows -> one document's logits (--long_doc=windows)
    BertSentenceEncoder   tokens' last-layer vectors pooled into one vector per text (no head)
    BertSpanLabeler       each token -> start and end logits (SQuAD)
    BertTokenClassifier   each token -> num_labels logits (NER)

Each is a functional Keras model whose `encoder` attribute is the shared `BertEncoder`, its graph
built by `encoder.forward` (the encoder's layers called directly) and then `head_outputs` (its
heads); inputs are the encoder's Hub-convention dict (plus `masked_lm_positions` for the
pretrainer). A model that also needs what lies between (a distillation's hidden states and
attention, official/distillation/) calls the two itself on the same layers. Each declares what
its training checkpoints hold, `checkpoint_items`: the encoder, and its heads by name
(official/checkpoints/training.py refuses a model with a trainable variable outside them).
"""

import keras
from keras import ops

from official.modeling.encoder import BertEncoder, encoder_inputs
from official.modeling.heads import DenseLogits, MaskedLMHead
from official.modeling.scalar_mix import ScalarMix
from official.modeling.sentence_pooling import SentencePooling
from official.modeling.window_pooling import WindowPooling


class _EncoderModel(keras.Model):
    """Shared plumbing: the encoder is serialised inside the model's config; the checkpoint
    roots are the encoder and the heads a model names in `checkpoint_heads`. `reads_pooler`:
    whether a head reads the pooled output (a span or token head never does, and its pooler
    gets no gradient)."""

    reads_pooler = True
    # What `head_outputs` reads of the last layer: "first" ([CLS] alone, see
    # BertEncoder.forward) for a head on the pooled output, "all" for one on the sequence.
    last_layer_positions = "all"

    def _build_graph(self, encoder: BertEncoder, inputs: dict, **kwargs) -> None:
        """The functional graph: the encoder's forward pass (`encode`), then the heads."""
        encoded = self.encode(encoder, inputs)
        super().__init__(inputs=inputs, outputs=self.head_outputs(encoded, inputs), **kwargs)

    def encode(self, encoder: BertEncoder, inputs: dict):
        """What the heads read: `encoder.forward(inputs)`, unless a model reads otherwise (a
        frozen encoder's every layer, official/modeling/feature_tagger.py)."""
        return encoder.forward(inputs, last_layer_positions=self.last_layer_positions)

    def head_outputs(self, encoded: dict, inputs: dict):
        """The model's outputs from `encoded`, the outputs of `encoder.forward(inputs)` (any
        `last_layer_positions`): what its heads compute."""
        raise NotImplementedError(f"{type(self).__name__} must define its heads' outputs")

    @property
    def checkpoint_heads(self) -> dict[str, keras.layers.Layer]:
        raise NotImplementedError(f"{type(self).__name__} must name its heads")

    @property
    def checkpoint_items(self) -> dict:
        """{"encoder": the BertEncoder, "heads": {name: layer}}: a training checkpoint's roots."""
        return {"encoder": self.encoder, "heads": self.checkpoint_heads}

    def get_config(self):
        return {"encoder": keras.layers.serialize(self.encoder), "name": self.name,
                **self._head_config()}

    def _head_config(self) -> dict:
        return {}

    @classmethod
    def from_config(cls, config):
        config = dict(config, encoder=keras.layers.deserialize(config["encoder"]))
        return cls(**config)


@keras.saving.register_keras_serializable(package="official")
class BertPretrainer(_EncoderModel):
    """Encoder + masked-LM head + next-sentence head.

    Inputs: the encoder inputs and `masked_lm_positions` int32 [batch, max_predictions_per_seq].
    Outputs: `masked_lm_logits` float32 [batch, max_predictions_per_seq, vocab_size] and
    `next_sentence_logits` float32 [batch, 2] (index 0 = "B follows A", as the original).
    """

    def __init__(self, encoder: BertEncoder, **kwargs):
        config = encoder.config
        self.encoder = encoder
        self.masked_lm = MaskedLMHead(encoder.embeddings, config.hidden_act,
                                      config.initializer_range, dtype=encoder.dtype_policy,
                                      name="masked_lm")
        self.next_sentence = DenseLogits(2, 0.0, config.initializer_range,
                                         dtype=encoder.dtype_policy, name="next_sentence")

        inputs = dict(encoder_inputs(),
                      masked_lm_positions=keras.Input((None,), dtype="int32",
                                                      name="masked_lm_positions"))
        self._build_graph(encoder, inputs, **kwargs)

    def head_outputs(self, encoded, inputs):
        return {"masked_lm_logits": self.masked_lm(encoded["sequence_output"],
                                                   inputs["masked_lm_positions"]),
                "next_sentence_logits": self.next_sentence(encoded["pooled_output"])}

    @property
    def checkpoint_heads(self):
        return {"masked_lm": self.masked_lm, "next_sentence": self.next_sentence}


class _LabelsModel(_EncoderModel):
    """A model whose head is one `classifier` (DenseLogits: dropout, then a dense layer to
    `num_labels` logits) on the encoder's vectors. Its checkpoint's roots are the encoder and
    the classifier, the original run_classifier's and run_ner's."""

    def _add_classifier(self, encoder: BertEncoder, num_labels: int) -> None:
        self.encoder = encoder
        self.num_labels = num_labels
        self.classifier = DenseLogits(num_labels, encoder.config.hidden_dropout_prob,
                                      encoder.config.initializer_range,
                                      dtype=encoder.dtype_policy, name="classifier")

    @property
    def checkpoint_heads(self):
        return {"classifier": self.classifier}

    def _head_config(self):
        return {"num_labels": self.num_labels}


@keras.saving.register_keras_serializable(package="official")
class BertClassifier(_LabelsModel):
    """Sentence (pair) classification as run_classifier: dropout + dense on the pooled output.

    Outputs float32 [batch, num_labels] logits; with num_labels=1 the single column is a
    regression score (STS-B). The last layer is computed at [CLS] only, all the pooled output
    reads (see `BertEncoder.forward`).
    """

    last_layer_positions = "first"

    def __init__(self, encoder: BertEncoder, num_labels: int, **kwargs):
        self._add_classifier(encoder, num_labels)
        self._build_graph(encoder, encoder_inputs(), **kwargs)

    def head_outputs(self, encoded, inputs):
        return self.classifier(encoded["pooled_output"])


@keras.saving.register_keras_serializable(package="official")
class BertDocumentClassifier(_LabelsModel):
    """A document longer than one row classified from all its windows (--long_doc=windows,
    official/tasks/long_doc_settings.py): BertClassifier's head on each window, the windows
    pooled into one prediction per document by `window_pool`:

        mean_logits, max_logits   the windows' logits pooled (official/modeling/window_pooling.py)
        mean_cls                  the windows' last-layer [CLS] vectors averaged, then the
                                  pooler and the classifier

    Inputs: the encoder inputs, int32 [windows, seq_len], the windows of several documents, and
    `window_document` int32 [windows], each window's document (0 .. documents - 1).
    Outputs: {"logits": float32 [documents, num_labels], "window_logits": float32 [windows,
    num_labels], each window's own logits}. The checkpoint's roots are BertClassifier's
    (encoder and classifier), so either model reads the other's fine-tuned weights.
    """

    last_layer_positions = "first"

    def __init__(self, encoder: BertEncoder, num_labels: int, window_pool: str = "mean_logits",
                 **kwargs):
        self._add_classifier(encoder, num_labels)
        self.window_pool = window_pool
        self.pooling = WindowPooling(window_pool.split("_")[0], name="window_pooling")
        inputs = dict(encoder_inputs(),
                      window_document=keras.Input((), dtype="int32", name="window_document"))
        self._build_graph(encoder, inputs, **kwargs)

    def window_vectors(self, encoded: dict, window_logits=None):
        """What is pooled of each window: its last-layer [CLS] vector (mean_cls), else its
        logits (`window_logits` when already computed)."""
        if self.window_pool == "mean_cls":
            return encoded["sequence_output"][:, 0, :]
        return self.classifier(encoded["pooled_output"]) if window_logits is None \
            else window_logits

    def document_logits(self, pooled):
        """float32 [documents, num_labels] from the pooled window vectors."""
        if self.window_pool == "mean_cls":
            return self.classifier(self.encoder.pooler(pooled))
        return pooled

    def head_outputs(self, encoded, inputs):
        window_logits = self.classifier(encoded["pooled_output"])
        pooled = self.pooling(self.window_vectors(encoded, window_logits),
                              inputs["window_document"])
        return {"logits": self.document_logits(pooled), "window_logits": window_logits}

    def _head_config(self):
        return {**super()._head_config(), "window_pool": self.window_pool}


@keras.saving.register_keras_serializable(package="official")
class BertSentenceEncoder(_EncoderModel):
    """A text's vector for search, deduplication and clustering (sentence-transformers' shape):
    the last layer's token vectors pooled by `pooling` (official/modeling/sentence_pooling.py:
    mean, cls or max), unit length when `normalize`.

    Outputs float32 [batch, hidden]. No head and no pooler: the checkpoint is the encoder's.
    """

    reads_pooler = False

    def __init__(self, encoder: BertEncoder, pooling: str = "mean", normalize: bool = False,
                 **kwargs):
        self.encoder = encoder
        self.pooling, self.normalize = pooling, normalize
        self.sentence_pooling = SentencePooling(pooling, normalize, name="sentence_pooling")
        self._build_graph(encoder, encoder_inputs(), **kwargs)

    def head_outputs(self, encoded, inputs):
        return self.sentence_pooling(encoded["sequence_output"], inputs["input_mask"])

    @property
    def checkpoint_heads(self):
        return {}

    def _head_config(self):
        return {"pooling": self.pooling, "normalize": self.normalize}


@keras.saving.register_keras_serializable(package="official")
class BertSpanLabeler(_EncoderModel):
    """Extractive QA as run_squad: one dense layer maps each token to (start, end) logits.

    Outputs `start_logits` and `end_logits`, float32 [batch, seq_len] each.
    """

    reads_pooler = False

    def __init__(self, encoder: BertEncoder, **kwargs):
        self.encoder = encoder
        self.span = DenseLogits(2, 0.0, encoder.config.initializer_range,
                                dtype=encoder.dtype_policy, name="span")
        self._build_graph(encoder, encoder_inputs(), **kwargs)

    def head_outputs(self, encoded, inputs):
        logits = self.span(encoded["sequence_output"])
        return {"start_logits": logits[:, :, 0], "end_logits": logits[:, :, 1]}

    @property
    def checkpoint_heads(self):
        return {"span": self.span}


@keras.saving.register_keras_serializable(package="official")
class BertTokenClassifier(_LabelsModel):
    """Token tagging (NER): dropout + dense on every token's vector: the last layer's, or with
    `mix_layers` a learned mix of every transformer layer's, [batch, seq_len, hidden] (a
    ScalarMix trained with the encoder and the classifier: layer aggregation for cross-lingual
    transfer, Chen et al. 2022; the lower layers hold more of what languages share).

    Outputs float32 [batch, seq_len, num_labels] logits.
    """

    reads_pooler = False

    def __init__(self, encoder: BertEncoder, num_labels: int, mix_layers: bool = False,
                 **kwargs):
        self._add_classifier(encoder, num_labels)
        self.mix_layers = mix_layers
        self.scalar_mix = (ScalarMix(encoder.config.num_hidden_layers,
                                     dtype=encoder.dtype_policy, name="scalar_mix")
                           if mix_layers else None)
        self._build_graph(encoder, encoder_inputs(), **kwargs)

    def encode(self, encoder, inputs):
        return encoder.forward(inputs, per_layer_outputs=self.mix_layers)

    def head_outputs(self, encoded, inputs):
        if self.scalar_mix is None:
            return self.classifier(encoded["sequence_output"])
        return self.classifier(self.scalar_mix(ops.stack(encoded["encoder_outputs"])))

    @property
    def checkpoint_heads(self):
        mix = {"scalar_mix": self.scalar_mix} if self.scalar_mix is not None else {}
        return {**mix, "classifier": self.classifier}

    def _head_config(self):
        return {**super()._head_config(), "mix_layers": self.mix_layers}
