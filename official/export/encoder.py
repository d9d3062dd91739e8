"""The TF Hub BERT encoder: encoder inputs -> pooled and sequence outputs, as a SavedModel.

A SavedModel of `HubEncoder` is used as Hub's BERT encoders are (TF Hub's "Encoder API for
text embeddings with Transformer encoders"):

    encoder = tf.saved_model.load(path)
    outputs = encoder(preprocessor(sentences))        # training=False by default
    outputs["pooled_output"]    # float32 [batch, hidden], tanh(W h_[CLS] + b)
    outputs["default"]          # the same tensor, Hub's alias
    outputs["sequence_output"]  # float32 [batch, seq_length, hidden]
    outputs["encoder_outputs"]  # [float32 [batch, seq_length, hidden]] * num_hidden_layers

    # only when the checkpoint has the masked-LM head (cls/predictions/*):
    outputs = encoder.mlm(dict(inputs, masked_lm_positions=positions))  # int32 [batch, P]
    outputs["mlm_logits"]       # float32 [batch, P, vocab_size], plus the outputs above

`encoder(inputs, training=True)` runs dropout, for fine-tuning; the object carries Hub's
`variables`, `trainable_variables` and `regularization_losses` lists, so `hub.KerasLayer(path,
trainable=True)` fine-tunes it. Like Hub's encoders it also carries the vocab as an asset
(`vocab_file`) and `do_lower_case`, for users who tokenize themselves.

TF Serving sees the `serving_default` signature (the three int32 inputs -> pooled_output,
default, sequence_output and encoder_outputs_0 ... encoder_outputs_{L-1}: a signature's outputs
are a flat dict) and, with the head, `mlm` (masked_lm_positions added -> mlm_logits too).
"""

from __future__ import annotations

import tensorflow as tf

from official.export.saving import ServingModule
from official.modeling.encoder import INPUT_NAMES, BertEncoder
from official.modeling.models import BertPretrainer
from official.text.tokenizer import FullTokenizer

_INPUTS = {name: tf.TensorSpec([None, None], tf.int32, name=name) for name in INPUT_NAMES}
_MLM_INPUTS = dict(_INPUTS, masked_lm_positions=tf.TensorSpec([None, None], tf.int32,
                                                              name="masked_lm_positions"))


def _hub_outputs(encoder: BertEncoder, inputs: dict, training: bool) -> dict:
    """Hub's outputs, float32 whatever the encoder computes in (official/export/precision.py)."""
    outputs = encoder({name: inputs[name] for name in INPUT_NAMES}, training=training)
    pooled = tf.cast(outputs["pooled_output"], tf.float32)
    return {"pooled_output": pooled, "default": pooled,
            "sequence_output": tf.cast(outputs["sequence_output"], tf.float32),
            "encoder_outputs": [tf.cast(x, tf.float32) for x in outputs["encoder_outputs"]]}


def _flat(outputs: dict) -> dict:
    """A signature's outputs: encoder_outputs as encoder_outputs_0, encoder_outputs_1, ..."""
    flat = {k: v for k, v in outputs.items() if k != "encoder_outputs"}
    flat.update({f"encoder_outputs_{i}": x for i, x in enumerate(outputs["encoder_outputs"])})
    return flat


class _MaskedLM(tf.Module):
    """`encoder.mlm`: the encoder inputs plus `masked_lm_positions` -> encoder outputs plus
    `mlm_logits` [batch, num_predictions, vocab_size]."""

    def __init__(self, pretrainer: BertPretrainer):
        super().__init__()
        object.__setattr__(self, "pretrainer", pretrainer)  # weights saved by HubEncoder's list

    @tf.function(autograph=False)
    def __call__(self, inputs, training=False):
        outputs = _hub_outputs(self.pretrainer.encoder, inputs, training)
        outputs["mlm_logits"] = self.pretrainer.masked_lm(outputs["sequence_output"],
                                                          inputs["masked_lm_positions"])
        return outputs


class HubEncoder(ServingModule):
    """Hub's BERT encoder API over a `BertEncoder` (see the module docstring).

    Args:
      encoder: the encoder, weights loaded.
      tokenizer: its tokenizer: the vocab becomes an asset, do_lower_case a variable.
      pretrainer: a `BertPretrainer` around `encoder` whose masked-LM head was loaded from the
        checkpoint, for the `.mlm` sub-object; None for none.
    """

    regularization_losses = None  # with `variables`, Hub's reusable-SavedModel API

    def __init__(self, encoder: BertEncoder, tokenizer: FullTokenizer,
                 pretrainer: BertPretrainer | None = None):
        super().__init__()
        if pretrainer is not None and pretrainer.encoder is not encoder:
            raise ValueError("the pretrainer must be built on the exported encoder")
        self.hold(encoder=encoder)
        self.vocab_file = tf.saved_model.Asset(tokenizer.vocab_file)
        self.do_lower_case = tf.Variable(tokenizer.do_lower_case, trainable=False,
                                         name="do_lower_case")
        self.track_variables(pretrainer if pretrainer is not None else encoder)
        self.regularization_losses = []
        if pretrainer is not None:
            self.mlm = _MaskedLM(pretrainer)
            for training in (False, True):
                self.mlm.__call__.get_concrete_function(_MLM_INPUTS, training)
        for training in (False, True):
            self.__call__.get_concrete_function(_INPUTS, training)

    @tf.function(autograph=False)
    def __call__(self, inputs, training=False):
        return _hub_outputs(self.encoder, inputs, training)

    def signatures(self) -> dict:
        """`serving_default` (and `mlm` with the head) for TF Serving: flat dicts of tensors."""
        serve = tf.function(lambda **inputs: _flat(self(inputs)), autograph=False)
        signatures = {"serving_default": serve.get_concrete_function(**_INPUTS)}
        if hasattr(self, "mlm"):
            mlm = tf.function(lambda **inputs: _flat(self.mlm(inputs)), autograph=False)
            signatures["mlm"] = mlm.get_concrete_function(**_MLM_INPUTS)
        return signatures
