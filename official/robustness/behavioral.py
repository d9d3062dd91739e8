"""CheckList's expectations applied to a model's predictions, and the failure tables (numpy only).

The rules are CheckList's (Ribeiro et al. 2020; `checklist/expect.py`, `test_types.py`), on
predictions over the suite's classes (`preds` [texts], `confs` [texts, classes]):

  MFT       a case (one text) passes when its prediction is its label (or one of the ids its
            expectation allows for that label), or one of the allowed ids.
  INV       a perturbation passes when its prediction is the original's, or when the
            probability of the original's predicted class moved by at most the tolerance
            (`Expect.inv`; CheckList's INV default is 0.1, the suite's tests all use it).
  DIR       monotonic (`Expect.monotonic`): with o = the original's P(label) (label: the
            original's prediction unless given), a perturbation passes when its P(label) is
            at least o - tolerance (increasing) or at most o + tolerance (decreasing); a case
            whose original cannot fail (o <= tolerance when increasing, o >= 1 - tolerance when
            decreasing) is filtered out, as is one whose original prediction is in
            `skip_original`. shift: the same on P(up) - P(down), never filtered.
  A case of several texts fails when any perturbation fails (CheckList's `all_except_first`:
  the original is the reference, not judged); the failure rate is failed / (run - filtered).

A two-class export on a three-class suite is read as CheckList's tutorial reads a binary
sentiment model (notebooks/tutorials, "Testing transformer pipelines"): with p the probability
of the export's higher class (positive), p in [1/3, 2/3] is predicted as the class the export
lacks (neutral), whose probability is 1 - 3|p - 1/2|, the rest going to the class on p's side
of 1/2; outside the band the probabilities are (1 - p) for the lower class and p for the
higher. (At exactly 1/3 and 2/3 the tutorial's strict inequalities give no class at all and
its argmax says the lower class; here they are in the band.)

`--sample N` keeps at most N cases of each test, drawn without replacement by a generator
seeded with (seed, the test's position), in the suite's order: the same flags give the same
cases. (CheckList's own `run(n=500)` draws with replacement, unseeded.)
"""

from __future__ import annotations

import time
from typing import Callable

import numpy as np
from absl import logging

from official.console import PROGRESS
from official.robustness.suite import SuiteTest

# texts -> float32 [texts, export labels]: official/robustness/classifier.py's
# ExportedClassifier.probabilities, or any function (tests).
Probabilities = Callable[[list[str]], np.ndarray]
EXAMPLES = 3
_CHUNK = 4096  # texts asked of the model between progress lines


def parse_label_map(text: str) -> dict[str, str]:
    """"0:negative,1:positive" -> {"0": "negative", "1": "positive"}: export label -> suite
    class. Raises ValueError naming what is wrong."""
    pairs = {}
    for item in text.split(","):
        label, sep, name = item.strip().rpartition(":")
        if not sep or not label or not name:
            raise ValueError(f"{item.strip()!r} is not export_label:suite_class")
        if label in pairs:
            raise ValueError(f"export label {label!r} named twice")
        pairs[label] = name
    if len(set(pairs.values())) != len(pairs):
        raise ValueError("two export labels map to the same suite class")
    return pairs


def default_label_map(export_labels: list[str], classes: tuple[str, ...]) -> dict[str, str]:
    """Without --label_map: labels that are class names map to themselves; SST-2's "0" and
    "1" to negative and positive (GLUE's order) when the suite has those classes."""
    if all(label in classes for label in export_labels):
        return {label: label for label in export_labels}
    if sorted(export_labels) == ["0", "1"] and {"negative", "positive"} <= set(classes):
        return {"0": "negative", "1": "positive"}
    raise ValueError(f"the export's labels {export_labels} are not the suite's classes "
                     f"({', '.join(classes)}): say which is which with --label_map")


def export_columns(export_labels: list[str], label_map: dict[str, str],
                   classes: tuple[str, ...]) -> list[int]:
    """The suite class id of each of the export's probability columns. Raises ValueError when
    an export label is not in the map, the map names a label the export lacks or a class the
    suite lacks, or the classes covered are neither all of the suite's nor its outer two of
    three (the neutral band lies between them)."""
    missing = [label for label in export_labels if label not in label_map]
    if missing:
        raise ValueError(f"the export's label {missing[0]!r} is not in the label map")
    extra = [label for label in label_map if label not in export_labels]
    if extra:
        raise ValueError(f"the label map names {extra[0]!r}, not one of the export's labels "
                         f"{export_labels}")
    unknown = [name for name in label_map.values() if name not in classes]
    if unknown:
        raise ValueError(f"the label map names the class {unknown[0]!r}, which the suite lacks "
                         f"(its classes: {', '.join(classes)})")
    columns = [classes.index(label_map[label]) for label in export_labels]
    if len(columns) != len(classes) and not (len(classes) == 3 and len(columns) == 2):
        raise ValueError(f"the export's {len(columns)} labels cover {len(columns)} of the "
                         f"suite's {len(classes)} classes: it needs all of them, or two of three "
                         "(CheckList's neutral band)")
    if len(columns) == 2 and sorted(columns) != [0, 2]:
        raise ValueError(f"a two-label export must map to the suite's outer classes "
                         f"({classes[0]}, {classes[2]}): the band between them is "
                         f"{classes[1]}, not {classes[3 - sum(columns)]}")
    return columns


def suite_predictions(probabilities: np.ndarray, columns: list[int],
                      classes: int) -> tuple[np.ndarray, np.ndarray]:
    """(preds int [texts], confs float64 [texts, classes]) of the export's probabilities
    [texts, len(columns)] over the suite's classes (the module docstring's two-class band)."""
    probabilities = np.asarray(probabilities, np.float64)
    confs = np.zeros([len(probabilities), classes])
    if len(columns) == classes:
        confs[:, columns] = probabilities
        return confs.argmax(axis=1), confs
    low, high = sorted(columns)
    band = ({0, 1, 2} - {low, high}).pop()
    p = probabilities[:, columns.index(high)]
    inside = (p >= 1 / 3) & (p <= 2 / 3)
    confs[~inside, low], confs[~inside, high] = 1 - p[~inside], p[~inside]
    confs[inside, band] = 1 - 3 * np.abs(p[inside] - 0.5)
    side = np.where(p[inside] >= 0.5, high, low)
    confs[np.flatnonzero(inside), side] = 1 - confs[inside, band]
    preds = np.where(inside, band, np.where(p > 2 / 3, high, low))
    return preds, confs


def judge(test: SuiteTest, case: int, preds: np.ndarray, confs: np.ndarray) -> list | None:
    """Whether each text of case `case` passes (the original counts as passing for INV and
    DIR), or None when the case is filtered out. `preds` [texts of the case], `confs`
    [texts of the case, classes]."""
    expectation = test.expectation
    kind = expectation["kind"]
    if kind == "label":
        label = test.label_of(case)
        return [int(preds[0]) in expectation.get("allowed", {}).get(str(label), [label])]
    if kind == "allowed":
        return [int(preds[0]) in expectation["allowed"]]
    tolerance, original = expectation["tolerance"], int(preds[0])
    if kind == "inv":
        moved = np.abs(confs[:, original] - confs[0, original])
        return list((preds == original) | (moved <= tolerance))
    increasing = expectation["increasing"]
    if kind == "shift":
        up, down = expectation["up"], expectation["down"]
        change = confs[0, down] - confs[:, down] + confs[:, up] - confs[0, up]
        return list(change + tolerance >= 0 if increasing else change - tolerance <= 0)
    if original in expectation.get("skip_original", []):
        return None
    label = original if expectation["label"] is None else expectation["label"]
    before = confs[0, label]
    if (increasing and before <= tolerance) or (not increasing and before >= 1 - tolerance):
        return None  # it cannot fail
    change = confs[:, label] - before
    return list(change + tolerance >= 0 if increasing else change - tolerance <= 0)


def sample_cases(test: SuiteTest, position: int, sample: int | None, seed: int) -> list[int]:
    """The cases of `test` (the `position`-th of its suite) run: all, or `sample` of them
    drawn without replacement, in the suite's order."""
    count = len(test.cases)
    if sample is None or sample >= count:
        return list(range(count))
    rng = np.random.default_rng([seed, position])
    return sorted(int(i) for i in rng.choice(count, size=sample, replace=False))


def _texts(test: SuiteTest, case: int) -> list[str]:
    texts = test.cases[case]
    return [texts] if isinstance(texts, str) else texts


def predict_texts(texts: list[str], probabilities: Probabilities) -> np.ndarray:
    """`probabilities` over `texts`, asked in chunks with a progress line:
    float32 [texts, export labels]."""
    parts, started = [], time.monotonic()
    for start in range(0, len(texts), _CHUNK):
        parts.append(np.asarray(probabilities(texts[start:start + _CHUNK]), np.float32))
        done = start + len(parts[-1])
        logging.info("predicted %d/%d texts (%.1f/s)", done, len(texts),
                     done / max(time.monotonic() - started, 1e-9), extra=PROGRESS)
    return np.concatenate(parts)


def run_suite(tests: list[SuiteTest], probabilities: Probabilities, columns: list[int],
              sample: int | None = None, seed: int = 0) -> list[dict]:
    """Every test's result (see `test_result`), each distinct text predicted once."""
    chosen = [sample_cases(test, i, sample, seed) for i, test in enumerate(tests)]
    unique = list(dict.fromkeys(text for test, cases in zip(tests, chosen) for case in cases
                                for text in _texts(test, case)))
    row = {text: i for i, text in enumerate(unique)}
    probs = predict_texts(unique, probabilities)
    if probs.shape != (len(unique), len(columns)):
        raise ValueError(f"the model gave probabilities of shape {probs.shape} for "
                         f"{len(unique)} texts of {len(columns)} labels")
    preds, confs = suite_predictions(probs, columns, len(tests[0].classes))
    return [test_result(test, cases, preds, confs, row) for test, cases in zip(tests, chosen)]


def test_result(test: SuiteTest, cases: list[int], preds: np.ndarray, confs: np.ndarray,
                row: dict[str, int]) -> dict:
    """One test's counts, failure rate and first failing examples, given the predictions of
    every text (`row`: text -> its row in `preds` and `confs`)."""
    filtered, failures = 0, []
    for case in cases:
        rows = [row[text] for text in _texts(test, case)]
        verdicts = judge(test, case, preds[rows], confs[rows])
        if verdicts is None:
            filtered += 1
        elif not all(verdicts[1:] if test.type != "MFT" else verdicts):
            failures.append((case, rows, verdicts))
    evaluated = len(cases) - filtered
    return {
        "name": test.name, "capability": test.capability, "type": test.type,
        "expectation": test.expectation, "cases": len(test.cases), "run": len(cases),
        "filtered": filtered, "failed": len(failures),
        "failure_rate": len(failures) / evaluated if evaluated else None,
        "examples": [_example(test, case, rows, verdicts, preds, confs)
                     for case, rows, verdicts in failures[:EXAMPLES]]}


def _example(test: SuiteTest, case: int, rows: list[int], verdicts: list, preds: np.ndarray,
             confs: np.ndarray) -> dict:
    """A failing case: its label, and its texts that failed (the original first for INV and
    DIR) with their predictions."""
    label = test.label_of(case)
    shown = [i for i, ok in enumerate(verdicts) if not ok or (i == 0 and test.type != "MFT")]
    return {"case": case + 1,
            "label": None if label is None else test.classes[label],
            "texts": [{"text": _texts(test, case)[i],
                       "prediction": test.classes[int(preds[rows[i]])],
                       "probabilities": [round(float(p), 4) for p in confs[rows[i]]]}
                      for i in shown]}


def capability_summary(results: list[dict]) -> list[dict]:
    """Per capability, in the order first met: tests, cases run and failed, the failure rate
    over its evaluated cases, and the mean of its tests' rates."""
    summary: dict[str, dict] = {}
    for result in results:
        entry = summary.setdefault(result["capability"], {
            "capability": result["capability"], "tests": 0, "run": 0, "filtered": 0,
            "failed": 0, "rates": []})
        entry["tests"] += 1
        for key in ("run", "filtered", "failed"):
            entry[key] += result[key]
        if result["failure_rate"] is not None:
            entry["rates"].append(result["failure_rate"])
    rows = []
    for entry in summary.values():
        rates = entry.pop("rates")
        evaluated = entry["run"] - entry["filtered"]
        rows.append(dict(entry, failure_rate=entry["failed"] / evaluated if evaluated else None,
                         mean_test_failure_rate=sum(rates) / len(rates) if rates else None))
    return rows


def percent(rate: float | None) -> str:
    return "-" if rate is None else f"{100 * rate:.1f}%"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _code(text: str) -> str:
    return f"`` {text} ``" if "`" in text else f"`{text}`"


def markdown(report: dict) -> str:
    """The report as Markdown: the tests' table, the capabilities', the failing examples."""
    lines = [f"# Behavioural tests of {report['export']}", "",
             f"Suite `{report['suite']}` ({len(report['tests'])} tests); "
             + (f"at most {report['sample']} cases a test (seed {report['seed']})"
                if report["sample"] else "every case") + "; export labels -> suite classes: "
             + ", ".join(f"{k} -> {v}" for k, v in report["label_map"].items()) + ".", "",
             "| capability | test | type | cases | run | filtered | failed | failure rate |",
             "|---|---|---|---:|---:|---:|---:|---:|"]
    lines += [f"| {_cell(r['capability'])} | {_cell(r['name'])} | {r['type']} | {r['cases']} | "
              f"{r['run']} | {r['filtered']} | {r['failed']} | {percent(r['failure_rate'])} |"
              for r in report["tests"]]
    lines += ["", "## Per capability", "",
              "| capability | tests | run | filtered | failed | failure rate | mean of the "
              "tests' rates |", "|---|---:|---:|---:|---:|---:|---:|"]
    lines += [f"| {_cell(c['capability'])} | {c['tests']} | {c['run']} | {c['filtered']} | "
              f"{c['failed']} | {percent(c['failure_rate'])} | "
              f"{percent(c['mean_test_failure_rate'])} |" for c in report["capabilities"]]
    lines += ["", "## Failing examples (the first three of each test)"]
    for result in report["tests"]:
        if not result["examples"]:
            continue
        lines += ["", f"### {result['name']}", ""]
        for example in result["examples"]:
            label = f" (label: {example['label']})" if example["label"] else ""
            lines.append(f"- case {example['case']}{label}:")
            lines += [f"  - {_code(t['text'])} -> {t['prediction']} "
                      f"({' '.join(f'{p:.2f}' for p in t['probabilities'])})"
                      for t in example["texts"]]
    return "\n".join(lines) + "\n"


def table(results: list[dict]) -> str:
    """The tests' failure rates as plain text columns (what the entry point prints)."""
    width = max(len(r["name"]) for r in results)
    lines = [f"{'capability':<11} {'test':<{width}} type  {'run':>6} {'failed':>6}  rate"]
    lines += [f"{r['capability']:<11} {r['name']:<{width}} {r['type']:<4}  {r['run']:>6} "
              f"{r['failed']:>6}  {percent(r['failure_rate']):>6}" for r in results]
    return "\n".join(lines)
