"""official.text.python_tokenizer against google-research/bert's tokenization.py (bert-tensorflow):
every code point's words, the hand-written edge cases and a real corpus sample as ids, cased and
uncased; a bounded word cache that changes nothing; no TensorFlow needed to import it.

(The same lines are FullTokenizer's tests in test_tokenizer.py and test_basic_tokenizer.py; the
full corpora, both tokenizers against the original, are bench/tokenizer_parity.py.)
"""

import subprocess
import sys

import numpy as np
import pytest

from official.text import python_tokenizer
from official.text.python_tokenizer import PythonTokenizer
from official.text.vocab import VocabError
from tests.cli import ENV, PATIENCE, REPO
from tests.reference_bert import import_original
from tests.test_basic_tokenizer import _sweep_lines
from tests.test_startup import BLOCKED
from tests.test_tokenizer import CASED_VOCAB, EDGE_CASES, SAMPLE, SENTENCES, UNCASED_VOCAB


@pytest.fixture(scope="module")
def original():
    return import_original("bert.tokenization")


@pytest.fixture(scope="module", params=[pytest.param((True, UNCASED_VOCAB), id="uncased"),
                                        pytest.param((False, CASED_VOCAB), id="cased")])
def tokenizers(request, original):
    do_lower_case, vocab = request.param
    return (PythonTokenizer(vocab, do_lower_case),
            original.FullTokenizer(vocab, do_lower_case=do_lower_case))


def _assert_same_ids(ours, reference, lines):
    got = ours.tokenize_batch_ids(lines)
    assert len(got) == len(lines)
    for line, ids in zip(lines, got):
        expected = reference.convert_tokens_to_ids(reference.tokenize(line))
        assert ids.dtype == np.int32 and ids.tolist() == expected, ascii(line)


@pytest.mark.parametrize("lower_case", [True, False], ids=["uncased", "cased"])
def test_every_code_point_gives_the_originals_words(original, lower_case):
    lines = _sweep_lines()
    got = PythonTokenizer(UNCASED_VOCAB, lower_case).words(lines)
    reference = original.BasicTokenizer(do_lower_case=lower_case)
    for line, words in zip(lines, got):
        expected = reference.tokenize(line)
        if words != expected:
            first = next(i for i, (a, b) in enumerate(zip(words + [""], expected + [""]))
                         if a != b)
            pytest.fail(f"line starting U+{ord(line[0]):04X}, word {first}: "
                        f"ours {ascii(words[first:first + 3])}, "
                        f"original {ascii(expected[first:first + 3])}")


def test_edge_cases_and_sentences_give_the_originals_ids(tokenizers):
    ours, reference = tokenizers
    lines = EDGE_CASES + SENTENCES
    _assert_same_ids(ours, reference, lines)
    # One at a time too: a batch groups its lines by the characters they hold.
    for line in lines:
        _assert_same_ids(ours, reference, [line])


def test_a_corpus_sample_gives_the_originals_ids(tokenizers):
    ours, reference = tokenizers
    with open(SAMPLE, encoding="utf-8") as f:
        lines = f.read().split("\n")[:-1]
    _assert_same_ids(ours, reference, lines)


def test_flat_ids_and_ends(tokenizers):
    ours, _ = tokenizers
    lines = ["Hello, world!", "", "Ünïcödé line.", "emoji 😀 line", "x"]
    ids, ends = ours.tokenize_flat(lines)
    per_line = ours.tokenize_batch_ids(lines)
    assert ends.tolist() == np.cumsum([len(row) for row in per_line]).tolist()
    np.testing.assert_array_equal(ids, np.concatenate(per_line))
    assert ours.tokenize_batch_ids([]) == []
    empty_ids, empty_ends = ours.tokenize_flat([])
    assert empty_ids.shape == (0,) and empty_ends.shape == (0,)


def test_the_word_cache_is_bounded_and_changes_nothing(monkeypatch, original):
    reference = original.FullTokenizer(UNCASED_VOCAB, do_lower_case=True)
    monkeypatch.setattr(python_tokenizer, "_CACHE_WORDS", 8)
    ours = PythonTokenizer(UNCASED_VOCAB, do_lower_case=True)
    for start in range(0, len(EDGE_CASES), 5):
        _assert_same_ids(ours, reference, EDGE_CASES[start:start + 5])
        assert len(ours._pieces) <= 8 + len(" ".join(EDGE_CASES[start:start + 5]).split()) * 3


def test_a_text_with_newlines_is_one_text(original):
    reference = original.FullTokenizer(UNCASED_VOCAB, do_lower_case=True)
    _assert_same_ids(PythonTokenizer(UNCASED_VOCAB), reference,
                     ["two\nlines in one text", "ΑΣ\nΒ", "plain"])


def test_a_bad_vocab_is_refused_naming_it(tmp_path):
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("[PAD]\n[CLS]\n[SEP]\n[MASK]\nthe\n")
    with pytest.raises(VocabError, match=f"^{vocab}: vocab lacks \\[UNK\\]$"):
        PythonTokenizer(str(vocab))


def test_it_needs_no_tensorflow():
    code = ("from official.text.python_tokenizer import PythonTokenizer\n"
            f"t = PythonTokenizer({UNCASED_VOCAB!r})\n"
            "print(t.tokenize_batch_ids(['Héllo, wörld!'])[0].tolist())")
    env = dict(ENV, PYTHONPATH=f"{BLOCKED}:{ENV['PYTHONPATH']}")
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env,
                            capture_output=True, text=True, timeout=PATIENCE)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "[7592, 1010, 2088, 999]"
