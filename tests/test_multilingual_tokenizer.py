"""Both tokenizers (official.text.tokenizer's TF ops, official.text.python_tokenizer's plain
Python) against google-research/bert's `tokenization.FullTokenizer` (bert-tensorflow) on
mixed-script text with a small multilingual vocab, as mBERT's `multi_cased_L-12_H-768_A-12`
is used (do_lower_case=False: case and accents kept, each CJK ideograph a word of its own), and
uncased (the multilingual uncased model's rule: lower-cased, category Mn deleted).

The vocab, written here, has pieces for some of the words of each script and none for others,
so WordPiece both splits multi-byte words into "##" pieces and gives [UNK]. The other tokenizer
tests use English vocabs, where every non-Latin word is [UNK] whatever its pieces.
"""

import pytest

from official.text.python_tokenizer import PythonTokenizer
from official.text.tokenizer import FullTokenizer
from tests.reference_bert import import_original

SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
# Grouped by script. Cased and uncased spellings of some words; none for others (Ærøskøbing,
# half-width katakana, the voiced kana, ひらかな: [UNK]).
PIECES = [
    # CJK ideographs (one a word) and kana (runs of them stay one word).
    "北", "京", "大", "学", "中", "国", "東", "日", "本", "語", "习", "近", "平", "の", "は",
    "##カタカナ", "##と", "##ひらがな", "##です", "##てす", "。",
    # Arabic, with no piece for the word with harakat (Mn: kept cased, deleted uncased).
    "ال", "##لغة", "العربية", "جميلة", "وال", "##عربية", "بالت", "##شكيل", "عربي", "،",
    # Devanagari: virama U+094D is Mn (deleted uncased), the vowel signs are Mc (kept).
    "हि", "##न्दी", "##नदी", "भाषा", "और", "सं", "##स्कृत", "क", "##्ष", "##ष", "।",
    "\u0915\u093f", "##\u0915\u093f",
    # Latin with accents.
    "Z", "##ürich", "z", "##urich", "São", "sao", "Paulo", "paulo", "naïve", "naive", "café",
    "cafe", "Crème", "creme", "BR", "##ÛLÉE", "br", "##ulee", "Der", "der", "Präsident",
    "prasident", "besuchte", "und", "e", "##\u0301", "NFD", "nfd", "NFC", "nfc", "versus",
    # Cyrillic: Й decomposes to И + U+0306 (Mn).
    "Москва", "москва", "столица", "Росси", "##и", "МОСК", "##ВА", "Й", "##ошкар", "и", "Ола",
    "ола", "—", "-",
    # Greek: tonos is Mn after NFD; final sigma when lower-cased.
    "Η", "η", "Αθήνα", "αθηνα", "είναι", "ειναι", "πρωτεύουσα", "πρωτευουσα", "ΑΘΗΝΑ",
    "ΟΔΥΣΣΕΥΣ", "οδυσσευς",
    # Upper case: İ lower-cases to i + U+0307 (Mn); ß stays ß.
    "NEW", "YORK", "new", "york", "İ", "##STANBUL", "istanbul", "STRASSE", "strasse", "Straße",
    "straße",
    # Emoji: VS16 U+FE0F is Mn; ZWJ U+200D is Cf (deleted like a control character).
    "I", "i", "❤", "🍕", "👩", "##💻", "😀", "##😀",
    # Words around control and zero-width characters.
    "zero", "##width", "soft", "##hyphen", "nul", "bom", "RTL", "rtl", "del", "tab", "line",
    "end", "sep", "nbsp", "is", "in", "and", ",", ".", "!",
]

SENTENCES = [
    "北京大学 is in 北京, 中国.",
    "東京の日本語はカタカナとひらがなです。",
    "ｶﾀｶﾅ and ガギグ and ぱぴぷ",
    "اللغة العربية جميلة، والعَرَبِيَّة بالتشكيل.",
    "हिन्दी भाषा और संस्कृत। क्\u200dष",
    "Zürich, São Paulo, Ærøskøbing, naïve café, Crème BRÛLÉE",
    "Москва — столица России. МОСКВА, Йошкар-Ола",
    "Η Αθήνα είναι η πρωτεύουσα. ΑΘΗΝΑ ΟΔΥΣΣΕΥΣ",
    "NEW YORK and İSTANBUL and STRASSE Straße",
    "I ❤\ufe0f 🍕 and 👩\u200d💻 😀😀",
    "zero\u200bwidth soft\u00adhyphen \x00nul\x01 bom\ufeff \u200eRTL\u200f عربي \x7fdel",
    "tab\tnew\nline\r\nend\u2028sep\u00a0nbsp",
    "Der Präsident 习近平 besuchte Москва und 東京 😀!",
    "e\u0301 NFD café versus NFC café",
    # The original's limit of 200 characters a word, on characters of 4 and 3 UTF-8 bytes
    # (FullTokenizer's WordPiece op counts bytes: 200 characters are 800 and 600 of them).
    "😀" * 200,
    "😀" * 201,
    "\u0915\u093f" * 100,
    "\u0915\u093f" * 101,
]

# Worked by hand from the original's rules: what the vocab must give, so that the comparison
# below compares pieces, not [UNK]s.
BY_HAND = {
    (False, "東京の日本語はカタカナとひらがなです。"):
        ["東", "京", "の", "日", "本", "語", "は", "##カタカナ", "##と", "##ひらがな", "##です",
         "。"],
    # Uncased, NFD takes the voicing mark off で and が: "てす" has a piece, "ひらかな" none,
    # so the whole kana run is [UNK].
    (True, "東京の日本語はカタカナとひらがなです。"):
        ["東", "京", "の", "日", "本", "語", "[UNK]", "。"],
    (False, "हिन्दी भाषा और संस्कृत। क्\u200dष"):
        ["हि", "##न्दी", "भाषा", "और", "सं", "##स्कृत", "।", "क", "##्ष"],
    # Uncased deletes the virama: हिन्दी is हिनदी, संस्कृत has no pieces left.
    (True, "हिन्दी भाषा और संस्कृत। क्\u200dष"):
        ["हि", "##नदी", "भाषा", "और", "[UNK]", "।", "क", "##ष"],
    (False, "I ❤\ufe0f 🍕 and 👩\u200d💻 😀😀"):
        ["I", "[UNK]", "🍕", "and", "👩", "##💻", "😀", "##😀"],
    (True, "I ❤\ufe0f 🍕 and 👩\u200d💻 😀😀"):
        ["i", "❤", "🍕", "and", "👩", "##💻", "😀", "##😀"],
    (True, "Η Αθήνα είναι η πρωτεύουσα. ΑΘΗΝΑ ΟΔΥΣΣΕΥΣ"):
        ["η", "αθηνα", "ειναι", "η", "πρωτευουσα", ".", "αθηνα", "οδυσσευς"],
    (False, "e\u0301 NFD café versus NFC café"):
        ["e", "##\u0301", "NFD", "café", "versus", "NFC", "café"],
}


@pytest.fixture(scope="module")
def vocab_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("multilingual") / "vocab.txt"
    path.write_text("".join(token + "\n" for token in SPECIAL + PIECES), encoding="utf-8")
    return str(path)


@pytest.fixture(scope="module")
def original():
    return import_original("bert.tokenization")


@pytest.mark.parametrize("do_lower_case", [False, True], ids=["cased", "uncased"])
def test_both_tokenizers_give_the_originals_tokens_on_mixed_scripts(vocab_file, original,
                                                                     do_lower_case):
    reference = original.FullTokenizer(vocab_file, do_lower_case=do_lower_case)
    expected = [reference.tokenize(sentence) for sentence in SENTENCES]
    for (lower, sentence), tokens in BY_HAND.items():
        if lower == do_lower_case:
            assert expected[SENTENCES.index(sentence)] == tokens, sentence
    expected_ids = [reference.convert_tokens_to_ids(tokens) for tokens in expected]

    ours = FullTokenizer(vocab_file, do_lower_case)
    python = PythonTokenizer(vocab_file, do_lower_case)
    batch_tokens = ours.tokenize_batch(SENTENCES)
    batch_ids = [ids.tolist() for ids in ours.tokenize_batch_ids(SENTENCES)]
    python_ids = [ids.tolist() for ids in python.tokenize_batch_ids(SENTENCES)]
    for i, sentence in enumerate(SENTENCES):
        assert batch_tokens[i] == expected[i], ascii(sentence)
        assert batch_ids[i] == expected_ids[i], ascii(sentence)
        assert python_ids[i] == expected_ids[i], ascii(sentence)
        # Alone too: a batch groups its lines by the characters they hold.
        assert ours.tokenize(sentence) == expected[i], ascii(sentence)
        assert python.tokenize_batch_ids([sentence])[0].tolist() == expected_ids[i], \
            ascii(sentence)
