"""Tests for official.text.tokenizer: token-for-token parity with the original FullTokenizer
(hand-written Unicode edge cases, real corpus lines, invalid UTF-8), the id and TF-graph paths,
export in a SavedModel, and vocab-file errors.

The full-corpus comparison (every corpus in ../shared/data) is bench/tokenizer_parity.py.
"""

import os
import re
import string

import numpy as np
import pytest
import tensorflow as tf

from official.text import tokenizer as tokenizer_lib
from tests.reference_bert import import_original

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
UNCASED_VOCAB = os.path.join(REPO, "data", "vocab", "uncased_vocab.txt")
CASED_VOCAB = os.path.join(REPO, "tests", "data", "cased_vocab.txt")
SAMPLE = os.path.join(REPO, "tests", "data", "tokenizer_sample.txt")

WORDS = """
the quick brown fox jumps over lazy dog a an and or but is was were be been being have has had
do does did not no yes it its this that these those he she they we you i me my our your their
his her them us of in on at by for with about against between into through during before after
above below to from up down out off again further then once here there when where why how all
any both each few more most other some such only own same so than too very can will just should
now john johan house new york city paris london tokyo berlin world hello good bad great
run running ran runner walk walked walking talk talked un want aff able una ffa ble
cafe café naive naïve resume résumé über uber zurich zürich
1 2 3 10 100 1000 2019 42 3.14 % $ € ° re ve ll t s d m
""".split()

# "##" continuations: every letter and digit (so most words split into pieces instead of becoming
# [UNK]), a few common suffixes, and accented letters for the cased model.
PIECES = (["##" + c for c in string.ascii_letters + string.digits + "éïü"]
          + ["##ing", "##ed", "##er", "##s", "##ly", "##tion", "##able", "##ness", "##son",
             "##ville", "##est", "##aff", "##ffa", "##ble", "##'"])

SINGLE_CHARS = list(string.ascii_letters + string.digits + string.punctuation) + list(
    "éèêëïüöäàçñ中国人日本北京東京한국")


def write_vocab(path, lines):
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return str(path)


@pytest.fixture(scope="module")
def vocab_file(tmp_path_factory):
    tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    seen = set(tokens)
    capitalised = [w.capitalize() for w in WORDS]
    for token in WORDS + capitalised + PIECES + SINGLE_CHARS:
        if token not in seen:
            seen.add(token)
            tokens.append(token)
    return write_vocab(tmp_path_factory.mktemp("vocab") / "vocab.txt", tokens)


# Everyday text with a small hand-made vocab, where WordPiece splits most words into pieces.
SENTENCES = [
    "The quick brown fox jumps over the lazy dog.",
    "Hello, world!",
    "John Johanson's house is in New York City.",
    "I can't believe it's not butter; they're here, we've gone, you'll see, I'd say.",
    "Running, walked, talking: runners RUN quickly!!!",
    "unwanted unaffable Unaffable",
    "Numbers: 1, 10, 100, 3.14, 2019-12-31, $42.50, 99% and 1,000,000.",
    "Email me at john@example.com or visit https://example.com/path?q=1&x=2.",
    "(Parentheses) [brackets] {braces} <angles> \"quotes\" 'single' `backticks`",
    "Punctuation soup: !@#$%^&*()_+-=[]{}|;':\",./<>?~",
    "Un café naïve au résumé, über Zürich.",
    "CAFÉ NAÏVE RÉSUMÉ ÜBER",
    "Crème brûlée à la française, señor.",
    "中国人 and 日本 are CJK words; 北京欢迎你!",
    "東京 is Tokyo, 한국 is Korea.",
    "Mixed中文English text中with no spaces.",
    "Tabs\tand\nnewlines\r\nand   many    spaces   ",
    "   leading and trailing whitespace   ",
    "",
    "   ",
    "...",
    "a",
    "Zzyzx qwertyuiop xylophones xenon",
    "Emoji are unknown: 😀 🚀 and so is ☃.",
    "Dashes – and — em dashes, ellipsis « guillemets » “curly” ‘quotes’.",
    "Hyphenated well-known state-of-the-art ideas.",
    "O'Neill's rock'n'roll isn't y'all's.",
    "The year 2019 had 365 days; 2020 had 366.",
    "Temperatures of 25°C and 77°F.",
    "Price: €100 or £85 or ¥1000.",
    "A sentence with a very long word " + "a" * 201 + " in it.",
    "Exactly two hundred " + "b" * 200 + " letters.",
    "Supercalifragilisticexpialidocious is long but not too long.",
    "ALL CAPS SENTENCE WITH NUMBERS 123 AND SYMBOLS #1.",
    "mIxEd CaSe WoRdS aRe FuN",
    "Underscores_are_punctuation and so-are-hyphens.",
    "Backslash \\ and slash / and pipe |.",
    "He said: \"Hello!\" She replied: 'Hi.'",
    "Accents only in cased vocab: é è ê ë ï ü ö ä à ç ñ",
]


@pytest.fixture(scope="module")
def reference_module():
    return import_original("bert.tokenization")


@pytest.mark.parametrize("do_lower_case", [True, False])
def test_matches_original_tokenizer(vocab_file, reference_module, do_lower_case):
    ours = tokenizer_lib.FullTokenizer(vocab_file, do_lower_case=do_lower_case)
    reference = reference_module.FullTokenizer(vocab_file, do_lower_case=do_lower_case)
    assert ours.vocab == dict(reference.vocab)

    batch = ours.tokenize_batch(SENTENCES)
    for sentence, batch_tokens in zip(SENTENCES, batch):
        expected = reference.tokenize(sentence)
        assert ours.tokenize(sentence) == expected, sentence
        assert batch_tokens == expected, sentence
        ids = ours.convert_tokens_to_ids(expected)
        assert ids == reference.convert_tokens_to_ids(expected)
        assert ours.convert_ids_to_tokens(ids) == expected


def test_tokenize_examples(vocab_file):
    uncased = tokenizer_lib.FullTokenizer(vocab_file, do_lower_case=True)
    assert uncased.tokenize("John Johanson's house") == [
        "john", "johan", "##son", "'", "s", "house"]
    assert uncased.tokenize("Un café naïve!") == ["un", "cafe", "naive", "!"]
    assert uncased.tokenize("中国 😀") == ["中", "国", "[UNK]"]
    assert uncased.tokenize("a" * 201) == ["[UNK]"]
    assert uncased.tokenize("a" * 200) == ["a"] + ["##a"] * 199
    cased = tokenizer_lib.FullTokenizer(vocab_file, do_lower_case=False)
    assert cased.tokenize("Un café naïve!") == ["Un", "café", "naïve", "!"]
    # 150 characters but 300 UTF-8 bytes: under the original's 200-character limit.
    assert cased.tokenize("é" * 150) == ["é"] + ["##é"] * 149
    assert cased.tokenize_batch([]) == []


def test_convert_unknown_token_raises_key_error(vocab_file):
    tokenizer = tokenizer_lib.FullTokenizer(vocab_file)
    with pytest.raises(KeyError):
        tokenizer.convert_tokens_to_ids(["not-in-vocab"])


@pytest.mark.parametrize("lines, message", [
    ([], "empty vocab"),
    (["[UNK]", "[CLS]", "[SEP]", "the", "[CLS]"], "line 5: duplicate token '[CLS]'"),
    (["[PAD]", "[UNK]", "[SEP]", "the"], "lacks [CLS]"),
    (["[PAD]", "the"], "lacks [UNK], [CLS], [SEP]"),
])
def test_bad_vocab_file(tmp_path, lines, message):
    path = write_vocab(tmp_path / "vocab.txt", lines)
    with pytest.raises(tokenizer_lib.VocabError, match=r"vocab\.txt: .*" + re.escape(message)):
        tokenizer_lib.FullTokenizer(path)


def test_missing_vocab_file(tmp_path):
    path = str(tmp_path / "nowhere.txt")
    with pytest.raises(ValueError, match="nowhere.txt: no such vocab file"):
        tokenizer_lib.FullTokenizer(path)


def test_vocab_ids_are_line_numbers_with_windows_newlines(tmp_path):
    path = tmp_path / "vocab.txt"
    path.write_bytes(b"[PAD]\r\n[UNK]\r\n[CLS]\r\n[SEP]\r\nthe\r\n")
    tokenizer = tokenizer_lib.FullTokenizer(str(path))
    assert tokenizer.vocab == {"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3, "the": 4}
    assert tokenizer.tokenize("The end") == ["the", "[UNK]"]


# Where a tokenizer built on library Unicode tables is likely to part from the original: each
# group names the original's step it probes. Invisible characters are written as escapes.
EDGE_CASES = [
    # _clean_text: deleted (U+0000, U+FFFD, Cc, Cf) versus whitespace (\t \n \r, Zs).
    "nul\x00inside and \x01\x02\x1f\x7f controls",
    "vertical\x0btab, form\x0cfeed, next\x85line, file\x1cseparator",
    "zero\u200bwidth space, zero\u200cwidth non\u200djoiner, word\u2060joiner",
    "soft\u00adhyphen and bidi \u200emarks\u200f and \u202aembedding\u202c",
    "\ufeffbyte order mark at the start, \ufeffand inside",
    "replacement \ufffd character and \ufffd\ufffd two",
    "Arabic letter mark \u061c, Mongolian vowel separator \u180e, tag \U000e0041 chars",
    "no-break\u00a0space, ideographic\u3000space, thin\u2009space, narrow\u202fno-break",
    "ogham\u1680space, en\u2002quad\u2000and em\u2003space, math\u205fspace",
    "line\u2028separator and paragraph\u2029separator",
    "tabs\tand\nnewlines\r\nand   runs  of   spaces",
    "",
    " \t\n ",
    "\x00\u200b\ufeff",
    # _tokenize_chinese_chars: the CJK blocks, and scripts that are not in them.
    "中文字符和English混合",
    "extension A \u3400\u4dbf, extension B \U00020000\U0002a6df, extension E \U0002b820",
    "compatibility ideographs \uf900\ufa6c\U0002f800\U0002fa1d",
    "한국어 텍스트, ひらがな カタカナ, ｶﾀｶﾅ half-width",
    "kangxi radical \u2f00 and CJK symbols \u3001\u3002\u300c\u300d",
    # str.lower, where NFKC case folding differs: ligatures, full-width, superscripts, ß, ſ.
    "ﬁne ﬂour, ﬀ ﬃ ﬄ ﬅ ﬆ ligatures",
    "ＦＵＬＬ　ｗｉｄｔｈ　ＡＢＣ　１２３！？",
    "superscripts x² H₂O ¹²³ ᴬᴮ ⁿ and fractions ½ ¾ ⅓",
    "STRASSE Straße ẞ GROSSES ſ long s",
    "kelvin \u212a, ohm \u2126, angstrom \u212b, kappa symbol ϰ, theta symbol ϑ, ϐ ϕ ϖ ϱ ϵ",
    "İstanbul DİYARBAKIR ıi Iı, whatever the process's locale",
    "titlecase ǅ ǈ ǋ ǲ and ŉ ǰ ΐ ΰ",
    "Roman numerals Ⅻ ⅻ Ⅽ, circled Ⓐ ⓐ, math 𝐀𝐁𝐂 𝔄",
    "Cherokee Ꭰ Ꮳ ꭰ, Deseret 𐐀 𐐨, Georgian Ა ა, Glagolitic Ⰰ",
    "Unicode 14 capitals \u2c2f \ua7c0 \ua7d0 \ua7d6 \ua7d8 \U00010570 \U00010595",
    # Final sigma: Python chooses ς by context, skipping case-ignorable characters.
    "ΟΔΥΣΣΕΥΣ ΣΟΦΟΣ. Σ ΑΣ ΑΣΑ",
    "ΑΣ'Β ΑΣ.Β ΑΣ\u00b7Β ΑΣ\u0301 Α\u0301Σ ʰΣ ΑΣʰ",
    "ΣΣΣ ΑΣΣ ΑΣΣΑ Σ1 1Σ ΑΣ1",
    "ΑΣ\u200bΒ and ΑΣ\u00adΒ (deleted before lower-casing)",
    "ΑΣ中 ΑΣ, ΑΣ!",
    # _run_strip_accents: NFD, then Mn deleted; Mc and Me stay.
    "café naïve résumé Ångström Crème Brûlée",
    "combining e\u0301 a\u0308 o\u0302\u0323 and stacked zalgo h\u0336\u0334\u0335e\u0337",
    "Tiếng Việt có dấu, Ελληνικά με τόνους, ΆΈΉΊΌΎΏ",
    "Hindi देवनागरी: \u0915\u093f \u0915\u0903, enclosing a\u20dd",
    "Arabic with harakat: العَرَبِيَّة, Hebrew with niqqud: עִבְרִית",
    "lone marks \u0301 \u0308\u0301 and \ufe0f alone",
    "emoji 😀 👍🏽 👨\u200d👩\u200d👧 ❤\ufe0f 🇩🇪",
    "Hangul syllables decompose in NFD: 한글 각",
    "kana voicing marks are Mn after NFD: が ガ ぱ ｶﾞ",
    "iota subscript ᾼ ᾳ ᾷ, Thai ภาษาไทย, Khmer ភាសាខ្មែរ",
    "variation selectors a\ufe00 b\U000e0100 and presentation forms ﬠ ﭐ ﹰ",
    # _run_split_on_punc: ASCII symbols and Unicode P*, but not S* (currency, maths, symbols).
    "ASCII $+<=>^`|~ symbols and !\"#%&'()*,-./:;?@[\\]_{}",
    "¿Qué? ¡Sí! «guillemets» „quotes“ ‹single› 「brackets」",
    "dashes ‐ ‑ ‒ – — ― and … ‰ ′ ″ ※ ‼ ⁇ ・ ·",
    "not punctuation: € £ ¥ © ® ° ± × ÷ ∑ √ ≠ ★ ♪",
    "apostrophes don’t can't O’Neill",
    "Greek question mark \u037e and ano teleia \u0387, varia \u1fef and \u1fed",
    # WordPiece: characters not in the vocab, long words, digits.
    "Arabic-Indic digits ١٢٣ and full-width ０９, Devanagari ४२",
    "private use \ue000\uf8ff and unassigned \u0378 \U000e0080",
    "a" * 201 + " " + "b" * 200 + " " + "é" * 150,
    "ï" * 201 + " punctuation cuts long words: " + "c" * 150 + "." + "c" * 150,
    "supercalifragilisticexpialidocious antidisestablishmentarianism",
    # Code points newer than Python 3.11's Unicode 14: unassigned for the original, decomposed
    # or reordered by tensorflow-text's ICU 16 NFD unless guarded.
    "new \U000105c9 \U00011383 \U00016121 a\u0345\u0897\u0334 x\U0001e08f",
    "ascii and newer\U000105c9 in one \U00016d68line",
    # Mixed batches: ASCII-only and other lines take different paths.
    "Plain ASCII line.",
    "Ünïcödé line.",
]


@pytest.fixture(scope="module", params=[pytest.param((True, UNCASED_VOCAB), id="uncased"),
                                        pytest.param((False, CASED_VOCAB), id="cased")])
def tokenizers(request, reference_module):
    """(ours, the original) for one casing: the standard uncased vocab, or the shipped cased one."""
    do_lower_case, vocab = request.param
    return (tokenizer_lib.FullTokenizer(vocab, do_lower_case),
            reference_module.FullTokenizer(vocab, do_lower_case))


def _assert_same_tokens(ours, original, lines):
    got = ours.tokenize_batch(lines)
    differ = [(line, tokens, original.tokenize(line))
              for line, tokens in zip(lines, got) if tokens != original.tokenize(line)]
    assert not differ, f"{len(differ)} of {len(lines)} lines differ, first: {differ[0]}"


def test_edge_cases_match_original(tokenizers):
    ours, original = tokenizers
    _assert_same_tokens(ours, original, EDGE_CASES)
    # One at a time too: the ASCII-only and the other lines of a batch take different paths.
    for line in EDGE_CASES:
        assert ours.tokenize(line) == original.tokenize(line), ascii(line)


def test_corpus_sample_matches_original(tokenizers):
    ours, original = tokenizers
    with open(SAMPLE, encoding="utf-8") as f:
        lines = f.read().split("\n")[:-1]  # "\n" only: other line breaks are test data
    assert len(lines) > 300
    _assert_same_tokens(ours, original, lines)


def test_invalid_utf8_is_dropped_as_the_original_does(tokenizers):
    ours, original = tokenizers
    raw = [b"caf\xc3\xa9 \xff\xfe bytes", b"cut \xe2\x82 sequence", b"surrogate \xed\xa0\x80 x",
           b"overlong \xc0\xaf and \xe0\x80\xaf", b"ok \xf0\x9f\x98 \xf4\x90\x80\x80 end"]
    ids = ours.tokenize_tf(tf.constant(raw))
    for line, row in zip(raw, ids.to_list()):
        assert ours.convert_ids_to_tokens(row) == original.tokenize(line), line


def test_ids_paths_agree_with_tokens(tokenizers):
    ours, _ = tokenizers
    lines = EDGE_CASES[:20] + ["Hello, world!"]
    tokens = ours.tokenize_batch(lines)
    ids = ours.tokenize_batch_ids(lines)
    ragged = ours.tokenize_tf(tf.constant(lines))
    assert ragged.dtype == tf.int32 and ragged.shape.rank == 2
    for row_tokens, row_ids, row_ragged in zip(tokens, ids, ragged.to_list()):
        assert row_ids.dtype == np.int32
        assert row_ids.tolist() == row_ragged == ours.convert_tokens_to_ids(row_tokens)
    assert ours.tokenize_batch_ids([]) == []


def test_tokenize_tf_runs_in_a_saved_model(tmp_path):
    tokenizer = tokenizer_lib.FullTokenizer(UNCASED_VOCAB, do_lower_case=True)
    module = tf.Module()
    module.tokenize = tf.function(tokenizer.tokenize_tf,
                                  input_signature=[tf.TensorSpec([None], tf.string)])
    tf.saved_model.save(module, str(tmp_path))
    del module, tokenizer  # the SavedModel needs neither the vocab file nor Python tables
    loaded = tf.saved_model.load(str(tmp_path))
    lines = ["Héllo, ΟΔΥΣΣΕΥΣ!", "plain text", "中文 \U000105c9"]
    expected = tokenizer_lib.FullTokenizer(UNCASED_VOCAB, True).tokenize_tf(tf.constant(lines))
    assert loaded.tokenize(tf.constant(lines)).to_list() == expected.to_list()
