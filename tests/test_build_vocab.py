"""Tests for data_prep.wordpiece_vocab and the build_vocab CLI: the vocab's layout and size,
determinism, how well our tokenizer covers the text with it, and the CLI's one-line errors."""

import os
import subprocess
import sys

import pytest

from data_prep import wordpiece_vocab
from data_prep.input_errors import InputError
from official.text.tokenizer import FullTokenizer
from tests.cli import PATIENCE, start

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
    return start("data_prep.build_vocab", *args)


@pytest.fixture(scope="module")
def cli_runs(text_file, tmp_path_factory):
    """The CLI runs of the tests below, started together (tests/cli.py: forked from the
    process that has imported TensorFlow, as the vocab learner loads it)."""
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
        stdout, stderr = run.communicate(timeout=PATIENCE)
        results[name] = (run.returncode, stdout, stderr)
    return tmp, results


@pytest.mark.parametrize("lower_case", [True, False], ids=["uncased", "cased"])
def test_vocab_layout_and_coverage(text_file, tmp_path, lower_case):
    vocab_file = str(tmp_path / "vocab.txt")
    vocab = wordpiece_vocab.build_vocab([text_file], vocab_file, vocab_size=400,
                                        lower_case=lower_case).tokens
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


def test_the_threshold_search_is_the_learners(text_file):
    """learn() runs tensorflow-text's learner step by step (to know where its search ended):
    the same vocab as the learner's own learn(), whatever the size and lowest threshold."""
    from tensorflow_text.tools.wordpiece_vocab import wordpiece_tokenizer_learner_lib as learner

    with open(text_file, "rb") as f:
        counts = wordpiece_vocab.count_words(f.read().splitlines(), lower_case=True)
    ordered = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    for vocab_size, min_piece_count in [(120, 10), (200, 10), (400, 10), (400, 2), (60, 1)]:
        tried = []
        ours = wordpiece_vocab._learn(ordered, vocab_size, min_piece_count,
                                      lambda t, n, tried=tried: tried.append((t, n)))
        assert ours.tokens == learner.learn(ordered, vocab_size,
                                            list(wordpiece_vocab.SPECIAL_TOKENS),
                                            lower_thresh=min_piece_count)
        assert tried == list(ours.sizes.items()) and tried[-1] == (ours.threshold,
                                                                    len(ours.tokens))


def test_a_lower_min_piece_count_gives_more_tokens():
    counts = {f"w{n}": n for n in range(1, 31)}  # "w1" seen once ... "w30" thirty times
    default = wordpiece_vocab.learn(counts, vocab_size=200)
    lower = wordpiece_vocab.learn(counts, vocab_size=200, min_piece_count=3)
    assert len(default.tokens) < len(lower.tokens) < 200
    assert default.threshold in (9, 10) and lower.threshold in (2, 3)  # one below, at most
    assert "w12" in default.tokens and "w4" not in default.tokens and "w4" in lower.tokens
    assert default.tokens == wordpiece_vocab.learn_vocab(counts, vocab_size=200)


def test_shortfall_names_the_reason():
    def learned(size, threshold, sizes, lowest=10):
        return wordpiece_vocab.LearnedVocab(["t"] * size, threshold, sizes, lowest)

    assert learned(100, 12, {12: 100}).shortfall(100, 10) is None
    assert learned(90, 9, {10: 80, 9: 90}).shortfall(100, 10).startswith(
        "every piece seen at least 9 times is already in, and the learner's threshold goes no "
        "lower (--min_piece_count=10)")
    assert "no word of this text is rarer" in learned(90, 40, {40: 90}, 40).shortfall(100, 10)
    assert learned(90, 1, {1: 90}, 1).shortfall(100, 1).startswith("every piece of this text")
    assert learned(90, 30, {29: 120, 30: 90}).shortfall(100, 10) == (
        "a threshold of 29 instead of 30 gives 120 tokens, more than that")
    assert learned(97, 30, {30: 97}).shortfall(100, 10).startswith(
        "the learner stops within 5% below it")


def test_the_clis_default_min_piece_count_is_the_learners():
    # The CLI repeats the default so that --help loads no TensorFlow; run, not imported (the
    # original's flags, which another test imports, would clash with its own).
    result = subprocess.run([sys.executable, "-m", "data_prep.build_vocab", "--helpfull"],
                            cwd=REPO, capture_output=True, text=True)
    flag_help = result.stdout[result.stdout.index("--min_piece_count:"):]
    assert flag_help.split("(default: ", 1)[1].startswith(
        f"'{wordpiece_vocab.DEFAULT_MIN_PIECE_COUNT}')")


def test_cli_writes_vocab(cli_runs):
    tmp, results = cli_runs
    returncode, stdout, stderr = results["ok"]
    assert returncode == 0, stderr
    size = len((tmp / "vocab.txt").read_text(encoding="utf-8").splitlines())
    assert stderr.strip().splitlines()[-1].startswith(f"wrote {size} tokens to {tmp / 'vocab.txt'}")
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
    last_line = stderr.strip().splitlines()[-1]
    assert last_line.startswith("build_vocab: ") and message in last_line, stderr
    assert not any(path.name.startswith((".a.txt", ".b.txt", ".c.txt", "a.txt", "b.txt", "c.txt"))
                   for path in tmp.iterdir())
