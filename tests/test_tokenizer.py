"""Tests for official.text.tokenizer: parity with the original FullTokenizer, vocab-file errors."""

import re
import string

import pytest

from official.text import tokenizer as tokenizer_lib
from tests.reference_bert import import_original

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


# Plain text on which the first version must match the original exactly (the Unicode edge cases
# listed in the tokenizer's docstring, e.g. "…" or U+00A0, are left to the exact-parity version).
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
