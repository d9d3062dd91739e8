"""Tests for data_prep.wordpiece_vocab and the build_vocab CLI: the vocab's layout and size,
determinism, how well our tokenizer covers the text with it, and the CLI's one-line errors."""

import os
import subprocess
import sys

import pytest

from data_prep import wordpiece_vocab
from data_prep.input_errors import InputError
from official.text.tokenizer import FullTokenizer

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SENTENCES = [
    "The quick brown fox jumps over the lazy dog.",
    "Zoë and Chloé drank café au lait in Zürich, didn't they?",
    "Running, jumping and swimming are the runners' favourite sports!",
    "In 2019 the company's revenue grew by 12.5% to $3,400,000.",
    "She said: \"We'll meet at the station at half past nine.\"",
    "Naïve résumés rarely impress the hiring managers of large firms.",
    "東京 and 北京 are capitals; Ελλάδα is Greece.",
    "Walking slowly, the walkers walked along the long, winding road.",
]


@pytest.fixture(scope="module")
def text_file(tmp_path_factory):
    """Each sentence 20 times, with a numbered word so lines are not all alike."""
    path = tmp_path_factory.mktemp("text") / "corpus.txt"
    lines = [f"{sentence} Line {i}." for i in range(20) for sentence in SENTENCES]
    path.write_text("\n".join(lines) + "\n\n", encoding="utf-8")
    return str(path)


def _cli(*args):
    return subprocess.Popen(
        [sys.executable, "-m", "data_prep.build_vocab", *args], cwd=REPO, text=True,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"})


@pytest.fixture(scope="module")
def cli_runs(text_file, tmp_path_factory):
    """The CLI runs of the tests below, started together (each spends seconds importing TF)."""
    tmp = tmp_path_factory.mktemp("cli")
    (tmp / "blank.txt").write_text("\n \n\t\n", encoding="utf-8")
    runs = {
        "ok": _cli(f"--input_file={text_file}", f"--output_file={tmp / 'vocab.txt'}",
                   "--vocab_size=200", "--nodo_lower_case"),
        "no_match": _cli(f"--input_file={text_file},{tmp}/missing*.txt",
                         f"--output_file={tmp / 'a.txt'}"),
        "empty": _cli(f"--input_file={tmp / 'blank.txt'}", f"--output_file={tmp / 'b.txt'}"),
        "too_small": _cli(f"--input_file={text_file}", f"--output_file={tmp / 'c.txt'}",
                          "--vocab_size=20"),
    }
    results = {}
    for name, run in runs.items():
        stdout, stderr = run.communicate(timeout=300)
        results[name] = (run.returncode, stdout, stderr)
    return tmp, results


@pytest.mark.parametrize("lower_case", [True, False], ids=["uncased", "cased"])
def test_vocab_layout_and_coverage(text_file, tmp_path, lower_case):
    vocab_file = str(tmp_path / "vocab.txt")
    vocab = wordpiece_vocab.build_vocab([text_file], vocab_file, vocab_size=400,
                                        lower_case=lower_case)
    with open(vocab_file, encoding="utf-8") as f:
        assert f.read().split("\n")[:-1] == vocab
    assert vocab[:5] == ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    assert len(vocab) <= 400
    chars = [t for t in vocab[5:] if len(t) == 1]
    assert vocab[5:5 + len(chars)] == sorted(chars)  # single characters next, then the rest
    assert all("##" + c in vocab for c in chars)
    assert "東" in chars
    if lower_case:  # the words the tokenizer sees: lower case, accents stripped
        assert "e" in chars and not any(c.isupper() or c in "éëïöü" for c in chars)
    else:
        assert {"é", "Z", "e"} <= set(chars)

    tokenizer = FullTokenizer(vocab_file, do_lower_case=lower_case)
    with open(text_file, encoding="utf-8") as f:
        tokens = [t for line in tokenizer.tokenize_batch(f.read().split("\n")) for t in line]
    assert tokens.count("[UNK]") == 0
    whole_words = sum(not t.startswith("##") for t in tokens)
    assert len(tokens) < 1.5 * whole_words  # frequent words are whole tokens, not spelled out


def test_same_input_same_bytes(text_file, tmp_path):
    paths = [tmp_path / "a.txt", tmp_path / "b.txt"]
    for path in paths:
        wordpiece_vocab.build_vocab([text_file], str(path), vocab_size=120, lower_case=True)
    assert paths[0].read_bytes() == paths[1].read_bytes()


def test_vocab_size_below_required_tokens_is_refused():
    with pytest.raises(InputError, match=r"--vocab_size=10: smaller than the 11 tokens"):
        wordpiece_vocab.learn_vocab({"ab": 3, "ba": 1, "abc": 20}, vocab_size=10)
    vocab = wordpiece_vocab.learn_vocab({"ab": 30, "ba": 10, "abc": 20}, vocab_size=12)
    assert len(vocab) == 12 and {"a", "##a", "b", "##b", "c", "##c"} <= set(vocab)


def test_cli_writes_vocab(cli_runs):
    tmp, results = cli_runs
    returncode, stdout, stderr = results["ok"]
    assert returncode == 0, stderr
    assert "wrote" in stdout
    assert (tmp / "vocab.txt").read_text(encoding="utf-8").startswith("[PAD]\n[UNK]\n")


@pytest.mark.parametrize("name, message", [
    ("no_match", "missing*.txt: no file matches"),
    ("empty", "blank.txt: no words to learn from"),
    ("too_small", "--vocab_size=20: smaller than the"),
])
def test_cli_errors(cli_runs, name, message):
    tmp, results = cli_runs
    returncode, _, stderr = results[name]
    assert returncode == 1
    last_line = stderr.strip().splitlines()[-1]  # TensorFlow's start-up notes come first
    assert last_line.startswith("build_vocab: ") and message in last_line, stderr
    assert not any(path.name.startswith((".a.txt", ".b.txt", ".c.txt", "a.txt", "b.txt", "c.txt"))
                   for path in tmp.iterdir())
