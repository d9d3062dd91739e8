"""The classifier export: raw texts (or text pairs) -> class probabilities and label, in the graph.

    serving_default(text_a: string [batch]                      single-text tasks (CoLA, SST-2)
                    text_a, text_b: string [batch] each)        pair tasks (MNLI, MRPC, ...)
      -> probabilities  float32 [batch, num_labels]  softmax of the logits
         label          string  [batch]              the most probable of the task's labels
      or, for a regression task (STS-B: one output, no labels),
      -> score          float32 [batch]

Tokenisation is the project's `FullTokenizer` and packing the original's (`packing`), so a
text is served exactly as `data_prep.classifier_features` fed it to fine-tuning. A text_b that
tokenizes to nothing makes a single-text row, as in the original. The model runs in its own
function, compiled by XLA when `jit_compile` (the tokenizer's string ops cannot be).
"""

from __future__ import annotations

from typing import Sequence

import tensorflow as tf

from official.export import packing
from official.export.saving import TaskExport
from official.modeling.models import BertClassifier
from official.text.tokenizer import FullTokenizer

_STRINGS = tf.TensorSpec([None], tf.string)


class ClassifierExport(TaskExport):
    """A `BertClassifier` serving raw text (see the module docstring).

    Args:
      model: the fine-tuned classifier, weights loaded.
      tokenizer: its tokenizer.
      labels: the task's labels in output order; None for regression (num_labels 1).
      max_seq_length: the fine-tuning's max_seq_length.
      pair: whether the task takes text pairs (the signature then has text_b).
      jit_compile: compile the model's part of the graph with XLA.
    """

    def __init__(self, model: BertClassifier, tokenizer: FullTokenizer,
                 labels: Sequence[str] | None, max_seq_length: int, pair: bool,
                 jit_compile: bool = False):
        if labels is None and model.num_labels != 1:
            raise ValueError(f"regression (no labels) needs 1 output, the model has "
                             f"{model.num_labels}")
        if labels is not None and len(labels) != model.num_labels:
            raise ValueError(f"{len(labels)} labels for a model of {model.num_labels} outputs")
        if max_seq_length < 3:
            raise ValueError(f"max_seq_length must be at least 3, got {max_seq_length}")
        super().__init__(model, tokenizer)
        self._labels = None if labels is None else list(labels)
        self._max_seq_length = max_seq_length
        self._pair = pair
        self._logits = tf.function(lambda inputs: self.model(inputs, training=False),
                                   jit_compile=jit_compile, autograph=False)

    def preprocess(self, text_a: tf.Tensor, text_b: tf.Tensor | None = None) -> dict:
        """[batch] strings -> the encoder inputs, int32 [batch, max_seq_length] each."""
        if text_b is None:
            segments = [self._tokenizer.tokenize_tf(text_a)]
        else:
            check = tf.debugging.assert_equal(
                tf.size(text_a), tf.size(text_b),
                message="text_a and text_b must have the same number of texts")
            with tf.control_dependencies([check]):
                both = self._tokenizer.tokenize_tf(tf.concat([text_a, text_b], 0))
            half = tf.size(text_a)
            segments = [both[:half], both[half:]]
        return packing.pack_inputs(segments, self._max_seq_length, self._cls_id, self._sep_id)

    def predict(self, text_a: tf.Tensor, text_b: tf.Tensor | None = None) -> dict:
        logits = self._logits(self.preprocess(text_a, text_b))
        if self._labels is None:
            return {"score": logits[:, 0]}
        best = tf.argmax(logits, axis=-1, output_type=tf.int32)
        return {"probabilities": tf.nn.softmax(logits),
                "label": tf.gather(tf.constant(self._labels), best)}

    def signatures(self) -> dict:
        """`serving_default`: text_a (and text_b for pairs) -> the outputs above."""
        if self._pair:
            serve = tf.function(self.predict, input_signature=[
                tf.TensorSpec([None], tf.string, name="text_a"),
                tf.TensorSpec([None], tf.string, name="text_b")], autograph=False)
        else:
            serve = tf.function(lambda text_a: self.predict(text_a), input_signature=[
                tf.TensorSpec([None], tf.string, name="text_a")], autograph=False)
        return {"serving_default": serve.get_concrete_function()}
