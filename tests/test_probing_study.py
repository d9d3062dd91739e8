"""Tests for official.probing.study and probes: probes find a signal planted in one layer, the
control task does not, and the structural probes recover a planted tree."""

import numpy as np
import pytest

from official.probing import study as st
from official.probing.settings import ProbeSettings, StudySettings

LABELS = ["A", "B", "C"]
HIDDEN = 8


def _planted_label_task(seed):
    """Words from 40 types; each occurrence's label is drawn apart from its type (so only the
    context knows it); layer 2 of 4 carries the label, every other layer noise."""
    rng = np.random.default_rng(seed)
    splits, vectors = {}, {}
    for name, count in (("train", 120), ("dev", 40), ("test", 40)):
        lengths = rng.integers(3, 8, count)
        words = [tuple(f"w{t}" for t in rng.integers(0, 40, n)) for n in lengths]
        labels = [tuple(LABELS[i] for i in rng.integers(0, 3, n)) for n in lengths]
        splits[name] = st.ProbingSplit(words, labels, None, None)
        total = int(lengths.sum())
        v = rng.normal(0, 1, (4, total, HIDDEN)).astype(np.float32)
        ids = np.array([LABELS.index(t) for s in labels for t in s])
        v[2, :, :3] += 3 * np.eye(3)[ids]
        vectors[name] = v
    return splits, vectors


def test_a_probe_peaks_at_the_planted_layer_and_its_control_task_does_not():
    splits, vectors = _planted_label_task(0)
    settings = StudySettings(task="upos", mix="scalar", cumulative=True, control_task=True,
                             probe=ProbeSettings(epochs=8, patience=8, batch_size=64,
                                                 learning_rate=0.02, seed=1))
    results = st.run_study(settings, splits, vectors, num_hidden_layers=3)
    test = [e["test"]["accuracy"] for e in results["layers"]]
    assert int(np.argmax(test)) == 2 and test[2] > 0.9
    assert max(test[:2] + test[3:]) < 0.6
    selectivity = [e["selectivity"]["test"] for e in results["layers"]]
    assert int(np.argmax(selectivity)) == 2 and selectivity[2] > 0.4
    control = [e["control"]["test"]["accuracy"] for e in results["layers"]]
    assert control[2] < 0.7  # the planted label is no help with each type's own label
    weights = results["mix"]["weights"]
    assert int(np.argmax(weights)) == 2 and abs(sum(weights) - 1) < 1e-6
    assert results["mix"]["expected_layer"] == pytest.approx(
        float(np.dot(weights, range(4))))
    # The cumulative mixes gain at layer 2, where the label enters.
    gains = [e.get("delta", 0.0) for e in results["cumulative"]]
    assert int(np.argmax(gains)) == 2
    # E_Delta is the gains' centre of gravity (Tenney et al.), near the planted layer.
    scores = [e["test"]["accuracy"] for e in results["cumulative"]]
    deltas = np.diff(scores)
    assert results["expected_delta_layer"] == pytest.approx(
        float(np.dot(np.arange(1, 4), deltas) / deltas.sum()))
    assert abs(results["expected_delta_layer"] - 2) < 0.5


def test_the_same_seed_gives_the_same_scores():
    splits, vectors = _planted_label_task(1)
    settings = StudySettings(task="upos", layers=(2,),
                             probe=ProbeSettings(epochs=3, batch_size=64, seed=4))
    runs = [st.run_study(settings, splits, vectors, num_hidden_layers=3) for _ in range(2)]
    assert runs[0]["layers"] == runs[1]["layers"]


def _chains(rng, count):
    """Sentences whose tree is a chain rooted at its first word: distance |i - j|, depth i."""
    return [tuple([0] + list(range(1, n))) for n in rng.integers(5, 9, count)]


@pytest.mark.parametrize("task, metric", [("distance", "uuas"), ("depth", "root_accuracy")])
def test_structural_probes_recover_a_tree_planted_in_layer_one(task, metric):
    rng = np.random.default_rng(2)
    splits, vectors = {}, {}
    for name, count in (("train", 60), ("dev", 20), ("test", 20)):
        heads = _chains(rng, count)
        words = [tuple("w" for _ in h) for h in heads]
        keep = [np.ones(len(h), bool) for h in heads]
        splits[name] = st.ProbingSplit(words, None, heads, keep)
        total = sum(len(h) for h in heads)
        v = rng.normal(0, 1, (2, total, HIDDEN)).astype(np.float32)
        # Layer 1: word i of a chain at sum_{k<=i} e_k, so ||h_i - h_j||^2 = |i - j| and
        # ||h_i||^2 = i + 1: the tree is there for a linear map to read.
        at = 0
        for h in heads:
            v[1, at:at + len(h)] = np.tril(np.ones((len(h), HIDDEN)))[:len(h)] \
                if len(h) <= HIDDEN else 0
            at += len(h)
        vectors[name] = v
    settings = StudySettings(task=task, probe=ProbeSettings(rank=HIDDEN, epochs=30,
                                                            patience=30, batch_size=160,
                                                            learning_rate=0.02, seed=0))
    results = st.run_study(settings, splits, vectors, num_hidden_layers=1)
    by_layer = {e["layer"]: e["test"] for e in results["layers"]}
    assert by_layer[1][metric] > 0.9 and by_layer[1]["spearman"] > 0.9
    assert by_layer[0][metric] < by_layer[1][metric]


def test_conll_ner_is_scored_by_entity_f1():
    rng = np.random.default_rng(3)
    tags = ["O", "B-PER", "I-PER"]
    splits, vectors = {}, {}
    for name, count in (("train", 80), ("dev", 20), ("test", 20)):
        sentences = [tuple(rng.choice(["O", "B-PER I-PER", "B-PER"], 4)) for _ in range(count)]
        labels = [tuple(" ".join(s).split()) for s in sentences]
        words = [tuple("w" for _ in s) for s in labels]
        splits[name] = st.ProbingSplit(words, labels, None, None)
        ids = np.array([tags.index(t) for s in labels for t in s])
        v = rng.normal(0, 1, (2, len(ids), HIDDEN)).astype(np.float32)
        v[1, :, :3] += 4 * np.eye(3)[ids]
        vectors[name] = v
    settings = StudySettings(task="conll_ner", layers=(1,), probe=ProbeSettings(
        epochs=6, batch_size=64, learning_rate=0.05, seed=0))
    [layer] = st.run_study(settings, splits, vectors, num_hidden_layers=1)["layers"]
    assert layer["test"]["f1"] > 0.95 and layer["test"]["accuracy"] > 0.95
