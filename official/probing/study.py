"""A probing study: one task's probes on every layer, and the analyses built on them.

    ProbingSplit.of(sentences, spec)    a split's words, labels, heads (from the readers'
                                        sentences: data_prep.conllu, data_prep.conll)
    run_study(settings, splits, vectors, num_hidden_layers) -> dict (the results' JSON)

What is run (official/probing/probes.py trains each probe):

    per layer     a probe of each chosen layer alone (0 = the embedding layer's output)
    control       (control_task) the same probe on Hewitt & Liang's control task
                  (official/probing/control.py); selectivity = task accuracy - control accuracy,
                  on dev and on test
    mix           (mix=scalar) one probe of the scalar mix of all layers 0..L; its weights s,
                  scale gamma and Tenney et al.'s expected layer E_s[l] = sum_l l s_l
    cumulative    the probes of the mixes of layers 0..l for l = 0..L; Tenney et al.'s
                  differential score Delta_l = score(0..l) - score(0..l-1) and its centre of
                  gravity E_Delta[l] = sum_{l>=1} l Delta_l / sum_{l>=1} Delta_l
                  (`cumulative_gains`), from the test scores

Labels. A label task's label ids are the sorted labels met in any split (a label only dev or
test holds is then a label the probe never learns, and costs accuracy as it should). Dependency
labels read the word's and its head's vectors (the root's head: zeros). Scores: accuracy over
words; for conll_ner also conlleval's entity F1 (official/tasks/ner_metrics.py), the task's
metric. Structural probes: UUAS and DSpr. (distance) or root accuracy and NSpr. (depth),
punctuation (UPOS PUNCT) left out of UUAS and root accuracy as in Hewitt & Manning.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Sequence

import numpy as np
from absl import logging

from official.modeling.scalar_mix import expected_layer
from official.probing import control, probes, trees
from official.probing.settings import StudySettings, TaskSpec
from official.tasks.ner_metrics import entity_scores

_PUNCTUATION = "PUNCT"


@dataclasses.dataclass
class ProbingSplit:
    """One split of a probing task: per sentence its words and what is predicted of them."""
    words: list[tuple[str, ...]]
    labels: list[tuple[str, ...]] | None  # label and pair tasks
    heads: list[tuple[int, ...]] | None  # pair and structural tasks: 1-based, 0 the root
    keep: list[np.ndarray] | None  # structural tasks: the words scored (not punctuation)

    @classmethod
    def of(cls, sentences: Sequence[Any], spec: TaskSpec) -> ProbingSplit:
        """From a reader's sentences (words plus the fields `spec` reads)."""
        structural = spec.kind in ("distance", "depth")
        return cls(
            words=[tuple(s.words) for s in sentences],
            labels=None if structural else [tuple(getattr(s, spec.field)) for s in sentences],
            heads=[tuple(s.heads) for s in sentences] if spec.kind != "label" else None,
            keep=[np.array([u != _PUNCTUATION for u in s.upos]) for s in sentences]
            if structural else None)

    @functools.cached_property
    def offsets(self) -> np.ndarray:
        """int64 [sentences + 1]: where each sentence's words start among the split's."""
        return np.concatenate([[0], np.cumsum([len(w) for w in self.words])]).astype(np.int64)


def cumulative_gains(scores: Sequence[float],
                     layers: Sequence[int] | None = None) -> tuple[list[float], float]:
    """(Delta_l for l = layers[1:], E_Delta): scores[i] is the mix of layers[0..i]'s score.
    E_Delta is nan when the gains sum to 0."""
    layers = list(range(len(scores))) if layers is None else list(layers)
    deltas = np.diff(np.asarray(scores, np.float64))
    total = deltas.sum()
    centre = float(np.sum(np.asarray(layers[1:]) * deltas) / total) if total else float("nan")
    return deltas.tolist(), centre


def _rows(split: ProbingSplit, kind: str) -> np.ndarray:
    words = np.arange(split.offsets[-1], dtype=np.int64)
    if kind == "label":
        return words[:, None]
    heads = np.concatenate([np.asarray(h, np.int64) - 1 + first if h else np.array([], int)
                            for h, first in zip(split.heads, split.offsets[:-1])])
    roots = np.concatenate([np.asarray(h) == 0 for h in split.heads])
    return np.stack([words, np.where(roots, -1, heads)], axis=1)


class _LabelStudy:
    """The label and pair tasks' probes."""

    def __init__(self, settings: StudySettings, splits: dict[str, ProbingSplit],
                 vectors: dict[str, np.ndarray]):
        self.settings, self.splits, self.vectors = settings, splits, vectors
        self.labels = sorted({t for s in splits.values() for sentence in s.labels
                              for t in sentence})
        index = {label: i for i, label in enumerate(self.labels)}
        self.gold = {name: np.array([index[t] for sentence in s.labels for t in sentence])
                     for name, s in splits.items()}
        self.rows = {name: _rows(s, settings.spec.kind) for name, s in splits.items()}
        distribution = control.label_distribution(
            [t for sentence in splits["train"].labels for t in sentence])
        self.control = {name: np.array([index[t] for t in control.control_labels(
            [w for sentence in s.words for w in sentence], distribution, settings.probe.seed)])
            for name, s in splits.items()}

    def _score(self, split: str, predicted: np.ndarray, gold: np.ndarray,
               entities: bool) -> dict[str, float]:
        scores = {"accuracy": float(np.mean(predicted == gold))}
        if entities:
            offsets = self.splits[split].offsets
            tags = [[self.labels[i] for i in predicted[a:b]]
                    for a, b in zip(offsets[:-1], offsets[1:])]
            scores["f1"] = entity_scores(self.splits[split].labels, tags).as_dict()["f1"]
        return scores

    def probe(self, layers: tuple[int, ...], on_control: bool = False) -> probes.ProbeResult:
        gold = self.control if on_control else self.gold
        entities = self.settings.spec.metric == "f1" and not on_control
        inputs = {name: probes.ProbeInputs(self.vectors[name], layers, rows=self.rows[name])
                  for name in self.splits}
        return probes.train_label_probe(
            inputs, {name: gold[name] for name in self.splits}, len(self.labels),
            lambda split, predicted: self._score(split, predicted, gold[split], entities),
            "f1" if entities else "accuracy", self.settings.probe)


class _StructuralStudy:
    """The distance and depth probes."""

    def __init__(self, settings: StudySettings, splits: dict[str, ProbingSplit],
                 vectors: dict[str, np.ndarray]):
        self.settings, self.splits, self.vectors = settings, splits, vectors
        self.kind = settings.spec.kind
        measure = trees.tree_distances if self.kind == "distance" else trees.tree_depths
        self.gold = {name: [measure(h).astype(np.float32) for h in s.heads]
                     for name, s in splits.items()}

    def _score(self, split: str, predicted: list[np.ndarray]) -> dict[str, float]:
        s = self.splits[split]
        if self.kind == "distance":
            return {"uuas": trees.uuas(predicted, s.heads, s.keep),
                    "spearman": trees.distance_spearman(predicted, s.heads)}
        return {"root_accuracy": trees.root_accuracy(predicted, s.heads, s.keep),
                "spearman": trees.depth_spearman(predicted, s.heads)}

    def probe(self, layers: tuple[int, ...], on_control: bool = False) -> probes.ProbeResult:
        inputs = {name: probes.ProbeInputs(self.vectors[name], layers,
                                           sentences=s.offsets)
                  for name, s in self.splits.items()}
        return probes.train_structural_probe(inputs, self.gold, self.kind, self._score,
                                             self.settings.probe)


def _entry(result: probes.ProbeResult) -> dict:
    return {"dev": result.dev, "test": result.test, "epoch": result.epoch}


def run_study(settings: StudySettings, splits: dict[str, ProbingSplit],
              vectors: dict[str, np.ndarray], num_hidden_layers: int,
              probe_weights: dict[str, dict[str, np.ndarray]] | None = None) -> dict:
    """The study's results (official/probing/report.py writes and draws them).

    Args:
      splits: "train", "dev" and "test".
      vectors: per split, float32 [num_hidden_layers + 1, words, hidden] (word_vectors.py).
      probe_weights: filled, when given, with each trained probe's weights at its best epoch
        ({variable path: array}) under its name: "layer_03", "control_layer_03", "mix",
        "layers_0-3" (a cumulative mix); the label ids are `results["labels"]`' order.
    """
    probe_weights = {} if probe_weights is None else probe_weights
    spec, metric = settings.spec, settings.spec.metric
    study = (_StructuralStudy if spec.kind in ("distance", "depth") else _LabelStudy)(
        settings, splits, vectors)
    every = tuple(range(num_hidden_layers + 1))
    trained: dict[tuple[int, ...], probes.ProbeResult] = {}

    def probe(layers: tuple[int, ...]) -> probes.ProbeResult:
        """The task's probe of `layers`, trained once (the mix of all layers is also the last
        cumulative mix; layer 0 alone the first)."""
        if layers not in trained:
            trained[layers] = study.probe(layers)
            name = f"layer_{layers[0]:02d}" if len(layers) == 1 else \
                "mix" if layers == every else f"layers_0-{layers[-1]}"
            probe_weights[name] = trained[layers].weights
        return trained[layers]

    results: dict[str, Any] = {
        "task": settings.task, "metric": metric, "probe": settings.probe.probe,
        "subword_pool": settings.subword_pool, "num_hidden_layers": num_hidden_layers,
        "words": {name: int(s.offsets[-1]) for name, s in splits.items()}, "layers": []}
    if isinstance(study, _LabelStudy):
        results["labels"] = study.labels
    for layer in settings.check_layers(num_hidden_layers, "the encoder"):
        result = probe((layer,))
        entry = {"layer": layer, **_entry(result)}
        if settings.control_task:
            controlled = study.probe((layer,), on_control=True)
            probe_weights[f"control_layer_{layer:02d}"] = controlled.weights
            entry["control"] = _entry(controlled)
            entry["selectivity"] = {
                split: getattr(result, split)["accuracy"] - getattr(controlled, split)["accuracy"]
                for split in ("dev", "test")}
        results["layers"].append(entry)
        logging.info("layer %d: %s dev %.4f test %.4f", layer, metric, result.dev[metric],
                     result.test[metric])
    if settings.mix == "scalar":
        result = probe(every)
        results["mix"] = {**_entry(result), "weights": result.mix_weights,
                          "scale": result.mix_scale,
                          "expected_layer": expected_layer(result.mix_weights, every)}
        logging.info("scalar mix: %s test %.4f, E_s[l] = %.2f", metric, result.test[metric],
                     results["mix"]["expected_layer"])
    if settings.cumulative:
        entries = []
        for last in every:
            result = probe(every[:last + 1])
            entries.append({"layers": f"0-{last}", **_entry(result)})
        deltas, centre = cumulative_gains([e["test"][metric] for e in entries], every)
        for entry, delta in zip(entries[1:], deltas):
            entry["delta"] = delta
        results["cumulative"] = entries
        results["expected_delta_layer"] = centre
        logging.info("cumulative: E_Delta[l] = %.2f", centre)
    return results
