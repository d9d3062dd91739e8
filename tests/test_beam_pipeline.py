"""Beam makes the fast generator's files and counts (DirectRunner; on Dask: test_beam_dask.py)."""

import json
import os

import pytest
import tensorflow as tf

from data_prep import beam_pipeline, fast_generation
from data_prep.input_errors import InputError
from data_prep.pretraining_options import PretrainingDataOptions
from tests.reference_bert import original_parse_spec

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SAMPLE = os.path.join(REPO, "tests", "data", "pretraining_sample.txt")
VOCAB = os.path.join(REPO, "data", "vocab", "uncased_vocab.txt")
OPTIONS = PretrainingDataOptions(max_seq_length=64, max_predictions_per_seq=10, dupe_factor=2)
# Small chunks, so each of the 3 shards has several chunks, each with its own seed.
SHARDS, CHUNK_BYTES = 3, 20_000
DIRECT = ["--runner=DirectRunner"]

ORIGINAL_FEATURES = original_parse_spec(64, 10)


@pytest.fixture(scope="module")
def outputs(tmp_path_factory) -> tuple[str, str]:
    """(fast generator's folder, Beam pipeline's folder), made once from the same arguments.

    The Beam folder holds an earlier run's output first (another num_shards), a temp shard and
    a counts' folder of a killed run, and a file of the user's: the run replaces the first,
    deletes the second and keeps the third."""
    fast_dir = str(tmp_path_factory.mktemp("fast"))
    beam_dir = str(tmp_path_factory.mktemp("beam"))
    for name in ("summary.json", "pretraining-00004-of-00005.tfrecord", "notes.txt"):
        with open(os.path.join(beam_dir, name), "w") as f:
            f.write("earlier")
    with open(os.path.join(beam_dir, f".pretraining-00000-of-00003.tfrecord.{'0' * 32}.tmp"),
              "w") as f:
        f.write("killed")
    os.makedirs(os.path.join(beam_dir, ".beam-stats-" + "0" * 32))
    fast_generation.generate([SAMPLE], fast_dir, VOCAB, True,
                             OPTIONS, num_shards=SHARDS, chunk_bytes=CHUNK_BYTES)
    beam_pipeline.run_beam([SAMPLE], beam_dir, VOCAB, True, OPTIONS, num_shards=SHARDS,
                           chunk_bytes=CHUNK_BYTES, pipeline_args=DIRECT)
    return fast_dir, beam_dir


def records(directory: str) -> list[bytes]:
    """Every record of the folder's TFRecord files, read by TensorFlow (not Beam), sorted."""
    paths = sorted(os.path.join(directory, name) for name in os.listdir(directory)
                   if name.endswith(".tfrecord"))
    return sorted(record.numpy() for record in tf.data.TFRecordDataset(paths))


def file_bytes(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def summary(directory: str) -> dict:
    with open(os.path.join(directory, "summary.json"), encoding="utf-8") as f:
        return json.load(f)


def test_records_are_the_fast_generators(outputs):
    # The same multiset of records, read by TensorFlow, is independent evidence that the
    # pipeline is the same generation: the same shards, chunks, seeds and instances.
    fast_records, beam_records = (records(directory) for directory in outputs)
    assert len(beam_records) > 100
    assert beam_records == fast_records


def test_shard_files_are_the_fast_generators_byte_for_byte(outputs):
    names = [f"pretraining-{shard:05d}-of-00003.tfrecord" for shard in range(SHARDS)]
    for name in names:
        fast, beam = (file_bytes(os.path.join(directory, name)) for directory in outputs)
        assert beam == fast


def test_summary_has_the_same_counts(outputs):
    fast, beam = (summary(directory) for directory in outputs)
    del fast["seconds"], beam["seconds"]
    assert beam == fast
    assert beam["instances"] == len(records(outputs[1]))


def test_files_are_named_like_the_fast_generators_and_parse_as_the_original(outputs):
    names = [f"pretraining-{shard:05d}-of-00003.tfrecord" for shard in range(SHARDS)]
    # Nothing else is left behind: no temp shard, no counts' folder, no earlier run's shard;
    # the user's file stays.
    assert sorted(os.listdir(outputs[1])) == ["notes.txt"] + names + ["summary.json"]
    for name in names:
        for record in tf.data.TFRecordDataset(os.path.join(outputs[1], name)):
            example = tf.io.parse_single_example(record, ORIGINAL_FEATURES)
            assert example["input_mask"].numpy()[0] == 1


def test_a_corpus_without_text_is_an_error_and_leaves_no_shards(tmp_path):
    corpus = tmp_path / "blank.txt"
    corpus.write_text("\n\n  \n")
    with pytest.raises(InputError, match="no document"):
        beam_pipeline.run_beam([str(corpus)], str(tmp_path / "out"), VOCAB, True, OPTIONS,
                               num_shards=2, pipeline_args=DIRECT)
    assert not (tmp_path / "out").exists()  # Refused before the folder is touched.
