"""The sentence-encoder export: raw strings -> one float32 vector per string, for search,
deduplication and clustering.

    serving_default(text: string [batch]) -> embeddings  float32 [batch, hidden]

The text is tokenized in the graph (the project's FullTokenizer), laid out as [CLS] text [SEP]
and cut to max_seq_length (`packing`; a batch's rows are as long as its longest text needs), run
through the encoder and pooled as `official/modeling/sentence_pooling.py` says (mean by default,
padding left out), unit length when `normalize`. Any batch size; loadable with tensorflow +
tensorflow_text alone. With
all-MiniLM-L6-v2's weights and its folder's settings (mean, normalized, 256 tokens) the vectors
are sentence-transformers' `encode(..., normalize_embeddings=True)`
(bench/sentence_embeddings.py).
"""

from __future__ import annotations

import tensorflow as tf

from official.export import packing
from official.export.saving import TaskExport
from official.modeling.models import BertSentenceEncoder
from official.text.tokenizer import FullTokenizer


class SentenceEncoderExport(TaskExport):
    """A `BertSentenceEncoder` serving raw text (see the module docstring).

    Args:
      model: the sentence encoder, weights loaded (its pooling and normalize are served).
      tokenizer: its tokenizer.
      max_seq_length: rows are cut to this many tokens, [CLS] and [SEP] included.
      jit_compile: compile the model's part of the graph with XLA.
    """

    def __init__(self, model: BertSentenceEncoder, tokenizer: FullTokenizer,
                 max_seq_length: int, jit_compile: bool = False):
        if max_seq_length < 2:
            raise ValueError(f"max_seq_length must be at least 2, got {max_seq_length}")
        super().__init__(model, tokenizer)
        self._max_seq_length = max_seq_length
        self._embed = tf.function(lambda inputs: self.model(inputs, training=False),
                                  jit_compile=jit_compile, autograph=False)

    def embed(self, text: tf.Tensor) -> dict:
        """[batch] strings -> {"embeddings": float32 [batch, hidden]}."""
        tokens = packing.as_tokens(self._tokenizer.tokenize_tf(text))
        # Rows as long as the batch's longest text needs (padding is never pooled): short
        # texts do not pay for max_seq_length.
        longest = tf.reduce_max(tf.concat([tf.cast(tokens.row_lengths(), tf.int32), [0]], 0))
        inputs = packing.pack_inputs([tokens], tf.minimum(longest + 2, self._max_seq_length),
                                     self._cls_id, self._sep_id)
        return {"embeddings": self._embed(inputs)}

    def signatures(self) -> dict:
        serve = tf.function(self.embed, input_signature=[
            tf.TensorSpec([None], tf.string, name="text")], autograph=False)
        return {"serving_default": serve}
