"""`BasicTokenizer`: text -> words, exactly as the original's `BasicTokenizer`, in TF ops only.

The original, per character in Python: delete control characters and map whitespace to " "
(`_clean_text`), put spaces around CJK ideographs, split at whitespace, then per word (if
lower-casing) `str.lower`, NFD and drop accents (category Mn), and split off every punctuation
character. Here each step is one op over the whole batch, so the same code runs in a Python loop,
a tf.data pipeline or an exported SavedModel:

    transcode     bytes that are not UTF-8 are dropped (the original decodes with "ignore")
    regex         delete `removed`, map `whitespace` to " "                    (_clean_text)
    lower-case    A-Z; then regexes for final sigma and "İ", and a code point table (str.lower)
    NFD           tensorflow-text's ICU normalizer, guarded against its newer Unicode
    regex         delete Mn                                                    (_run_strip_accents)
    regex         spaces around punctuation and CJK  (_tokenize_chinese_chars, _run_split_on_punc)
    split         at " "                                                       (whitespace_tokenize)

Pure-ASCII lines, most lines of English text, skip the transcoding and every non-ASCII step.
The character classes are the original's, read from Python's unicodedata (`char_classes`).
Two orders differ from the original's and give the same result: lower-casing runs on the whole
line, not word by word (the final-sigma context stops at a space just as at a word's end), and
CJK spacing runs with punctuation after NFD (NFD maps a CJK compatibility ideograph to a CJK
ideograph and nothing else to one; the Unicode sweep in the tests checks it).
"""

from __future__ import annotations

import functools

import tensorflow as tf
import tensorflow_text as tf_text

from official.text import char_classes

_FINAL_SIGMA = "\u03c2"
# U+FFFD cannot survive cleaning, so after it "\uFFFD" + digits can only be an escape we made.
_ESCAPE = "\ufffd"


class BasicTokenizer:
    """[batch] UTF-8 strings -> [batch, (words)] words, as the original `BasicTokenizer`.

    Args:
      lower_case: lower-case (`str.lower`) and strip accents, for "uncased" checkpoints.

    Example:
        >>> BasicTokenizer(lower_case=True).tokenize(tf.constant(["Héllo, WORLD!"]))
        <tf.RaggedTensor [[b'hello', b',', b'world', b'!']]>
        >>> BasicTokenizer(lower_case=False).tokenize(tf.constant(["John's house."])).to_list()
        [[b'John', b"'", b's', b'house', b'.']]
    """

    def __init__(self, lower_case: bool):
        self.lower_case = lower_case
        self._classes = char_classes.original_char_classes()
        if lower_case:
            self._lower_table = tf.constant(self._classes.lower)
            self._nfd_skew = _nfd_skew()

    def tokenize(self, texts: tf.Tensor) -> tf.RaggedTensor:
        """[batch] strings -> [batch, (words)] strings; pure TF ops (usable in a tf.function)."""
        return tf.strings.split(self.normalize(texts))

    def normalize(self, texts: tf.Tensor) -> tf.Tensor:
        """[batch] strings -> [batch] strings whose words are separated by spaces."""
        # Most lines are pure ASCII, where UTF-8 is valid, ASCII lower-casing is `str.lower` and
        # NFD changes nothing: those skip the costly steps, the other lines take them all.
        is_ascii = tf.strings.regex_full_match(texts, "[\\x00-\\x7F]*")
        ascii_rows = tf.cast(tf.where(is_ascii)[:, 0], tf.int32)
        other_rows = tf.cast(tf.where(~is_ascii)[:, 0], tf.int32)
        return tf.dynamic_stitch(
            [ascii_rows, other_rows],
            [self._normalize(tf.gather(texts, ascii_rows), ascii_only=True),
             self._normalize(tf.gather(texts, other_rows), ascii_only=False)])

    def _normalize(self, texts: tf.Tensor, ascii_only: bool) -> tf.Tensor:
        classes = self._classes
        if not ascii_only:
            texts = tf.strings.unicode_transcode(texts, "UTF-8", "UTF-8", errors="ignore")
        texts = tf.strings.regex_replace(texts, classes.removed, "")
        texts = tf.strings.regex_replace(texts, classes.whitespace, " ")
        if self.lower_case:
            texts = tf.strings.lower(texts)  # A-Z only; the same as str.lower on ASCII
            if not ascii_only:
                texts = self._lower(texts)
                texts = self._nfd_without_marks(texts)
        return tf.strings.regex_replace(texts, classes.split, r" \0 ")

    def _lower(self, texts: tf.Tensor) -> tf.Tensor:
        """Python's `str.lower` on [batch] strings (final sigma included).

        Not `tf.strings.lower(encoding="utf-8")`: its ICU follows Unicode 13 (it leaves the 40
        capitals Unicode 14 added), uses the process's locale (a Turkish one lower-cases "I" to
        "ı") and stops at U+0000.
        """
        classes = self._classes
        texts = tf.strings.regex_replace(texts, classes.final_sigma, rf"\1{_FINAL_SIGMA}\2")
        for upper, lower in classes.multi_char_lower.items():
            texts = tf.strings.regex_replace(texts, upper, lower)
        code_points = tf.strings.unicode_decode(texts, "UTF-8")
        values = code_points.flat_values
        size = tf.shape(self._lower_table)[0]
        lowered = tf.where(values < size,
                           tf.gather(self._lower_table, tf.minimum(values, size - 1)), values)
        return tf.strings.unicode_encode(code_points.with_flat_values(lowered), "UTF-8")

    def _nfd_without_marks(self, texts: tf.Tensor) -> tf.Tensor:
        """NFD, then Mn deleted, as `_run_strip_accents`.

        tensorflow-text's ICU knows newer Unicode than Python 3.11: it decomposes or reorders a few
        code points that Python's unicodedata calls unassigned (`_nfd_skew`). A batch holding any
        of them (rare: none existed before Unicode 15) has them swapped for escapes around the NFD.
        """
        marks = self._classes.nonspacing_marks

        def nfd(texts):
            return tf.strings.regex_replace(tf_text.normalize_utf8(texts, "NFD"), marks, "")

        def nfd_escaped(texts):
            for i, char in enumerate(self._nfd_skew):
                texts = tf.strings.regex_replace(texts, char, f"{_ESCAPE}{i:04d}")
            texts = nfd(texts)
            for i, char in enumerate(self._nfd_skew):
                texts = tf.strings.regex_replace(texts, f"{_ESCAPE}{i:04d}", char)
            return texts

        if not self._nfd_skew:
            return nfd(texts)
        skew_class = char_classes.re2_class(ord(c) for c in self._nfd_skew)
        has_skew = tf.reduce_any(tf.strings.regex_full_match(texts, f"(?s).*{skew_class}.*"))
        return tf.cond(has_skew, lambda: nfd_escaped(texts), lambda: nfd(texts))


_PROBES_PER_CALL = 1 << 16


@functools.cache
def _nfd_skew() -> tuple[str, ...]:
    """Code points Python's unicodedata leaves alone in NFD and tensorflow-text's ICU does not.

    Python treats an unassigned code point as a starter without decomposition. Each one is probed
    between two marks (U+0345, combining class 240, and U+0334, class 1): if ICU decomposes it or
    gives it any combining class, the probe changes. Assigned characters cannot differ: Unicode
    never changes a decomposition or combining class once assigned.
    """
    unassigned = char_classes.unassigned()
    skew = []
    # In slices: one probe string of all ~830k code points made ICU take ~300 MB at once. A slice
    # that ICU returns unchanged holds none (most do): only the others are compared probe by
    # probe, which in Python costs several times the normalisation itself.
    for start in range(0, len(unassigned), _PROBES_PER_CALL):
        chars = unassigned[start:start + _PROBES_PER_CALL]
        probes = "a\u0345" + "\u0334 a\u0345".join(chars) + "\u0334"
        normalized = tf_text.normalize_utf8(tf.constant(probes), "NFD").numpy().decode()
        if normalized != probes:
            skew += [c for c, probe, out in zip(chars, probes.split(" "), normalized.split(" "))
                     if probe != out]
    return tuple(skew)
