"""vocab_report's counts and extend_vocab's choices against hand-computed cases; the commands on
the shipped ChemProt sample, and their bad inputs (one line, nothing written)."""

import collections
import json
import os

import pytest

from data_prep import vocab_extension, vocab_fit
from data_prep.input_errors import InputError
from data_prep.wordpiece_vocab import learn
from official.text.python_tokenizer import PythonTokenizer
from official.text.vocab import load_vocab
from tests.cli import failed, run_module, succeeded

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
UNCASED = os.path.join(REPO, "data", "vocab", "uncased_vocab.txt")
CHEMPROT = os.path.join(REPO, "data", "chemprot_sample")
SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def write_vocab(path, tokens):
    path.write_text("\n".join(tokens) + "\n", encoding="utf-8")
    return str(path)


@pytest.fixture
def letters_vocab(tmp_path):
    """Special tokens, two unused lines, and a..e alone and after ##."""
    letters = list("abcde")
    return write_vocab(tmp_path / "vocab.txt",
                       SPECIAL + ["[unused0]", "[unused1]"] + letters + ["##" + c for c in letters])


def test_the_fit_counts_words_pieces_splits_and_unknowns_by_hand(letters_vocab):
    tokenizer = PythonTokenizer(letters_vocab)
    # Words: "abc" x2 (3 pieces each), "a" (1), "," (no such piece: [UNK]), "b2" ([UNK]: no "##2").
    counts = vocab_fit.word_counts(tokenizer, ["ABC abc, a", "b2"])
    assert counts == collections.Counter({"abc": 2, ",": 1, "a": 1, "b2": 1})
    fit = vocab_fit.measure(tokenizer, counts, top_k=5)
    assert (fit.words, fit.pieces, fit.split_words) == (5, 2 * 3 + 1 + 1 + 1, 2)
    assert (fit.alphabetic_words, fit.alphabetic_split_words, fit.unknown_words) == (4, 2, 2)
    assert fit.pieces_per_word == pytest.approx(9 / 5)
    assert fit.alphabetic_split_rate == pytest.approx(2 / 4)
    assert fit.fragmented == (vocab_fit.FragmentedWord("abc", 2, ("a", "##b", "##c")),)


def test_choices_save_what_hand_counting_says_and_rescore_after_each_pick(letters_vocab):
    base = load_vocab(letters_vocab)
    counts = {"abcd": 5, "abce": 3}
    # Alone: "abc" saves 2 pieces on each of 8 words (16), "abcd" 3 on 5 (15), "##ce" 1 on 3.
    # Once "abc" is in, "abcd" saves 1 on 5, and "##ce" nothing ("abc" is matched first).
    chosen = vocab_extension.choose(counts, base, ["abcd", "abc", "##ce"], max_new_tokens=3,
                                    min_count=1)
    assert chosen == [vocab_extension.Choice("abc", 16, 8), vocab_extension.Choice("abcd", 5, 5)]
    assert vocab_extension.choose(counts, base, ["abcd", "abc"], 3, min_count=6) == [
        vocab_extension.Choice("abc", 16, 8)]  # "abcd"'s words occur 5 times
    # Longer than every base entry ("[unused0]", 9 characters): 10 pieces become 1, 4 times.
    assert vocab_extension.choose({"abcdeabcde": 4}, base, ["abcdeabcde"], 1, min_count=1) == [
        vocab_extension.Choice("abcdeabcde", 36, 4)]


def test_layouts_fill_unused_lines_in_order_or_append_and_never_move_an_old_token(letters_vocab):
    tokens = list(load_vocab(letters_vocab))
    filled = vocab_extension.layout(tokens, ["x1", "x2"], "unused")
    assert filled[5:7] == ["x1", "x2"] and filled[:5] == tokens[:5] and filled[7:] == tokens[7:]
    assert vocab_extension.layout(tokens, ["x1"], "append") == tokens + ["x1"]
    with pytest.raises(InputError, match="3 new tokens but the vocab has 2 \\[unusedN\\] lines"):
        vocab_extension.layout(tokens, ["x1", "x2", "x3"], "unused")


def test_the_command_adds_only_what_the_learner_counted_and_keeps_every_old_id(tmp_path):
    out = tmp_path / "out"
    succeeded(run_module("data_prep.extend_vocab", f"--vocab_file={UNCASED}",
                         f"--input_file={CHEMPROT}/train.txt", "--text_field=text",
                         "--max_new_tokens=40", "--min_count=3", f"--output_dir={out}"))
    old, new = list(load_vocab(UNCASED)), list(load_vocab(str(out / "vocab.txt")))
    record = json.loads((out / "vocab_extension.json").read_text())
    added = [t["token"] for t in record["tokens"]]
    assert 0 < len(added) <= 40 and len(new) == len(old)
    unused = [i for i, token in enumerate(old) if token.startswith("[unused")]
    assert [t["id"] for t in record["tokens"]] == unused[:len(added)]  # in order
    assert [new[i] for i in unused[:len(added)]] == added
    assert all(a == b for i, (a, b) in enumerate(zip(old, new)) if i not in unused[:len(added)])
    # The learner, run here on the same words, proposed every token added.
    tokenizer = PythonTokenizer(UNCASED)
    texts = [json.loads(line)["text"] for line in open(f"{CHEMPROT}/train.txt")]
    counts = vocab_fit.word_counts(tokenizer, texts)
    assert set(added) <= set(learn(dict(counts), len(old), min_piece_count=3).tokens)
    assert record["pieces_per_word"]["after"] < record["pieces_per_word"]["before"]
    succeeded(run_module("data_prep.vocab_report", f"--vocab_file={out / 'vocab.txt'}",
                         f"--input_file={CHEMPROT}/train.txt", "--text_field=text",
                         f"--output_file={tmp_path / 'fit.json'}"))
    fit = json.loads((tmp_path / "fit.json").read_text())
    assert fit["pieces_per_word"] == pytest.approx(record["pieces_per_word"]["after"])
    assert fit["words"] == sum(counts.values())


@pytest.mark.parametrize("case", ["duplicate", "too_many", "json"])
def test_bad_input_is_one_line_and_writes_nothing(tmp_path, case):
    vocab = UNCASED
    flags = ["--max_new_tokens=10"]
    if case == "duplicate":
        vocab = write_vocab(tmp_path / "dup.txt", SPECIAL + ["a", "b", "a"])
        expected = f"{vocab}: line 8: duplicate token 'a' (first on line 6)"
    elif case == "too_many":
        flags = ["--max_new_tokens=995"]
        expected = (f"--max_new_tokens=995: {vocab} has only 994 [unusedN] lines for "
                    f"--strategy=unused; use --strategy=append or at most 994")
    else:
        (tmp_path / "bad.txt").write_text('{"text": "fine"}\n{"label": "x"}\n')
        expected = f"{tmp_path}/bad.txt:2: no key 'text' (keys: label)"
    source = tmp_path / "bad.txt" if case == "json" else f"{CHEMPROT}/train.txt"
    result = run_module("data_prep.extend_vocab", f"--vocab_file={vocab}",
                        f"--input_file={source}", "--text_field=text", *flags,
                        f"--output_dir={tmp_path / 'out'}")
    assert result.returncode == 1
    assert failed(result) == f"extend_vocab: {expected}"
    assert not (tmp_path / "out").exists() or not os.listdir(tmp_path / "out")
