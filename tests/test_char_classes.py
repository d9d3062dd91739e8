"""Tests for official.text.char_classes: the original's classes as RE2 patterns, checked one
character at a time with TF's regex ops (the whole-Unicode sweep is in test_basic_tokenizer)."""

import pytest
import tensorflow as tf

from official.text import char_classes


@pytest.fixture(scope="module")
def classes():
    return char_classes.original_char_classes()


def _matches(pattern, chars):
    return tf.strings.regex_full_match(tf.constant(list(chars)), pattern).numpy().tolist()


def test_re2_class_merges_ranges():
    assert char_classes.re2_class([0x41, 0x43, 0x42, 0x61]) == r"[\x{41}-\x{43}\x{61}]"
    assert char_classes.re2_class([0x20], negate=True) == r"[^\x{20}]"


@pytest.mark.parametrize("field, members, others", [
    ("removed", "\x00\ufffd\x01\x7f\x85\u200b\u200d\u00ad\ufeff\U000e0041", "\t\n\r a\u00a0"),
    ("whitespace", "\t\n\r\u00a0\u3000\u2009\u1680\u2028\u2029", " \x0b\x0c\x1c\x85\u200ba"),
    ("split", "!$+^`~¿«…‐\u037e\u00b7中\U00020000\uf900", "a1€°×√\u3042\uac00\u2f00"),
    ("nonspacing_marks", "\u0301\u0308\u064e\u05b4\ufe0f", "a\u0903\u20dd\u00b4"),
])
def test_classes_hold_what_the_original_tests_for(classes, field, members, others):
    pattern = getattr(classes, field)
    assert all(_matches(pattern, members))
    assert not any(_matches(pattern, others))


def test_lower_case_is_python_str_lower(classes):
    table = classes.lower
    for upper in "AZÀΣΩ\u212a\u2126\u2c2f\U00010570Ꭰǅ":
        assert chr(table[ord(upper)]) == upper.lower()
    assert table[ord("a")] == ord("a") and table[ord("ß")] == ord("ß")
    assert classes.multi_char_lower == {"İ": "i̇"}


@pytest.mark.parametrize("text, final", [
    ("ΑΣ", True), ("ΑΣ.", True), ("ΑΣ Β", True), ("ΑΣ\u0301", True), ("ΑΣΣ", True),
    ("Σ", False), ("ΑΣΒ", False), ("ΑΣ'Β", False), ("ΑΣ\u0301Β", False),
    ("\u0301Σ", False), ("1Σ", False), ("ʰΣ", False),
])
def test_final_sigma_pattern(classes, text, final):
    lowered = tf.strings.regex_replace(text, classes.final_sigma, "\\1ς\\2").numpy().decode()
    assert ("ς" in lowered) == ("ς" in text.lower()) == final
