"""The fast generator end to end: deterministic shards, the original's features, atomic files, a
rerun replacing an earlier run's output, a failing worker's exception reaching the caller."""

import json
import logging
import os

import pytest
import tensorflow as tf

from data_prep import fast_generation
from data_prep.input_errors import InputError
from data_prep.pretraining_options import PretrainingDataOptions
from official.pretraining_shards import SUMMARY_FILE, shard_path
from official.text.python_tokenizer import PythonTokenizer
from official.text.vocab import load_vocab
from tests.reference_bert import original_parse_spec

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SAMPLE = os.path.join(REPO, "tests", "data", "pretraining_sample.txt")
VOCAB = os.path.join(REPO, "data", "vocab", "uncased_vocab.txt")
TOKENS = {i: token for token, i in load_vocab(VOCAB).items()}
OPTIONS = PretrainingDataOptions(max_seq_length=64, max_predictions_per_seq=10, dupe_factor=2)

ORIGINAL_FEATURES = original_parse_spec(64, 10)


def shard_bytes(directory):
    return {name: open(os.path.join(directory, name), "rb").read()
            for name in sorted(os.listdir(directory)) if name.endswith(".tfrecord")}


def test_shards_are_byte_identical_whatever_the_workers(tmp_path):
    # Small chunks, so each shard has several, each with its own seed.
    one = fast_generation.generate([SAMPLE], str(tmp_path / "one"), VOCAB, True, OPTIONS,
                                   num_shards=3, num_workers=1, chunk_bytes=20_000)
    fast_generation.generate([SAMPLE], str(tmp_path / "two"), VOCAB, True, OPTIONS, num_shards=3,
                             num_workers=2, chunk_bytes=20_000)
    assert shard_bytes(tmp_path / "one") == shard_bytes(tmp_path / "two")
    assert len(shard_bytes(tmp_path / "one")) == 3
    assert sorted(os.listdir(tmp_path / "one")) == sorted(shard_bytes(tmp_path / "one")) + [
        "summary.json"]
    summary = json.loads((tmp_path / "one" / "summary.json").read_text())
    assert summary["instances"] == one["instances"] > 100
    assert 0.13 < summary["fraction_masked"] < 0.17
    assert abs(summary["masking_split"]["mask"] - 0.8) < 0.03
    assert 0.45 < summary["second_sentence_label_1_fraction"] < 0.65
    assert sum(summary["length_histogram"].values()) == summary["instances"]

    other_seed = PretrainingDataOptions(**{**OPTIONS.__dict__, "random_seed": 1})
    fast_generation.generate([SAMPLE], str(tmp_path / "seed1"), VOCAB, True, other_seed,
                             num_shards=3, chunk_bytes=20_000)
    assert shard_bytes(tmp_path / "seed1") != shard_bytes(tmp_path / "one")


def test_records_parse_with_the_originals_features(tmp_path):
    fast_generation.generate([SAMPLE], str(tmp_path), VOCAB, True, OPTIONS, num_shards=1)
    records = tf.data.TFRecordDataset(shard_path(str(tmp_path), 0, 1))
    count = 0
    for record in records:
        example = tf.io.parse_single_example(record, ORIGINAL_FEATURES)
        ids, mask = example["input_ids"].numpy(), example["input_mask"].numpy()
        length = int(mask.sum())
        tokens = [TOKENS[i] for i in ids[:length]]
        assert tokens[0] == "[CLS]" and tokens[-1] == "[SEP]" and tokens.count("[SEP]") == 2
        assert not ids[length:].any()
        weights = example["masked_lm_weights"].numpy()
        positions = example["masked_lm_positions"].numpy()[weights > 0]
        assert len(positions) in range(1, 11) and (positions < length).all()
        count += 1
    assert count > 100


def test_a_failed_shard_leaves_no_file(tmp_path, monkeypatch):
    def fail(*args):
        raise RuntimeError("disk full")

    monkeypatch.setattr(fast_generation, "build_instances", fail)
    with pytest.raises(RuntimeError):
        fast_generation.generate([SAMPLE], str(tmp_path), VOCAB, True, OPTIONS, num_shards=2)
    assert os.listdir(tmp_path) == []


def test_a_rerun_after_a_kill_clears_its_temp_files(tmp_path):
    stale = tmp_path / ".pretraining-00000-of-00001.tfrecord.0123abcd.tmp"
    stale.write_bytes(b"half a record")
    fast_generation.generate([SAMPLE], str(tmp_path), VOCAB, True, OPTIONS, num_shards=1)
    assert sorted(os.listdir(tmp_path)) == ["pretraining-00000-of-00001.tfrecord", "summary.json"]


def test_a_rerun_replaces_the_earlier_runs_output(tmp_path, caplog):
    """Another --num_shards into the same folder: the earlier run's shards and summary go (and
    only they: other files stay), so `*.tfrecord` is this run's alone."""
    fast_generation.generate([SAMPLE], str(tmp_path), VOCAB, True, OPTIONS, num_shards=3)
    (tmp_path / "notes.txt").write_text("mine")
    (tmp_path / "pretraining-0-of-3.tfrecord").write_text("not a shard name")
    caplog.set_level(logging.INFO, logger="absl")
    fast_generation.generate([SAMPLE], str(tmp_path), VOCAB, True, OPTIONS, num_shards=2)
    assert sorted(os.listdir(tmp_path)) == [
        "notes.txt", "pretraining-0-of-3.tfrecord", "pretraining-00000-of-00002.tfrecord",
        "pretraining-00001-of-00002.tfrecord", SUMMARY_FILE]
    assert json.loads((tmp_path / SUMMARY_FILE).read_text())["num_shards"] == 2
    removed = [r.getMessage() for r in caplog.records if "removed" in r.getMessage()]
    assert removed == [f"{tmp_path}: removed the earlier run's output ({SUMMARY_FILE} and 3 "
                       f"shard files) before writing this run's"]


def test_a_failing_worker_reports_its_exception_and_leaves_no_temp_file(tmp_path):
    # A byte range of a file that is gone stands for any failure inside a worker process: it
    # must reach the caller as the worker's own exception, with the worker's traceback.
    plan = [[fast_generation.corpus_shards.ByteRange(str(tmp_path / "gone.txt"), 0, 1000)]]
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(FileNotFoundError, match="gone.txt") as raised:
        fast_generation._generate_in_workers(plan, str(out), 1, PythonTokenizer(VOCAB, True),
                                             OPTIONS, 20_000, num_workers=2,
                                             progress=fast_generation._Progress(1000))
    assert any("in a worker process" in note for note in raised.value.__notes__)
    assert os.listdir(out) == []


def test_bad_inputs(tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("\n\n  \n")
    with pytest.raises(InputError, match=r"empty.txt: no document with any text"):
        fast_generation.generate([str(empty)], str(tmp_path / "out"), VOCAB, True, OPTIONS)
    assert not (tmp_path / "out").exists()  # Refused before the folder is touched.

    no_mask = tmp_path / "vocab.txt"
    no_mask.write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\nthe\n")
    with pytest.raises(InputError, match=r"vocab.txt: vocab lacks \[MASK\]"):
        fast_generation.generate([SAMPLE], str(tmp_path / "out2"),
                                 str(no_mask), True, OPTIONS)
