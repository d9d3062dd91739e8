"""official/export/words.py: words found on the raw text, where the tokenizers find them."""

import tensorflow as tf

from data_prep.squad import split_context
from official.export import words
from official.text.basic_tokenizer import BasicTokenizer

TEXTS = ["EU rejects German's call (to boycott) British lamb.", "", "  \t ",
         "Zoë  Saldaña\u00a0à Paris,日本\u3000ok\u2028end", "tab\tnew\nline\r\u202fnarrow",
         "a\u200bb \x00 c"]


def _strings(ragged):
    return [[w.decode() for w in row] for row in ragged.to_list()]


def test_split_words_are_the_basic_tokenizers_words():
    found, starts, ends = words.split_words(tf.constant(TEXTS))
    basic = _strings(BasicTokenizer(lower_case=False).tokenize(tf.constant(TEXTS)))
    # The raw words keep what the tokenizer deletes (U+200B, U+0000); otherwise the same.
    cleaned = [[w.replace("\u200b", "").replace("\x00", "") for w in row] for row in
               _strings(found)]
    assert [[w for w in row if w] for row in cleaned] == basic
    offsets_start = words.char_offsets(tf.constant(TEXTS), starts).to_list()
    offsets_end = words.char_offsets(tf.constant(TEXTS), ends).to_list()
    for text, row, first, last in zip(TEXTS, _strings(found), offsets_start, offsets_end):
        assert [text[a:b] for a, b in zip(first, last)] == row


def test_split_whitespace_is_run_squads_split():
    found, starts, ends = words.split_whitespace(tf.constant(TEXTS))
    assert _strings(found) == [split_context(t)[0] for t in TEXTS]
    first = words.char_offsets(tf.constant(TEXTS), starts).to_list()
    last = words.char_offsets(tf.constant(TEXTS), ends).to_list()
    for text, row, a, b in zip(TEXTS, _strings(found), first, last):
        assert [text[i:j] for i, j in zip(a, b)] == row


def test_char_offsets_of_an_empty_batch():
    empty = tf.ragged.constant([], tf.int64, ragged_rank=1)
    assert words.char_offsets(tf.constant([], tf.string), empty).shape[0] == 0
