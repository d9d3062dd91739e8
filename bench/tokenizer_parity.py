"""Our FullTokenizer against Google's original on every text corpus in ../shared/data.

    python -m bench.tokenizer_parity [--data_dir=../shared/data] [--cased_vocab=PATH]

For each corpus, uncased (the standard 30,522-token vocab shipped in data/vocab) and cased
(tests/data/cased_vocab.txt, learned from these corpora by data_prep.build_vocab; or
--cased_vocab), prints how many lines' tokens differ from the original's and the lines per
second of both. The original runs line by line (its only API); ours in batches of
`--batch_size` lines. Exits non-zero if any line differs. Needs bert-tensorflow
(requirements-dev.txt).
"""

from __future__ import annotations

import glob
import json
import os
import sys
import time

from absl import app, flags

from official.text.tokenizer import FullTokenizer
from tests.reference_bert import import_original

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

flags.DEFINE_string("data_dir", os.path.join(REPO, "..", "shared", "data"), "The shared corpora.")
flags.DEFINE_string("cased_vocab", os.path.join(REPO, "tests", "data", "cased_vocab.txt"),
                    "The vocab of the cased comparison.")
flags.DEFINE_integer("batch_size", 1024, "Lines per call of our tokenize_batch.")
FLAGS = flags.FLAGS


def _read_text(path: str) -> str:
    """UTF-8, or Latin-1 for the two Gutenberg e-texts that are (see their PROVENANCE.md)."""
    with open(path, "rb") as f:
        raw = f.read()
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


def _lines(path: str) -> list[str]:
    """The file's lines, split at "\\n" only, as the original's readline() does (str.splitlines
    would also split at U+2028, U+0085, form feeds, ... and hide them from the comparison)."""
    text = _read_text(path)
    return text[:-1].split("\n") if text.endswith("\n") else text.split("\n")


def _conll_sentences(path: str) -> list[str]:
    """The words of each CoNLL-2003 sentence (first column), joined by spaces."""
    sentences, words = [], []
    for line in _lines(path) + [""]:
        if line.strip() and not line.startswith("-DOCSTART-"):
            words.append(line.split(" ")[0])
        elif words:
            sentences.append(" ".join(words))
            words = []
    return sentences


def load_corpora(data_dir: str) -> dict[str, list[str]]:
    """{corpus name: lines}: every text corpus under `data_dir`."""
    corpora = {}
    pretraining = os.path.join(data_dir, "pretraining_text")
    for path in ([os.path.join(pretraining, "bert_sample_text.txt"),
                  os.path.join(pretraining, "gutenberg_sentences.txt")]
                 + sorted(glob.glob(os.path.join(pretraining, "gutenberg_nltk", "*.txt")))):
        corpora[os.path.relpath(path, data_dir)] = _lines(path)
    for path in sorted(glob.glob(os.path.join(data_dir, "glue", "*", "*.tsv"))):
        corpora[os.path.relpath(path, data_dir)] = _lines(path)
    for path in sorted(glob.glob(os.path.join(data_dir, "conll2003", "eng.*"))):
        corpora[os.path.relpath(path, data_dir)] = _conll_sentences(path)
    squad_path = os.path.join(data_dir, "squad", "v1.1", "dev-v1.1.json")
    with open(squad_path, encoding="utf-8") as f:
        paragraphs = [p for article in json.load(f)["data"] for p in article["paragraphs"]]
    corpora["squad/v1.1 contexts"] = [p["context"] for p in paragraphs]
    corpora["squad/v1.1 questions"] = [qa["question"] for p in paragraphs for qa in p["qas"]]
    return corpora


def compare(vocab_file: str, do_lower_case: bool, corpora: dict[str, list[str]]) -> int:
    """Prints one row per corpus; returns the number of differing lines."""
    ours = FullTokenizer(vocab_file, do_lower_case=do_lower_case)
    original = import_original("bert.tokenization").FullTokenizer(vocab_file, do_lower_case)
    ours.tokenize_batch(["warm up the tf.function"])
    print(f"\n{'uncased' if do_lower_case else 'cased'} ({vocab_file}, {len(ours.vocab)} tokens)")
    print(f"{'corpus':52s} {'lines':>8s} {'differ':>7s} {'ours l/s':>10s} {'orig l/s':>10s} ratio")
    total_lines = total_diff = 0
    total_ours = total_original = 0.0
    for name, lines in corpora.items():
        start = time.perf_counter()
        got = [tokens for i in range(0, len(lines), FLAGS.batch_size)
               for tokens in ours.tokenize_batch(lines[i:i + FLAGS.batch_size])]
        ours_s = time.perf_counter() - start
        start = time.perf_counter()
        expected = [original.tokenize(line) for line in lines]
        original_s = time.perf_counter() - start
        differ = [i for i, (a, b) in enumerate(zip(got, expected)) if a != b]
        for i in differ[:3]:
            print(f"  DIFF line {i + 1}: {lines[i]!r}\n    ours {got[i]}\n    orig {expected[i]}")
        print(f"{name:52s} {len(lines):8d} {len(differ):7d} {len(lines) / ours_s:10.0f} "
              f"{len(lines) / original_s:10.0f} {original_s / ours_s:5.1f}x")
        total_lines += len(lines)
        total_diff += len(differ)
        total_ours += ours_s
        total_original += original_s
    print(f"{'all':52s} {total_lines:8d} {total_diff:7d} {total_lines / total_ours:10.0f} "
          f"{total_lines / total_original:10.0f} {total_original / total_ours:5.1f}x")
    return total_diff


def main(argv):
    del argv
    corpora = load_corpora(FLAGS.data_dir)
    differ = (compare(os.path.join(REPO, "data", "vocab", "uncased_vocab.txt"), True, corpora)
              + compare(FLAGS.cased_vocab, False, corpora))
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    app.run(main)
