"""data_prep/unigram_baseline.py: the masked-LM loss and accuracy of frequencies alone, against a
hand count on records written here, and against the figures of real records recomputed in
numpy; bad input in one line."""

import json
import math
import os

import numpy as np
import pytest
import tensorflow as tf

from data_prep.unigram_baseline import baseline
from tests.cli import refused, run_module, run_modules, snapshot, succeeded


def write_records(path, rows):
    """One pretraining record per (masked_lm_ids, masked_lm_weights) row (the other features
    as the format has them; the baseline reads only these two)."""
    with tf.io.TFRecordWriter(str(path)) as writer:
        for ids, weights in rows:
            feature = {
                "input_ids": tf.train.Feature(int64_list=tf.train.Int64List(value=[2, 5, 3])),
                "masked_lm_ids": tf.train.Feature(int64_list=tf.train.Int64List(value=ids)),
                "masked_lm_weights": tf.train.Feature(
                    float_list=tf.train.FloatList(value=weights))}
            writer.write(tf.train.Example(features=tf.train.Features(
                feature=feature)).SerializeToString())
    return str(path)


def test_the_baseline_is_add_one_frequencies_of_the_training_predictions(tmp_path):
    # Training predictions: token 7 three times, token 5 once (those of weight 0, padding, are
    # not counted); the largest id asked for is the held-out 8, so 9 ids share the smoothing.
    train = write_records(tmp_path / "train.tfrecord", [([7, 7, 0], [1, 1, 0]),
                                                        ([7, 5, 9], [1, 1, 0])])
    held_out = write_records(tmp_path / "eval.tfrecord", [([7, 5], [1, 1]), ([8, 0], [1, 0])])
    found = baseline([train], [held_out])
    total = 4 + 9  # counts plus one for each of the 9 ids
    p = {7: 4 / total, 5: 2 / total, 8: 1 / total}
    assert found["masked_lm_loss"] == pytest.approx(-(math.log(p[7]) + math.log(p[5])
                                                      + math.log(p[8])) / 3)
    assert found["masked_lm_accuracy"] == pytest.approx(1 / 3)  # only 7 is the most frequent
    assert (found["most_frequent_id"], found["vocab_size"], found["train_predictions"],
            found["eval_predictions"]) == (7, 9, 4, 3)
    assert found["perplexity"] == pytest.approx(math.exp(found["masked_lm_loss"]))
    assert baseline([train], [held_out], vocab_size=20)["masked_lm_loss"] > \
        found["masked_lm_loss"]  # more ids share the smoothing
    with pytest.raises(ValueError, match="--vocab_size=5: the records hold token id 8"):
        baseline([train], [held_out], vocab_size=5)


def test_real_records_give_the_figures_numpy_computes_from_them(pretraining_records, tmp_path):
    """The shipped sample's records (conftest), shard 1 counted and shard 0 held out."""
    shards = sorted(os.path.join(pretraining_records["dir"], "data", name) for name in
                    os.listdir(os.path.join(pretraining_records["dir"], "data"))
                    if name.endswith(".tfrecord"))
    out = tmp_path / "unigram.json"
    succeeded(run_module("data_prep.unigram_baseline", f"--train_file={shards[1]}",
                         f"--eval_file={shards[0]}", f"--output_file={out}",
                         "--vocab_size=30522"))
    written = json.loads(out.read_text())

    def predictions(path):
        ids, weights = [], []
        for record in tf.data.TFRecordDataset(path):
            feature = tf.train.Example.FromString(record.numpy()).features.feature
            ids += list(feature["masked_lm_ids"].int64_list.value)
            weights += list(feature["masked_lm_weights"].float_list.value)
        return np.array(ids), np.array(weights)

    ids, weights = predictions(shards[1])
    counts = np.bincount(ids[weights > 0], minlength=30522)
    log_p = np.log(counts + 1.0) - np.log(counts.sum() + 30522)
    eval_ids, eval_weights = predictions(shards[0])
    assert written["masked_lm_loss"] == pytest.approx(
        -(eval_weights * log_p[eval_ids]).sum() / eval_weights.sum())
    assert written["masked_lm_accuracy"] == pytest.approx(
        (eval_weights * (eval_ids == counts.argmax())).sum() / eval_weights.sum())


def test_bad_input_is_one_line_and_writes_nothing(pretraining_records, tmp_path):
    not_records = tmp_path / "text.tfrecord"
    not_records.write_text("not a TFRecord file\n" * 5)
    out = tmp_path / "u.json"
    records = pretraining_records["input_file"]
    no_match, garbage, missing_flag = run_modules(
        ["data_prep.unigram_baseline", "--train_file=/nonexistent/*.tfrecord",
         f"--eval_file={records}", f"--output_file={out}"],
        ["data_prep.unigram_baseline", f"--train_file={records}",
         f"--eval_file={not_records}", f"--output_file={out}"],
        ["data_prep.unigram_baseline", f"--train_file={records}", f"--output_file={out}"])
    refused(no_match, "--train_file pattern '/nonexistent/*.tfrecord' matches no file")
    refused(garbage, "--eval_file: not pretraining records")
    refused(missing_flag, "--eval_file: required")
    assert snapshot(out) == {}
