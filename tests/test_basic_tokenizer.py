"""Tests for official.text.basic_tokenizer: the original's BasicTokenizer, word for word, on every
code point where Unicode versions could part (and a sample of the rest), and in context."""

import unicodedata

import pytest
import tensorflow as tf
import tensorflow_text as tf_text

from official.text import basic_tokenizer
from tests.reference_bert import import_original


def _sweep_lines() -> list[str]:
    """Code points as space-separated one-character words, 256 to a line.

    Every code point of planes 0-3 (all of today's scripts, CJK extensions A-H) and of plane 14
    (tags, variation selectors), and every 257th code point elsewhere (private use and
    unassigned planes, where nothing differs by version). Surrogates cannot be UTF-8.
    """
    code_points = [cp for cp in range(0x110000)
                   if (cp < 0x40000 or 0xE0000 <= cp < 0xF0000 or cp % 257 == 0)
                   and not 0xD800 <= cp <= 0xDFFF]
    return [" ".join(chr(cp) for cp in code_points[i:i + 256])
            for i in range(0, len(code_points), 256)]


@pytest.fixture(scope="module")
def original():
    return import_original("bert.tokenization")


@pytest.mark.parametrize("lower_case", [True, False], ids=["uncased", "cased"])
def test_every_code_point_matches_original(original, lower_case):
    lines = _sweep_lines()
    ours = basic_tokenizer.BasicTokenizer(lower_case)
    words = tf.function(ours.tokenize)(tf.constant([line.encode() for line in lines]))
    reference = original.BasicTokenizer(do_lower_case=lower_case)
    for line, got in zip(lines, words.to_list()):
        expected = reference.tokenize(line)
        got = [w.decode() for w in got]
        if got != expected:
            first = next(i for i, (a, b) in enumerate(zip(got + [""], expected + [""])) if a != b)
            pytest.fail(f"line starting U+{ord(line[0]):04X}, word {first}: "
                        f"ours {ascii(got[first:first + 3])}, "
                        f"original {ascii(expected[first:first + 3])}")


def test_code_points_unassigned_in_python_keep_their_place(original):
    """tensorflow-text's NFD (Unicode 16) decomposes or reorders code points Python 3.11 calls
    unassigned; between marks they show it. Each one, in context, as the original."""
    skew = basic_tokenizer._nfd_skew()
    assert skew, "no skew found: update this test if tensorflow-text's ICU matches Python's"
    lines = [f"Ka\u0345{c}\u0334 {c}\u0301x \u00c9{c}" for c in skew]
    words = basic_tokenizer.BasicTokenizer(True).tokenize(tf.constant(lines)).to_list()
    reference = original.BasicTokenizer(do_lower_case=True)
    for line, got in zip(lines, words):
        assert [w.decode() for w in got] == reference.tokenize(line), ascii(line)


def test_the_skew_is_every_unassigned_code_point_icu_changes_probed_one_by_one():
    """The skew found slice by slice equals each of this Python's unassigned code points probed
    alone between the same two marks (U+0345 and U+0334, combining classes 240 and 1)."""
    unassigned = [chr(cp) for cp in range(0x110000) if unicodedata.category(chr(cp)) == "Cn"]
    probes = [f"a\u0345{c}\u0334" for c in unassigned]
    normalized = tf_text.normalize_utf8(tf.constant(probes), "NFD").numpy()
    changed = tuple(c for c, probe, out in zip(unassigned, probes, normalized)
                    if out.decode() != probe)
    assert basic_tokenizer._nfd_skew() == changed
    assert "\u0897" in changed  # a combining mark since Unicode 16, unassigned in 3.11


def test_example():
    words = basic_tokenizer.BasicTokenizer(True).tokenize(tf.constant(["Héllo, WORLD!", ""]))
    assert words.to_list() == [[b"hello", b",", b"world", b"!"], []]
    normalized = basic_tokenizer.BasicTokenizer(False).normalize(tf.constant(["a\u00a0b,c"]))
    assert tf.strings.split(normalized).to_list() == [[b"a", b"b", b",", b"c"]]
