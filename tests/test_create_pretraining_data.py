"""Tests for `python -m data_prep.create_pretraining_data`, run as a user runs it (subprocess):
--reproduce_original makes the original's records, and bad input fails with one line and no file.

The runs start together (each spends seconds importing TensorFlow) and the tests read their
results. Only the last stderr line is checked for errors: TensorFlow's C++ start-up notes come
first.
"""

import os
import subprocess
import sys

import pytest
import tensorflow as tf

from data_prep.pretraining_options import PretrainingDataOptions
from tests.cli import ENV, PATIENCE
from tests.test_original_instances import REPO, VOCAB, assert_same_records, run_original

A_TEXT = "The cat sat on the mat.\nIt was a sunny day.\nEveryone was outside.\n\n"
# b.txt has one byte that is not UTF-8 (Latin-1 "é"); the run must go on and say so.
B_TEXT = ("A lonély one-sentence document.\n\n"
          "Another document starts here.\nIt talks about running, walked and talking.\n"
          "Numbers like 3.14 and 2019 appear too.\nThen it ends.\n\n")
FLAGS = {"max_seq_length": 32, "max_predictions_per_seq": 5, "dupe_factor": 3, "random_seed": 5,
         "short_seq_prob": 0.3}


def start(folder, *flags):
    return subprocess.Popen(
        [sys.executable, "-m", "data_prep.create_pretraining_data", *flags], cwd=REPO,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=dict(ENV, TF_CPP_MIN_LOG_LEVEL="2")), folder


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """{case: (exit status, stderr lines, output folder)} of every run below, run in parallel."""
    root = tmp_path_factory.mktemp("cli")
    text = root / "text"
    text.mkdir()
    (text / "a.txt").write_text(A_TEXT)
    (text / "b.txt").write_bytes(B_TEXT.encode("latin-1"))
    (root / "blank.txt").write_text("\n  \n\n")
    (root / "no_mask_vocab.txt").write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\nthe\n")

    def outputs(case):
        folder = root / case
        return folder, f"--output_file={folder}/x.tfrecord"

    reproduce = "--reproduce_original"
    texts, vocab = f"--input_file={text}/*.txt", f"--vocab_file={VOCAB}"
    folder = root / "reproduce"
    cases = {
        "reproduce": start(folder, reproduce, texts, vocab,
                           *(f"--{name}={value}" for name, value in FLAGS.items()),
                           f"--output_file={folder}/x.tfrecord,{folder}/y.tfrecord"),
        "no_match": start(*outputs("no_match"), reproduce, f"--input_file={root}/nothing*.txt",
                          vocab),
        "no_documents": start(*outputs("no_documents"), reproduce,
                              f"--input_file={root}/blank.txt", vocab),
        "no_mask": start(*outputs("no_mask"), reproduce, texts,
                         f"--vocab_file={root}/no_mask_vocab.txt"),
        "bad_option": start(*outputs("bad_option"), reproduce, texts, vocab, "--max_seq_length=4"),
        "no_output_file": start(root / "no_output_file", reproduce, texts, vocab),
        "dask_address_alone": start(root / "dask_address_alone", texts, vocab,
                                    f"--output_dir={root}/dask_address_alone",
                                    "--dask_address=tcp://127.0.0.1:8786"),
        "fast": start(root / "fast", texts, vocab, f"--output_dir={root}/fast", "--num_shards=2",
                      "--num_workers=2", "--objective=sop"),
        "beam": start(root / "beam", texts, vocab, f"--output_dir={root}/beam", "--num_shards=2",
                      "--runner=DirectRunner", "--objective=sop"),
    }
    results = {}
    for case, (process, out) in cases.items():
        _, stderr = process.communicate(timeout=PATIENCE)
        results[case] = (process.returncode, stderr.strip().splitlines(), out)
    results["root"] = root
    return results


def test_reproduce_original_writes_the_originals_records(runs, tmp_path):
    status, stderr, out = runs["reproduce"]
    assert status == 0, "\n".join(stderr[-20:])
    text = runs["root"] / "text"
    assert any(line.endswith(f"{text}/b.txt: 1 bytes were not UTF-8 and were replaced")
               for line in stderr)
    # The original stops at a byte that is not UTF-8; given the same text with U+FFFD, which its
    # tokenizer drops, it must make the same records.
    fixed = tmp_path / "b.txt"
    fixed.write_text(B_TEXT.replace("é", "\ufffd"), encoding="utf-8")
    input_files = [str(fixed) if path.endswith("b.txt") else path  # In the glob's order.
                   for path in tf.io.gfile.glob(f"{text}/*.txt")]
    expected = [str(tmp_path / "x.tfrecord"), str(tmp_path / "y.tfrecord")]
    run_original(input_files, expected, PretrainingDataOptions(**FLAGS))
    assert_same_records(str(out / "x.tfrecord"), expected[0])
    assert_same_records(str(out / "y.tfrecord"), expected[1])
    assert sorted(os.listdir(out)) == ["x.tfrecord", "y.tfrecord"]


def test_fast_mode_and_beam_make_the_same_records(runs):
    """The process pool and the Beam pipeline cut the corpus the same way: same records."""
    records = {}
    for case in ("fast", "beam"):
        status, stderr, out = runs[case]
        assert status == 0, "\n".join(stderr[-20:])
        names = sorted(os.listdir(out))
        assert names == ["pretraining-00000-of-00002.tfrecord",
                         "pretraining-00001-of-00002.tfrecord", "summary.json"]
        records[case] = sorted(r.numpy() for r in tf.data.TFRecordDataset(
            [str(out / name) for name in names[:2]]))
    assert records["fast"] == records["beam"] and len(records["fast"]) > 5


@pytest.mark.parametrize("case,message", [
    ("no_match", "{root}/nothing*.txt: no file matches"),
    ("no_documents", "{root}/blank.txt: no document with any text"),
    ("no_mask", "{root}/no_mask_vocab.txt: vocab lacks [MASK]"),
    ("bad_option", "max_seq_length must be at least 5, got 4"),
    ("no_output_file", "--output_file: required"),
    ("dask_address_alone", "--dask_address: only with --runner=DaskRunner"),
])
def test_bad_input_fails_with_one_line_and_writes_nothing(runs, case, message):
    status, stderr, out = runs[case]
    assert status == 1
    assert stderr[-1] == "create_pretraining_data: " + message.format(root=runs["root"])
    assert not out.exists() or os.listdir(out) == []
