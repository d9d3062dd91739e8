"""The TF Hub BERT preprocessor: raw strings -> encoder inputs, in the graph.

A SavedModel of `BertPreprocessor` is used as Hub's `bert_*_preprocess` models are:

    preprocessor = tf.saved_model.load(path)          # after `import tensorflow_text`
    inputs = preprocessor(tf.constant(["a sentence"]))   # seq_length = the export's default
    # {"input_word_ids", "input_mask", "input_type_ids"}: int32 [batch, seq_length]

    tokens_a = preprocessor.tokenize(questions)        # int32 [batch, (words), (wordpieces)]
    tokens_b = preprocessor.tokenize(answers)
    inputs = preprocessor.bert_pack_inputs([tokens_a, tokens_b], seq_length=64)

    preprocessor.tokenize.get_special_tokens_dict()    # vocab_size, start_of_sequence_id, ...
    preprocessor.vocab_file.asset_path, preprocessor.do_lower_case   # the vocab (an asset)

Tokenisation is the project's `FullTokenizer` (the original's tokens exactly); packing is the
original classifier's (`official.export.packing`). One difference from Hub's own preprocessors:
a pair too long is truncated as the original's fine-tuning data was (longest text first), not
round-robin, so a model fine-tuned on this project's records sees the same inputs when served.
`bert_pack_inputs` takes 1 or 2 segments, each [batch, (tokens)] or [batch, (words), (pieces)].
"""

from __future__ import annotations

import tensorflow as tf

from official.export import packing
from official.text.basic_tokenizer import BasicTokenizer
from official.text.tokenizer import FullTokenizer

_STRINGS = tf.TensorSpec([None], tf.string)
_SPECIAL_TOKENS = {"start_of_sequence_id": "[CLS]", "end_of_segment_id": "[SEP]",
                   "padding_id": "[PAD]", "mask_id": "[MASK]"}


def clean_utf8(texts: tf.Tensor) -> tf.Tensor:
    """[batch] strings with bytes that are not UTF-8 dropped (what the tokenizer drops), so
    character offsets computed on the result are well defined."""
    return tf.strings.unicode_transcode(texts, "UTF-8", "UTF-8", errors="ignore")


def special_token_ids(tokenizer: FullTokenizer) -> dict[str, int]:
    """Hub's special-token names -> ids; [PAD] and [MASK] only when the vocab has them (padding
    is id 0 in any case, as in the original)."""
    ids = {"vocab_size": len(tokenizer.vocab)}
    for name, token in _SPECIAL_TOKENS.items():
        if token in tokenizer.vocab:
            ids[name] = tokenizer.vocab[token]
    ids.setdefault("padding_id", 0)
    return ids


class _Tokenize(tf.Module):
    """`preprocessor.tokenize`: [batch] strings -> int32 [batch, (words), (wordpieces)]."""

    def __init__(self, tokenizer: FullTokenizer):
        super().__init__()
        self._tokenizer = tokenizer
        self._basic = BasicTokenizer(lower_case=tokenizer.do_lower_case)
        self._special = special_token_ids(tokenizer)

    @tf.function(input_signature=[_STRINGS], autograph=False)
    def __call__(self, texts):
        # A word of the basic tokenizer tokenizes to itself again, so WordPiece per word gives
        # the pieces of the whole text, with the word boundaries Hub's API has.
        words = self._basic.tokenize(texts)
        return words.with_flat_values(self._tokenizer.tokenize_tf(words.flat_values))

    @tf.function(input_signature=[], autograph=False)
    def get_special_tokens_dict(self):
        return {name: tf.constant(value, tf.int32) for name, value in self._special.items()}


class _PackInputs(tf.Module):
    """`preprocessor.bert_pack_inputs(segments, seq_length=default)`: 1 or 2 token segments ->
    the encoder inputs (`official.export.packing.pack_inputs`)."""

    def __init__(self, cls_id: int, sep_id: int, default_seq_length: int):
        super().__init__()
        self.default_seq_length = default_seq_length

        # The default is this instance's, so the function is made here; a restored function
        # fills it in when a call omits seq_length, and converts a Python int to the traced
        # int32 scalar.
        @tf.function(autograph=False)
        def pack(segments, seq_length=default_seq_length):
            return packing.pack_inputs(list(segments), seq_length, cls_id, sep_id)

        # 1 or 2 segments of ragged rank 1 or 2, the shapes Hub's preprocessors accept.
        for ragged_rank in (1, 2):
            spec = tf.RaggedTensorSpec([None] * (ragged_rank + 1), tf.int32, ragged_rank)
            for count in (1, 2):
                pack.get_concrete_function([spec] * count, tf.TensorSpec([], tf.int32))
        self.__call__ = pack  # what the SavedModel keeps as this object's call

    def __call__(self, segments, seq_length=None):
        if seq_length is None:
            seq_length = self.default_seq_length
        return self.__dict__["__call__"](segments, seq_length)


class BertPreprocessor(tf.Module):
    """Hub's BERT preprocessor API over the project's tokenizer (see the module docstring).

    Args:
      tokenizer: the checkpoint's tokenizer (its vocab file becomes an asset of the SavedModel).
      seq_length: the length of the root call's outputs and of `bert_pack_inputs` by default.
    """

    def __init__(self, tokenizer: FullTokenizer, seq_length: int = 128):
        super().__init__()
        if seq_length < 2:
            raise ValueError(f"seq_length must be at least 2, got {seq_length}")
        self._tokenizer = tokenizer
        self.seq_length = seq_length
        self.vocab_file = tf.saved_model.Asset(tokenizer.vocab_file)
        self.do_lower_case = tf.Variable(tokenizer.do_lower_case, trainable=False,
                                         name="do_lower_case")
        self.tokenize = _Tokenize(tokenizer)
        cls_id, sep_id = tokenizer.convert_tokens_to_ids(["[CLS]", "[SEP]"])
        self.bert_pack_inputs = _PackInputs(cls_id, sep_id, seq_length)

    @tf.function(input_signature=[_STRINGS], autograph=False)
    def __call__(self, texts):
        """[batch] strings -> one-segment encoder inputs, int32 [batch, seq_length]."""
        return self.bert_pack_inputs([self._tokenizer.tokenize_tf(texts)],
                                     tf.constant(self.seq_length))

    def signatures(self) -> dict:
        """`serving_default`: `text` [batch] strings -> the three encoder inputs."""
        call = tf.function(lambda text: self(text), input_signature=[
            tf.TensorSpec([None], tf.string, name="text")], autograph=False)
        return {"serving_default": call}
