"""A multilingual corpus and vocab's overlap: data_prep/language_mix.py's smoothed shares (mBERT's
p_l ~ q_l^0.7) and draws, data_prep/piece_overlap.py's counts, against hand computations; the
two commands (mix_languages, wordpiece_overlap) as a user runs them."""

import collections
import gzip
import json

import numpy as np
import pytest

from data_prep import language_mix, piece_overlap
from data_prep.input_errors import InputError
from official.text.python_tokenizer import PythonTokenizer
from tests.cli import failed, run_modules, succeeded


def test_smoothed_shares_are_the_data_shares_to_the_power_s_renormalised():
    words = {"en": 600, "de": 300, "es": 100}
    q = np.array([0.6, 0.3, 0.1])
    for exponent in (0.0, 0.7, 1.0):
        expected = q ** exponent / (q ** exponent).sum()
        found = language_mix.smoothed_shares(words, exponent)
        np.testing.assert_allclose(list(found.values()), expected)
    assert list(language_mix.smoothed_shares(words, 0.7)) == ["en", "de", "es"]


def passages(words_each, count, tag):
    return [language_mix.Passage((" ".join([f"{tag}{i}"] * words_each),))
            for i in range(count)]


def test_a_small_language_is_over_sampled_in_passes_and_a_large_one_under_sampled():
    """en 900 words and de 100 (q = 0.9, 0.1): at S = 0 each gets half of 1,000 words, so
    German's 100 words are drawn in 5 passes, each passage once per pass, and English's 500 of
    900 in one pass without a repeat."""
    made = language_mix.mix({"en": passages(10, 90, "e"), "de": passages(10, 10, "d")},
                            0.0, None, seed=3)
    assert made.languages["de"].words_written == 500 and made.languages["de"].passes == 5
    assert made.languages["en"].words_written == 500 and made.languages["en"].passes == 1
    german = collections.Counter(p for p in made.passages if p.lines[0].startswith("d"))
    assert set(german.values()) == {5} and len(german) == 10
    english = [p for p in made.passages if p.lines[0].startswith("e")]
    assert len(set(english)) == len(english) == 50
    assert made.languages["de"].share == pytest.approx(0.1)
    # The languages are interleaved, and the same seed draws the same corpus.
    first_half = made.passages[:len(made.passages) // 2]
    assert {p.lines[0][0] for p in first_half} == {"e", "d"}
    assert language_mix.mix({"en": passages(10, 90, "e"), "de": passages(10, 10, "d")},
                            0.0, None, seed=3) == made


def test_passages_keep_a_documents_lines_in_order_and_end_at_its_end(tmp_path):
    path = tmp_path / "a.txt.gz"
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.write("one two three\nfour five\nsix\n\nseven eight\n")
    found = language_mix.read_passages([str(path)], passage_words=5)
    assert [p.lines for p in found] == [("one two three", "four five"), ("six",),
                                        ("seven eight",)]


def test_a_language_without_words_is_refused():
    with pytest.raises(InputError, match="language de: its files hold no words"):
        language_mix.mix({"en": passages(3, 2, "e"), "de": []}, 0.7, None, seed=0)


def test_overlap_counts_by_hand(tmp_path):
    """Vocab: [UNK], 'Haus', 'Hand', '##s', 'a'. English 'Hand Hands a zzz' -> Hand, Hand ##s,
    a, [UNK]; German 'Haus Hand Haus' -> Haus, Hand, Haus."""
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nHaus\nHand\n##s\na\n")
    tokenizer = PythonTokenizer(str(vocab), do_lower_case=False)
    english = piece_overlap.piece_counts(tokenizer, ["Hand Hands a zzz"])
    german = piece_overlap.piece_counts(tokenizer, ["Haus Hand Haus"])
    assert english == {6: 2, 7: 1, 8: 1, 1: 1} and german == {5: 2, 6: 1}
    languages, pairs = piece_overlap.overlaps(tokenizer, {"en": english, "de": german})
    assert languages["en"] == piece_overlap.LanguagePieces(5, 3, 0.2)
    # Shared: Hand alone, of {Hand, ##s, a, Haus}; German's 3 tokens, 1 Hand; English's 4
    # known tokens, 2 Hand.
    assert pairs["en", "de"] == piece_overlap.PairOverlap(1, 0.25, 1 / 3, 0.5)


def test_the_commands_write_a_corpus_and_its_overlap_and_refuse_bad_input(tmp_path):
    for language, text in (("en", "the house\nthe hand\n\nred hands\n"),
                           ("de", "das Haus\ndie Hand\n")):
        (tmp_path / language).mkdir()
        (tmp_path / language / "a.txt").write_text(text, encoding="utf-8")
    (tmp_path / "vocab.txt").write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nthe\nHaus\nHand\n"
                                        "hand\n##s\n")
    languages = f"en={tmp_path}/en/*,de={tmp_path}/de/*"
    (tmp_path / "es").mkdir()
    (tmp_path / "es" / "a.txt").write_text("\n\n", encoding="utf-8")
    corpus, overlap, twice, one, empty = run_modules(
        ["data_prep.mix_languages", f"--languages={languages}", "--smoothing=1",
         f"--output_file={tmp_path / 'mix.txt'}", f"--report_file={tmp_path / 'mix.json'}"],
        ["data_prep.wordpiece_overlap", f"--vocab_file={tmp_path / 'vocab.txt'}",
         f"--languages={languages}", f"--output_file={tmp_path / 'overlap.json'}"],
        ["data_prep.mix_languages", f"--languages=en={tmp_path}/en/*,en={tmp_path}/de/*",
         f"--output_file={tmp_path / 'bad.txt'}"],
        ["data_prep.wordpiece_overlap", f"--vocab_file={tmp_path / 'vocab.txt'}",
         f"--languages=en={tmp_path}/en/*", f"--output_file={tmp_path / 'bad.json'}"],
        ["data_prep.mix_languages", f"--languages={languages},es={tmp_path}/es/*",
         f"--output_file={tmp_path / 'bad.txt'}"])
    succeeded(corpus)
    documents = (tmp_path / "mix.txt").read_text().split("\n\n")
    assert sorted(documents[:-1]) == ["das Haus\ndie Hand", "red hands", "the house\nthe hand"]
    report = json.loads((tmp_path / "mix.json").read_text())
    assert report["languages"]["de"]["words_written"] == 4
    succeeded(overlap)
    pairs = json.loads((tmp_path / "overlap.json").read_text())["pairs"]
    # en: the, [UNK] (house), the, hand, [UNK] (red), hand ##s; de: [UNK] (das), Haus,
    # [UNK] (die), Hand: nothing shared but case-sensitive "hand" vs "Hand" differ.
    assert pairs["en-de"]["shared_types"] == 0
    assert failed(twice).endswith("--languages: en is named twice")
    assert "an overlap needs two languages or more" in failed(one)
    assert failed(empty) == "mix_languages: language es: its files hold no words"
    assert not (tmp_path / "bad.txt").exists() and not (tmp_path / "bad.json").exists()
