"""Tests for data_prep.pretraining_examples: the original's record format, both directions, and
atomic, deterministic writing."""

import os

import numpy as np
import pytest
import tensorflow as tf

from data_prep import pretraining_examples as pe
from official import pretraining_records
from tests.reference_bert import import_original, original_name_to_features

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VOCAB = os.path.join(REPO, "data", "vocab", "uncased_vocab.txt")
SEQ, PREDICTIONS = 12, 4

# One instance, as the original's TrainingInstance holds it.
TOKENS = ["[CLS]", "the", "[MASK]", "sat", "[SEP]", "on", "the", "mat", "[SEP]"]
SEGMENTS = [0, 0, 0, 0, 0, 1, 1, 1, 1]
POSITIONS, LABELS = [2, 7], ["cat", "mat"]


@pytest.fixture(scope="module")
def vocab():
    return import_original("bert.tokenization").FullTokenizer(VOCAB, do_lower_case=True).vocab


def our_example(vocab):
    return pe.make_example([vocab[t] for t in TOKENS], SEGMENTS, POSITIONS,
                           [vocab[t] for t in LABELS], 1, max_seq_length=SEQ,
                           max_predictions_per_seq=PREDICTIONS)


def original_record(tmp_path):
    """The original's writer on the same instance; returns its one record."""
    original = import_original("bert.create_pretraining_data")
    tokenizer = import_original("bert.tokenization").FullTokenizer(VOCAB, do_lower_case=True)
    instance = original.TrainingInstance(TOKENS, SEGMENTS, POSITIONS, LABELS, is_random_next=True)
    path = str(tmp_path / "original.tfrecord")
    original.write_instance_to_example_files([instance], tokenizer, SEQ, PREDICTIONS, [path])
    return next(iter(tf.data.TFRecordDataset(path))).numpy()


def parse(record, spec):
    return {k: v.numpy() for k, v in tf.io.parse_single_example(record, spec).items()}


def test_example_equals_the_originals(vocab, tmp_path):
    assert tf.train.Example.FromString(original_record(tmp_path)) == our_example(vocab)


def test_padding_and_weights(vocab):
    values = parse(pe.serialize(our_example(vocab)),
                   pretraining_records.parse_spec(SEQ, PREDICTIONS))
    np.testing.assert_array_equal(values["input_mask"], [1] * 9 + [0] * 3)
    np.testing.assert_array_equal(values["input_ids"][9:], [0] * 3)
    np.testing.assert_array_equal(values["segment_ids"], SEGMENTS + [0] * 3)
    np.testing.assert_array_equal(values["masked_lm_positions"], POSITIONS + [0, 0])
    np.testing.assert_array_equal(values["masked_lm_ids"],
                                  [vocab["cat"], vocab["mat"], 0, 0])
    np.testing.assert_array_equal(values["masked_lm_weights"], [1.0, 1.0, 0.0, 0.0])
    assert values["masked_lm_weights"].dtype == np.float32
    np.testing.assert_array_equal(values["next_sentence_labels"], [1])


def test_files_interchange_with_the_originals(vocab, tmp_path):
    ours = str(tmp_path / "ours.tfrecord")
    with pe.open_shard(ours) as shard:
        shard.write(our_example(vocab))
    our_record = next(iter(tf.data.TFRecordDataset(ours))).numpy()
    theirs = parse(original_record(tmp_path), pretraining_records.parse_spec(SEQ, PREDICTIONS))
    mine = parse(our_record, original_name_to_features(SEQ, PREDICTIONS))
    assert mine.keys() == theirs.keys()
    for name in mine:
        np.testing.assert_array_equal(mine[name], theirs[name], err_msg=name)


def test_serialization_is_deterministic(vocab):
    example = our_example(vocab)
    reordered = tf.train.Example()
    for name in reversed(list(example.features.feature)):
        reordered.features.feature[name].CopyFrom(example.features.feature[name])
    assert pe.serialize(reordered) == pe.serialize(example) == pe.serialize(our_example(vocab))


@pytest.mark.parametrize("ids,segments,positions,labels", [
    ([1] * (SEQ + 1), [0] * (SEQ + 1), [], []),
    ([1, 2], [0], [], []),
    ([1] * SEQ, [0] * SEQ, [1] * (PREDICTIONS + 1), [1] * (PREDICTIONS + 1)),
    ([1] * SEQ, [0] * SEQ, [1, 2], [1]),
])
def test_make_example_rejects_what_does_not_fit(ids, segments, positions, labels):
    with pytest.raises(ValueError):
        pe.make_example(ids, segments, positions, labels, 0, max_seq_length=SEQ,
                        max_predictions_per_seq=PREDICTIONS)


def test_shard_appears_only_when_complete(vocab, tmp_path):
    path = tmp_path / "shard.tfrecord"
    with pe.open_shard(str(path)) as shard:
        shard.write(our_example(vocab))
        shard.write(our_example(vocab))
        assert not path.exists()
    assert shard.count == 2 and os.listdir(tmp_path) == ["shard.tfrecord"]

    failed = tmp_path / "failed.tfrecord"
    with pytest.raises(RuntimeError), pe.open_shard(str(failed)) as shard:
        shard.write(our_example(vocab))
        raise RuntimeError("interrupted")
    assert os.listdir(tmp_path) == ["shard.tfrecord"]
