"""Raw text -> words with their character offsets, as TF ops (for the NER and SQuAD exports).

Two ways of cutting a text into words, each the one its task's data was made with:

    split_words       NER: at whitespace, and every punctuation or CJK character a word of its
                      own: the original BasicTokenizer's word boundaries, found on the raw text
                      so that each word keeps its place (CoNLL-2003's words are split that way)
    split_whitespace  SQuAD: at " ", "\\t", "\\r", "\\n" and U+202F only, as the original
                      run_squad splits a context (`data_prep.squad.split_context`)

Offsets are in characters (Unicode code points, Python's `str` indexes), of the text with bytes
that are not UTF-8 dropped (`preprocessing.clean_utf8`, what the tokenizer drops too): for valid
UTF-8 input, of the input itself.

Why BasicTokenizer's words are found on the raw text: the tokenizer lower-cases, strips accents
and deletes control characters before splitting, so its words no longer say where they were.
Its separators, whitespace and punctuation, are characters those steps leave alone, and a
deleted character stays inside the raw word it touches; so the raw words are the tokenizer's
words (tests/test_export_words.py). Rare exceptions, harmless for NER, whose words are
tokenized one by one as CoNLL's are: a symbol that NFD turns into ASCII punctuation (U+1FEF ->
"`") stays inside its raw word, where the tokenizer splits it off later; and a Greek capital
sigma before punctuation and a letter lower-cases as final in its raw word, not in the line.
"""

from __future__ import annotations

import tensorflow as tf
import tensorflow_text as tf_text

from official.text import char_classes

# The original run_squad's `is_whitespace`.
_SQUAD_WHITESPACE = "[ \\t\\r\\n\\x{202F}]"


def _regex_split(texts: tf.Tensor, delimiters: str, keep: str = ""):
    """tensorflow-text's regex split, safe for U+0000: its kernel stops reading a text there.

    U+0000 becomes U+0001 for the split (both are characters the tokenizer deletes, of one
    byte, so words and offsets do not change), and each word is cut from the text itself.
    """
    safe = tf.strings.regex_replace(texts, "\\x00", "\x01")
    _, starts, ends = tf_text.regex_split_with_offsets(safe, delimiters, keep)
    rows = tf.cast(starts.value_rowids(), tf.int32)
    found = tf.strings.substr(tf.gather(texts, rows), starts.flat_values,
                              ends.flat_values - starts.flat_values)
    return starts.with_flat_values(found), starts, ends


def split_words(texts: tf.Tensor) -> tuple[tf.RaggedTensor, tf.RaggedTensor, tf.RaggedTensor]:
    """[batch] UTF-8 strings -> (words, start, end): [batch, (words)] strings and byte offsets
    [start, end) of each word in its text. Punctuation and CJK characters are words alone."""
    classes = char_classes.original_char_classes()
    delimiters = f"(?: |{classes.whitespace}|{classes.split})"
    return _regex_split(texts, delimiters, classes.split)


def split_whitespace(texts: tf.Tensor) -> tuple[tf.RaggedTensor, tf.RaggedTensor,
                                                tf.RaggedTensor]:
    """[batch] strings -> (words, start, end) split as run_squad splits a context."""
    return _regex_split(texts, _SQUAD_WHITESPACE + "+")


def char_offsets(texts: tf.Tensor, byte_offsets: tf.RaggedTensor) -> tf.RaggedTensor:
    """Byte offsets [batch, (n)] into `texts` [batch] (valid UTF-8) -> the same offsets in
    characters, int32. An offset inside a character counts from that character's start.

    One search per offset in the row's character starts: linear in the text, however many words.
    """
    _, char_starts = tf.strings.unicode_decode_with_offsets(texts, "UTF-8")
    limit = tf.int64.max
    starts = tf.cast(char_starts, tf.int64).to_tensor(default_value=limit)
    values = tf.cast(byte_offsets, tf.int64).to_tensor(default_value=limit)
    found = tf.searchsorted(starts, values, side="left", out_type=tf.int32)
    return tf.RaggedTensor.from_tensor(found, lengths=byte_offsets.row_lengths())
