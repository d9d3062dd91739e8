"""The pretraining loss and metrics against the original's formulas, computed here in numpy."""

import json

import numpy as np
import pytest
import tensorflow as tf

from official.tasks.pretraining import PretrainingTask, data_objective


def _batch(seed=0, batch=3, predictions=4, vocab=7):
    rng = np.random.default_rng(seed)
    weights = np.ones((batch, predictions), np.float32)
    weights[1, 2:] = 0.0  # padded predictions
    weights[2, 1:] = 0.0
    features = {
        "masked_lm_ids": rng.integers(0, vocab, (batch, predictions)).astype(np.int32),
        "masked_lm_weights": weights,
        "next_sentence_labels": rng.integers(0, 2, batch).astype(np.int32),
    }
    outputs = {
        "masked_lm_logits": rng.normal(size=(batch, predictions, vocab)).astype(np.float32),
        "next_sentence_logits": rng.normal(size=(batch, 2)).astype(np.float32),
    }
    return features, outputs


def _log_softmax(x):
    x = x.astype(np.float64)
    return x - np.log(np.exp(x - x.max(-1, keepdims=True)).sum(-1, keepdims=True)) - x.max(
        -1, keepdims=True)


def _original_loss(features, outputs):
    """run_pretraining.py's get_masked_lm_output + get_next_sentence_output, in numpy."""
    log_probs = _log_softmax(outputs["masked_lm_logits"])
    one_hot = np.eye(log_probs.shape[-1])[features["masked_lm_ids"]]
    per_example = -(log_probs * one_hot).sum(-1)
    w = features["masked_lm_weights"]
    mlm = (w * per_example).sum() / (w.sum() + 1e-5)
    nsp_log_probs = _log_softmax(outputs["next_sentence_logits"])
    nsp = -nsp_log_probs[np.arange(len(nsp_log_probs)), features["next_sentence_labels"]].mean()
    return mlm, nsp


def test_one_batch_loss_is_the_originals():
    features, outputs = _batch()
    task = PretrainingTask()
    loss, _ = task.loss_and_stats(outputs, features, task.normalizers(features))
    mlm, nsp = _original_loss(features, outputs)
    np.testing.assert_allclose(float(loss), mlm + nsp, rtol=1e-6)

    mlm_only = PretrainingTask(next_sentence=False)
    loss, stats = mlm_only.loss_and_stats(outputs, features, mlm_only.normalizers(features))
    np.testing.assert_allclose(float(loss), mlm, rtol=1e-6)
    assert "next_sentence_loss_sum" not in stats


def test_split_batches_with_global_normalizers_sum_to_the_big_batch_loss():
    features, outputs = _batch(seed=1, batch=4)
    task = PretrainingTask()
    norms = task.normalizers(features)
    halves = [({k: v[s] for k, v in features.items()}, {k: v[s] for k, v in outputs.items()})
              for s in (slice(0, 1), slice(1, 4))]
    split = sum(float(task.loss_and_stats(o, f, norms)[0]) for f, o in halves)
    whole = float(task.loss_and_stats(outputs, features, norms)[0])
    np.testing.assert_allclose(split, whole, rtol=1e-6)


def test_metrics_are_weighted_like_the_originals_eval():
    features, outputs = _batch(seed=2)
    task = PretrainingTask()
    _, stats = task.loss_and_stats(outputs, features, task.normalizers(features))
    metrics = task.metrics({k: float(v) for k, v in stats.items()})

    w = features["masked_lm_weights"]
    predicted = outputs["masked_lm_logits"].argmax(-1)
    log_probs = _log_softmax(outputs["masked_lm_logits"])
    ce = -np.take_along_axis(log_probs, features["masked_lm_ids"][..., None], -1)[..., 0]
    nsp_predicted = outputs["next_sentence_logits"].argmax(-1)
    expected = {
        "masked_lm_accuracy": (w * (predicted == features["masked_lm_ids"])).sum() / w.sum(),
        "masked_lm_loss": (w * ce).sum() / w.sum(),
        "next_sentence_accuracy": (nsp_predicted == features["next_sentence_labels"]).mean(),
        "next_sentence_loss": _original_loss(features, outputs)[1],
    }
    expected["loss"] = expected["masked_lm_loss"] + expected["next_sentence_loss"]
    assert set(metrics) == set(expected)
    for name, value in expected.items():
        np.testing.assert_allclose(metrics[name], value, rtol=1e-5, err_msg=name)


def test_data_objective_reads_data_preps_summary(tmp_path):
    made_here, original = tmp_path / "ours", tmp_path / "original"
    made_here.mkdir()
    original.mkdir()
    def summary(objective):
        return json.dumps({"num_shards": 1, "options": {"objective": objective}})

    (made_here / "summary.json").write_text(summary("none"))
    assert data_objective([str(made_here / "a.tfrecord")]) == "none"
    assert data_objective([str(original / "a.tfrecord")]) == "nsp"
    other = tmp_path / "sop"
    other.mkdir()
    (other / "summary.json").write_text(summary("sop"))
    with pytest.raises(ValueError, match="mix objectives"):
        data_objective([str(made_here / "a"), str(other / "b")])


def test_loss_is_differentiable_in_graph_mode():
    features, outputs = _batch(seed=3)
    logits = tf.Variable(outputs["masked_lm_logits"])
    task = PretrainingTask()

    @tf.function
    def grad():
        with tf.GradientTape() as tape:
            loss, _ = task.loss_and_stats(dict(outputs, masked_lm_logits=logits), features,
                                          task.normalizers(features))
        return tape.gradient(loss, logits)

    g = grad().numpy()
    # Padded predictions (weight 0) get no gradient.
    assert np.all(g[1, 2:] == 0) and np.all(g[2, 1:] == 0) and np.any(g[0] != 0)
