"""The fast generator's records, byte for byte, over its options: cased and uncased, whole-word
masking, the three second-sentence objectives, dupe factors, shards and several chunks a shard.

The digests were taken from the fast mode as it was when its workers still ran TensorFlow's
tokenizer and TFRecord writer (commit 0f87097), so a change to the tokenizer, the instance
builder, the serializer or the file framing that moves a single byte fails here. The corpus is
the shipped pretraining sample, then the tokenizer sample's Unicode lines as documents, then
lines written for the cases the pure-Python tokenizer handles apart (characters beyond U+FFFF,
final sigma, words over 200 characters, format and control characters).
"""

import hashlib
import os
import subprocess
import sys

import pytest

from data_prep import fast_generation
from data_prep.pretraining_options import PretrainingDataOptions
from tests.cli import ENV, PATIENCE
from tests.test_startup import BLOCKED

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(REPO, "tests", "data")

EXTRA_LINES = [
    "ΟΔΟΣ ΑΣ. ΣΑΣ Σ ΑΣΑ ΑΣ\u00ad ΑΣ' ΑΣ1 ΑΣ-Β",
    "Emoji 😀🚀 and 🥰 beside words, 𠀀𠀁 (CJK extension B) and 𝐀𝐁𝐂 letters.",
    "Musical format \U0001d173x\U0001d17a and tags \U000e0041\U000e0042 vanish; İstanbul İ.",
    "A word of " + "x" * 201 + " letters, one of " + "y" * 200 + ".",
    "Control\x01chars\x7fand\u200bzero\u200dwidth\ufeffmarks\u2028line\u2029para\u00a0nbsp.",
    "Ǆemal ǅ ǆ ß ẞ ﬁ ﬂ Å Å K Ω ＡＢＣ ①② ℌ ｶﾀｶﾅ",
    "",
    "Ａccents: é è ê ë ï ü ö ä à ç ñ Å ǻ ḗ; Hangul 한국어; 中文字; ﹏﹐〜。",
]

CASES = {
    "uncased-nsp": (False, dict(dupe_factor=2, max_seq_length=64,
                                max_predictions_per_seq=10), 1),
    "cased-nsp-2shards": (True, dict(dupe_factor=2, max_seq_length=64,
                                     max_predictions_per_seq=10), 2),
    "uncased-wwm-3shards": (False, dict(dupe_factor=3, max_seq_length=64,
                                        max_predictions_per_seq=12, do_whole_word_mask=True), 3),
    "uncased-sop": (False, dict(dupe_factor=2, max_seq_length=48, max_predictions_per_seq=8,
                                objective="sop"), 2),
    "uncased-none": (False, dict(dupe_factor=2, max_seq_length=128, max_predictions_per_seq=20,
                                 objective="none"), 1),
    "cased-wwm-sop": (True, dict(dupe_factor=1, max_seq_length=32, max_predictions_per_seq=6,
                                 objective="sop", do_whole_word_mask=True, short_seq_prob=0.3,
                                 masked_lm_prob=0.2, random_seed=7), 2),
}


def vocab_for(cased: bool) -> str:
    return os.path.join(DATA, "cased_vocab.txt") if cased else os.path.join(
        REPO, "data", "vocab", "uncased_vocab.txt")


def corpus_file(folder) -> str:
    """The corpus of the module docstring, written to `folder`; its path."""
    with open(os.path.join(DATA, "pretraining_sample.txt"), encoding="utf-8") as f:
        text = f.read()
    with open(os.path.join(DATA, "tokenizer_sample.txt"), encoding="utf-8") as f:
        unicode_lines = [line for line in f.read().split("\n") if not line.isascii()]
    documents = [unicode_lines[i:i + 8] for i in range(0, len(unicode_lines), 8)]
    text += "\n".join("\n".join(document) + "\n" for document in documents)
    text += "\n" + "\n".join(EXTRA_LINES) + "\n"
    path = os.path.join(folder, "corpus.txt")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


# sha256 (first 16 hex digits) of each shard, in shard order.
DIGESTS = {
    "uncased-nsp": ["2bde9836454e769a"],
    "cased-nsp-2shards": ["e33a5c419110d616", "3b1378da62170df4"],
    "uncased-wwm-3shards": ["4809dd7bfb29d337", "be864d7dcc7ffd9e", "807ed275625339c2"],
    "uncased-sop": ["c770e91f438ada77", "3a99b77c78b5aebc"],
    "uncased-none": ["1dfd9d2b2e0d2f10"],
    "cased-wwm-sop": ["937e8d86f5a8ee89", "b85d76dffa03c482"],
}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return corpus_file(tmp_path_factory.mktemp("worker_records"))


@pytest.mark.parametrize("name", sorted(CASES))
def test_shards_are_the_bytes_they_were(corpus, tmp_path, name):
    cased, options, num_shards = CASES[name]
    # 16 KiB chunks: several per shard, so chunk seeds and cross-chunk bookkeeping count too.
    fast_generation.generate([corpus], str(tmp_path), vocab_for(cased), not cased,
                             PretrainingDataOptions(**options), num_shards=num_shards,
                             num_workers=1, chunk_bytes=1 << 14)
    digests = []
    for shard in range(num_shards):
        name_ = f"pretraining-{shard:05d}-of-{num_shards:05d}.tfrecord"
        with open(tmp_path / name_, "rb") as f:
            digests.append(hashlib.sha256(f.read()).hexdigest()[:16])
    assert digests == DIGESTS[name]


def test_worker_processes_without_tensorflow_write_the_same_bytes(corpus, tmp_path):
    """The command line with two worker processes, where TensorFlow cannot be imported (tests/
    without_tensorflow/), against this process's in-process run of the same options."""
    cased, options, num_shards = CASES["cased-nsp-2shards"]
    fast_generation.generate([corpus], str(tmp_path / "here"), vocab_for(cased), not cased,
                             PretrainingDataOptions(**options), num_shards=num_shards)
    flags = [f"--{name}={value}" for name, value in options.items()]
    env = dict(ENV, PYTHONPATH=os.pathsep.join([BLOCKED, ENV["PYTHONPATH"]]))
    result = subprocess.run(
        [sys.executable, "-m", "data_prep.create_pretraining_data", f"--input_file={corpus}",
         f"--output_dir={tmp_path / 'workers'}", f"--vocab_file={vocab_for(cased)}",
         "--do_lower_case=false", f"--num_shards={num_shards}", "--num_workers=2", *flags],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=PATIENCE)
    assert result.returncode == 0, result.stderr[-3000:]
    for shard in range(num_shards):
        name = f"pretraining-{shard:05d}-of-{num_shards:05d}.tfrecord"
        assert (tmp_path / "workers" / name).read_bytes() == (tmp_path / "here" / name).read_bytes()
