"""A behavioural test suite in plain JSON lines, read and checked (no TensorFlow).

One JSON object a line, one line a test (data_prep/checklist_suite.py writes CheckList's
released suites so; a suite can be written by hand the same way):

    name           unique in the suite
    capability     what the test is about (CheckList's: Vocabulary, Negation, Fairness, ...)
    type           MFT (minimum functionality: one text a case, judged on its own), INV
                   (invariance) or DIR (directional): a case is [original, perturbation, ...]
    description    free text
    classes        the suite's class names; label id i is classes[i] (the same on every line)
    cases          [text, ...] (MFT) or [[original, perturbation, ...], ...] (INV, DIR)
    labels         an id for every case, a list of one id a case, or null
    expectation    what passing means, one of
      MFT {"kind": "label"}                   the prediction is the case's label; an optional
                                              "allowed": {"<id>": [ids]} widens a label (a
                                              label "1" of CheckList's Q & A: no means "not
                                              negative": [1, 2])
          {"kind": "allowed", "allowed": [ids]}   the prediction is one of these
      INV {"kind": "inv", "tolerance": t}     every perturbation keeps the original's
                                              prediction, or moves the probability of that
                                              class by at most t
      DIR {"kind": "monotonic", "label": id | null (the original's prediction),
           "increasing": bool, "tolerance": t, "skip_original": [ids] (optional)}
                                              P(label) does not fall (rise) by more than t;
                                              cases whose original is predicted as one of
                                              skip_original are left out
          {"kind": "shift", "up": id, "down": id, "increasing": bool, "tolerance": t}
                                              P(up) - P(down) does not fall (rise) by more
                                              than t
    expectation_source   (optional) where the converter read the expectation

official/robustness/behavioral.py applies the expectations. Every mistake is one line naming
"file:line" and what is wrong.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

TYPES = ("MFT", "INV", "DIR")
KINDS = {"MFT": ("label", "allowed"), "INV": ("inv",), "DIR": ("monotonic", "shift")}


@dataclasses.dataclass(frozen=True)
class SuiteTest:
    """One test of a suite (see the module docstring); `line` is its line in the file."""

    name: str
    capability: str
    type: str
    description: str
    classes: tuple[str, ...]
    cases: list
    labels: int | list[int] | None
    expectation: dict
    expectation_source: str
    line: int

    def label_of(self, case: int) -> int | None:
        """The label id of case `case` (None for a test without labels)."""
        return self.labels[case] if isinstance(self.labels, list) else self.labels


class SuiteError(ValueError):
    """A suite file that cannot be used; the message is "file:line: what is wrong"."""


def _is_id(value: Any, classes: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < classes


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0


def _check_expectation(test_type: str, expectation: Any, classes: int,
                       has_labels: bool) -> str | None:
    """What is wrong with `expectation` for a test of `test_type`, or None."""
    if not isinstance(expectation, dict) or expectation.get("kind") not in KINDS[test_type]:
        return f"a {test_type} expectation's kind is one of {', '.join(KINDS[test_type])}"
    kind = expectation["kind"]

    def ids(values: Any) -> bool:
        return isinstance(values, list) and bool(values) and all(_is_id(v, classes)
                                                                 for v in values)

    if kind == "label":
        allowed = expectation.get("allowed", {})
        if not has_labels:
            return "a label expectation needs labels"
        if not isinstance(allowed, dict) or not all(
                key.isdigit() and _is_id(int(key), classes) and ids(value)
                for key, value in allowed.items()):
            return 'a label expectation\'s "allowed" maps label ids ("1") to lists of ids'
    elif kind == "allowed" and not ids(expectation.get("allowed")):
        return 'an allowed expectation needs "allowed": a list of label ids'
    elif kind in ("inv", "monotonic", "shift") and not _is_number(expectation.get("tolerance")):
        return f'a {kind} expectation needs "tolerance": a number at least 0'
    if kind in ("monotonic", "shift") and not isinstance(expectation.get("increasing"), bool):
        return f'a {kind} expectation needs "increasing": true or false'
    if kind == "monotonic":
        label = expectation.get("label")
        if label is not None and not _is_id(label, classes):
            return 'a monotonic expectation\'s "label" is a label id or null'
        if "skip_original" in expectation and not ids(expectation["skip_original"]):
            return 'a monotonic expectation\'s "skip_original" is a list of label ids'
    if kind == "shift" and not (_is_id(expectation.get("up"), classes)
                                and _is_id(expectation.get("down"), classes)):
        return 'a shift expectation needs "up" and "down": label ids'
    return None


def _test(record: Any, line: int) -> SuiteTest | str:
    """The test of one line, or what is wrong with it."""
    if not isinstance(record, dict):
        return "not a JSON object"
    for field, kind in (("name", str), ("capability", str), ("type", str), ("classes", list),
                        ("cases", list)):
        if not isinstance(record.get(field), kind):
            return f"{field!r} missing or not a {kind.__name__}"
    test_type, classes, cases = record["type"], record["classes"], record["cases"]
    if test_type not in TYPES:
        return f"type {test_type!r} is not one of {', '.join(TYPES)}"
    if len(classes) < 2 or not all(isinstance(c, str) and c for c in classes) or len(
            set(classes)) != len(classes):
        return "'classes' must be two or more distinct names"
    if not cases:
        return "no cases"
    for number, case in enumerate(cases, start=1):
        fine = isinstance(case, str) if test_type == "MFT" else (
            isinstance(case, list) and bool(case) and all(isinstance(t, str) for t in case))
        if not fine:
            return (f"case {number} is not " + ("a text" if test_type == "MFT" else
                                                "a list of texts (original first)"))
    labels = record.get("labels")
    if isinstance(labels, list):
        if len(labels) != len(cases) or not all(_is_id(x, len(classes)) for x in labels):
            return f"'labels' must hold one label id (0-{len(classes) - 1}) per case"
    elif labels is not None and not _is_id(labels, len(classes)):
        return f"'labels' must be a label id (0-{len(classes) - 1}), a list of them or null"
    wrong = _check_expectation(test_type, record.get("expectation"), len(classes),
                               labels is not None)
    if wrong:
        return wrong
    return SuiteTest(record["name"], record["capability"], test_type,
                     str(record.get("description") or ""), tuple(classes), cases, labels,
                     record["expectation"], str(record.get("expectation_source") or ""), line)


def read_suite(path: str) -> list[SuiteTest]:
    """The tests of the JSON-lines suite at `path`, checked (blank lines are skipped).

    Raises:
      SuiteError: "path:line: what is wrong" (or "path: ..." for the file as a whole).
    """
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except FileNotFoundError:
        raise SuiteError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise SuiteError(f"{path}: a directory, not a suite file") from None
    tests, names = [], {}
    for number, line in enumerate(raw.split(b"\n"), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line.decode("utf-8"))
        except UnicodeDecodeError:
            raise SuiteError(f"{path}:{number}: not UTF-8") from None
        except json.JSONDecodeError as e:
            raise SuiteError(f"{path}:{number}: not JSON ({e.msg}, column {e.colno})") from None
        test = _test(record, number)
        if isinstance(test, str):
            raise SuiteError(f"{path}:{number}: {test}")
        if test.name in names:
            raise SuiteError(f"{path}:{number}: test {test.name!r} again (first on line "
                             f"{names[test.name]})")
        if tests and test.classes != tests[0].classes:
            raise SuiteError(f"{path}:{number}: classes {list(test.classes)} differ from line "
                             f"{tests[0].line}'s {list(tests[0].classes)}")
        names[test.name] = number
        tests.append(test)
    if not tests:
        raise SuiteError(f"{path}: no tests")
    return tests
