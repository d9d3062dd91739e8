"""The classifier export: raw texts (or text pairs) -> class probabilities and label, in the graph.

    serving_default(text_a: string [batch]                      single-text tasks (CoLA, SST-2)
                    text_a, text_b: string [batch] each)        pair tasks (MNLI, MRPC, ...)
      -> probabilities  float32 [batch, num_labels]  softmax of the logits
         label          string  [batch]              the most probable of the task's labels
      or, for a regression task (STS-B: one output, no labels),
      -> score          float32 [batch]

    class_labels()  -> string [num_labels]   the labels in the order of the probabilities'
                                             columns; absent from a regression export

`class_labels` is a saved function without inputs beside the signature (`loaded.class_labels()`),
so a reader of the probabilities (official/robustness/classifier.py) knows which column is which
without the run's records.

Tokenisation is the project's `FullTokenizer` and packing the original's (`packing`), so a
text is served exactly as `data_prep.classifier_features` fed it to fine-tuning. A text_b that
tokenizes to nothing makes a single-text row, as in the original. The model runs in its own
function, compiled by XLA when `jit_compile` (the tokenizer's string ops cannot be).

A run that read long documents otherwise (official/tasks/long_doc_settings.py) is served the
same way: head_tail cuts each text as its records were cut; windows serves a text of any length,
its windows made in the graph (official/features/long_text.py), run through the encoder
`window_batch_size` rows at a time (so memory is bounded by that, not by the text: a
100,000-word text costs the same peak as a short one), pooled as in training, with one more
output:
         num_windows    int32   [batch]              the windows each text was read in
"""

from __future__ import annotations

from typing import Sequence

import tensorflow as tf

from official.export import packing
from official.export.saving import TaskExport
from official.features.long_text import head_tail, window_rows
from official.modeling.models import BertClassifier, BertDocumentClassifier
from official.modeling.window_pooling import pool_windows
from official.tasks.long_doc_settings import LongDocSettings
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
      long_doc: how the run read long documents (resolved); windows needs the model to be a
        `BertDocumentClassifier`.
      window_batch_size: windows: the rows the encoder runs at a time.
    """

    def __init__(self, model: BertClassifier | BertDocumentClassifier,
                 tokenizer: FullTokenizer, labels: Sequence[str] | None, max_seq_length: int,
                 pair: bool, jit_compile: bool = False,
                 long_doc: LongDocSettings = LongDocSettings(), window_batch_size: int = 32):
        if labels is None and model.num_labels != 1:
            raise ValueError(f"regression (no labels) needs 1 output, the model has "
                             f"{model.num_labels}")
        if labels is not None and len(labels) != model.num_labels:
            raise ValueError(f"{len(labels)} labels for a model of {model.num_labels} outputs")
        if max_seq_length < 3:
            raise ValueError(f"max_seq_length must be at least 3, got {max_seq_length}")
        if long_doc.windows != isinstance(model, BertDocumentClassifier):
            wanted = BertDocumentClassifier if long_doc.windows else BertClassifier
            raise ValueError(f"--long_doc={long_doc.long_doc} is served by a "
                             f"{wanted.__name__}, not a {type(model).__name__}")
        if window_batch_size < 1:
            raise ValueError(f"window_batch_size must be at least 1, got {window_batch_size}")
        super().__init__(model, tokenizer)
        self._labels = None if labels is None else list(labels)
        self._max_seq_length = max_seq_length
        self._pair = pair
        self._long_doc = long_doc
        self._window_batch_size = window_batch_size
        self._logits = tf.function(lambda inputs: self.model(inputs, training=False),
                                   jit_compile=jit_compile, autograph=False)
        self._window_vectors = tf.function(self._vectors_of_windows, jit_compile=jit_compile,
                                           autograph=False)
        if labels is not None:  # constants of the function's graph, saved with it
            names = list(labels)
            self.class_labels = tf.function(lambda: tf.constant(names, tf.string),
                                            input_signature=[], autograph=False)

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
        if self._long_doc.long_doc == "head_tail":
            segments = [head_tail(packing.as_tokens(segments[0]), self._long_doc.head_tokens,
                                  self._max_seq_length - 2)]
        return packing.pack_inputs(segments, self._max_seq_length, self._cls_id, self._sep_id)

    def _vectors_of_windows(self, input_word_ids: tf.Tensor, input_mask: tf.Tensor) -> tf.Tensor:
        """float32 [window_batch_size, dim]: what the model pools of each of these windows."""
        encoded = self.model.encoder.forward(
            {"input_word_ids": input_word_ids, "input_mask": input_mask,
             "input_type_ids": tf.zeros_like(input_word_ids)},
            last_layer_positions="first", training=False)
        return tf.cast(self.model.window_vectors(encoded), tf.float32)

    def document_logits(self, text: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
        """(float32 [batch, num_labels] logits, int32 [batch] windows) of texts of any length:
        their windows run `window_batch_size` rows at a time (the last rows padded with
        [CLS] [SEP] rows), then pooled per text."""
        rows = window_rows(packing.as_tokens(self._tokenizer.tokenize_tf(text)),
                           self._max_seq_length, self._long_doc.doc_stride, self._cls_id,
                           self._sep_id)
        size = self._window_batch_size
        count = tf.shape(rows.input_word_ids)[0]
        batches = (count + size - 1) // size
        filler = tf.scatter_nd([[0], [1]], [self._cls_id, self._sep_id],
                               [self._max_seq_length])
        padding = tf.tile(filler[tf.newaxis], [batches * size - count, 1])
        word_ids = tf.concat([rows.input_word_ids, padding], 0)
        mask = tf.concat([rows.input_mask, tf.cast(padding > 0, tf.int32)], 0)
        dim = (self.model.encoder.config.hidden_size
               if self._long_doc.window_pool == "mean_cls" else self.model.num_labels)

        def step(i, vectors):
            batch = tf.range(i * size, (i + 1) * size)
            return i + 1, vectors.write(i, self._window_vectors(tf.gather(word_ids, batch),
                                                                tf.gather(mask, batch)))

        _, vectors = tf.while_loop(
            lambda i, _: i < batches, step,
            (0, tf.TensorArray(tf.float32, size=batches, element_shape=[size, dim])))
        vectors = vectors.concat()[:count]
        pooled = pool_windows(vectors, rows.window_document, self.model.pooling.how,
                              tf.size(text))
        return self.model.document_logits(pooled), rows.windows.count

    def predict(self, text_a: tf.Tensor, text_b: tf.Tensor | None = None) -> dict:
        outputs = {}
        if self._long_doc.windows:
            logits, outputs["num_windows"] = self.document_logits(text_a)
        else:
            logits = self._logits(self.preprocess(text_a, text_b))
        if self._labels is None:
            return dict(outputs, score=logits[:, 0])
        best = tf.argmax(logits, axis=-1, output_type=tf.int32)
        return dict(outputs, probabilities=tf.nn.softmax(logits),
                    label=tf.gather(tf.constant(self._labels), best))

    def signatures(self) -> dict:
        """`serving_default`: text_a (and text_b for pairs) -> the outputs above."""
        if self._pair:
            serve = tf.function(self.predict, input_signature=[
                tf.TensorSpec([None], tf.string, name="text_a"),
                tf.TensorSpec([None], tf.string, name="text_b")], autograph=False)
        else:
            serve = tf.function(lambda text_a: self.predict(text_a), input_signature=[
                tf.TensorSpec([None], tf.string, name="text_a")], autograph=False)
        return {"serving_default": serve}
