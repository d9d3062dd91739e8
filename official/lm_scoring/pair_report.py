"""Minimal pairs scored: accuracy per paradigm, phenomenon, field and overall, the published
models' figures and human agreement beside ours, as JSON and Markdown; no TensorFlow.

    summarize(pairs, good_scores, bad_scores, published=None, human=None,
              lengths=None) -> dict
    markdown(summary, title) -> str

A pair is right when its good sentence scores higher than its bad one (a tie is wrong: the model
did not prefer the grammatical sentence). A paradigm's accuracy is the share of its pairs right;
a phenomenon's (linguistics_term) and the overall figure are the mean of their paradigms'
accuracies, as BLiMP's own summary averages them (with every paradigm's 1,000 pairs, or the
same number of each, that is also the share of all pairs). Beside each mean: its standard error
over the pairs, sqrt(sum over paradigms of p(1 - p) / n) / paradigms, which says whether a
figure is above chance (50%) by more than noise.

Published figures (models_summary.jsonl) and human agreement are shown where they name the same
paradigm or phenomenon; a phenomenon of ours they lack (BLiMP's s-selection is counted under
argument_structure in their summary) gets "—". The published overall is over all 67 paradigms:
a run on some of them says so beside it.

With the sentences' lengths in pieces, the pairs are also split by which sentence is shorter.
A sum of log-probabilities (pseudo or left to right) favours the shorter sentence, so where the
lengths differ a model can be right for that reason alone; on pairs of the same length it
cannot, and their accuracy (all pairs pooled) is the figure length does not move.

Example:
    >>> from official.lm_scoring.minimal_pairs import MinimalPair
    >>> pairs = [MinimalPair("f:1", "a", "b", "p1", "t", "syntax"),
    ...          MinimalPair("f:2", "a", "b", "p1", "t", "syntax"),
    ...          MinimalPair("f:3", "a", "b", "p2", "t", "syntax")]
    >>> summary = summarize(pairs, [-1.0, -5.0, -2.0], [-2.0, -4.0, -2.0])
    >>> summary["paradigms"]["p1"]["accuracy"], summary["paradigms"]["p2"]["accuracy"]
    (50.0, 0.0)
    >>> summary["overall"]["accuracy"], summary["overall"]["pairs"]
    (25.0, 3)
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from official.lm_scoring.minimal_pairs import (
    HUMAN,
    OVERALL,
    PUBLISHED_MODELS,
    MinimalPair,
    Published,
)

_NONE = "—"


def _mean_of(paradigms: list[dict]) -> dict:
    """The mean accuracy of some paradigms' rows and its standard error over their pairs."""
    shares = [row["accuracy"] / 100 for row in paradigms]
    variance = sum(p * (1 - p) / row["pairs"] for p, row in zip(shares, paradigms))
    return {"accuracy": 100 * sum(shares) / len(shares),
            "stderr": 100 * math.sqrt(variance) / len(shares),
            "paradigms": len(paradigms), "pairs": sum(row["pairs"] for row in paradigms)}


def _figures(published: Published | None, human: dict[str, float] | None, level: str,
             name: str | None) -> dict[str, float]:
    """The published models' (and humans') accuracy in % for a paradigm, a phenomenon or the
    whole benchmark (`level` "paradigms", "terms" or OVERALL)."""
    found = {}
    if published is not None:
        source = (published.overall if level == OVERALL
                  else getattr(published, level).get(name, {}))
        found.update({model: 100 * value for model, value in source.items()})
    if human is not None and level == "paradigms" and name in human:
        found[HUMAN] = 100 * human[name]
    return found


LENGTH_GROUPS = ("good shorter", "same length", "good longer")


def _by_length(right: np.ndarray, lengths: tuple[Sequence[int], Sequence[int]]) -> dict:
    """{group: {"right", "pairs", "accuracy", "stderr"}} of LENGTH_GROUPS, all pairs pooled; a
    group without pairs has no accuracy (None), not 0."""
    good, bad = (np.asarray(side) for side in lengths)
    groups = {}
    for name, members in zip(LENGTH_GROUPS, (good < bad, good == bad, good > bad)):
        n = int(members.sum())
        p = float(right[members].mean()) if n else None
        groups[name] = {"right": int(right[members].sum()), "pairs": n,
                        "accuracy": None if p is None else 100 * p,
                        "stderr": None if p is None else 100 * math.sqrt(p * (1 - p) / n)}
    return groups


def summarize(pairs: Sequence[MinimalPair], good_scores: Sequence[float],
              bad_scores: Sequence[float], published: Published | None = None,
              human: dict[str, float] | None = None,
              lengths: tuple[Sequence[int], Sequence[int]] | None = None) -> dict:
    """{"paradigms": {uid: row}, "terms": {term: row}, "fields": {field: row}, "overall": row};
    a row: accuracy (%), stderr, pairs (and paradigms for the means), the published figures
    ("published": {model: %}); paradigms also name their phenomenon and field. With `lengths`
    (the good and the bad sentences' lengths in pieces), also "by_length": the pairs pooled by
    LENGTH_GROUPS, each with right, pairs, accuracy and stderr."""
    right = np.asarray(good_scores, np.float64) > np.asarray(bad_scores, np.float64)
    paradigms: dict[str, dict] = {}
    for pair, correct in zip(pairs, right):
        row = paradigms.setdefault(pair.paradigm, {"term": pair.term, "field": pair.field,
                                                   "right": 0, "pairs": 0})
        row["right"] += int(correct)
        row["pairs"] += 1
    for uid, row in paradigms.items():
        p = row["right"] / row["pairs"]
        row.update(accuracy=100 * p, stderr=100 * math.sqrt(p * (1 - p) / row["pairs"]),
                   published=_figures(published, human, "paradigms", uid))
    summary = {"paradigms": dict(sorted(paradigms.items()))}
    for level, key in (("terms", "term"), ("fields", "field")):
        groups: dict[str, list[dict]] = {}
        for row in paradigms.values():
            groups.setdefault(row[key], []).append(row)
        summary[level] = {name: {**_mean_of(rows),
                                 "published": _figures(published, None, "terms", name)
                                 if level == "terms" else {}}
                          for name, rows in sorted(groups.items())}
    summary[OVERALL] = {**_mean_of(list(paradigms.values())),
                        "published": _figures(published, None, OVERALL, None)}
    if lengths is not None:
        summary["by_length"] = _by_length(right, lengths)
    return summary


def _cell(value: float | None) -> str:
    return _NONE if value is None else f"{value:.1f}"


def _table(rows: dict[str, dict], columns: list[str], name: str) -> list[str]:
    def line(cells: list[str]) -> str:
        return "| " + " | ".join(cells) + " |"

    lines = [line([name, "pairs", "ours", "±", *(PUBLISHED_MODELS.get(c, c) for c in columns)]),
             "|---|" + "---:|" * (3 + len(columns))]
    for key, row in rows.items():
        lines.append(line([key, f"{row['pairs']:,}", f"{row['accuracy']:.1f}",
                           f"{row['stderr']:.1f}",
                           *(_cell(row["published"].get(c)) for c in columns)]))
    return lines


def _length_section(groups: dict | None) -> list[str]:
    if not groups:
        return []
    lines = ["## By length in pieces", "",
             "A summed log-probability favours the shorter sentence; on pairs of the same "
             "length that cannot decide (all pairs pooled; ± one standard error).", "",
             "| pairs where | pairs | ours | ± |", "|---|---:|---:|---:|"]
    lines += [f"| {name} | {row['pairs']:,} | {_cell(row['accuracy'])} | {_cell(row['stderr'])} |"
              for name, row in groups.items()]
    return [*lines, ""]


def markdown(summary: dict, title: str) -> str:
    """The report: overall, per phenomenon, per field, per paradigm (accuracy %, ± one standard
    error, the published figures beside)."""
    models = list(PUBLISHED_MODELS)
    overall = summary[OVERALL]
    paradigms = len(summary["paradigms"])
    parts = [f"# {title}", "",
             f"{overall['pairs']:,} pairs of {paradigms} paradigm(s). A pair is right when the "
             "good sentence scores higher. Means over paradigms; ± is one standard error over "
             "the pairs; 50 is chance. Published: BLiMP's models_summary.jsonl (Warstadt et al. "
             "2020), whole-sentence log-probabilities" +
             ("" if paradigms >= 67 else "; its overall is over all 67 paradigms") + ".", "",
             *_table({OVERALL: overall}, models, "overall"), "",
             "## By phenomenon", "", *_table(summary["terms"], models, "phenomenon"), "",
             *_length_section(summary.get("by_length")),
             "## By field", "", *_table(summary["fields"], [], "field"), "",
             "## By paradigm", "", *_table(summary["paradigms"], [*models, HUMAN], "paradigm")]
    return "\n".join(parts) + "\n"
