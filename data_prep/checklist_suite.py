r"""CheckList's released test suites converted to plain JSON lines, without running the pickle.

    python -m data_prep.checklist_suite \
        --input_file=../shared/data/robustness/checklist/sentiment_suite.tar.gz \
        --output_file=sentiment_suite.jsonl

CheckList (Ribeiro et al., ACL 2020) released its suites as dill pickles of a `TestSuite`. Loading
one with pickle.load, dill.load or `TestSuite.from_file` imports modules and rebuilds functions
from stored bytecode: a pickle from anywhere runs whatever it says. This converter never does. It
walks the opcodes first (`pickletools.genops`, which builds nothing) and refuses those that reach
outside the unpickler (persistent ids, the copyreg extension registry) or that this format never
uses; then it unpickles with `InertUnpickler`, whose `find_class` returns a fresh inert stub type
for every reference: no module is imported, no name is resolved, and calling a stub, building it
or setting its items only records the arguments. The suite's state is then plain data beside
records of what the pickle asked for.

From that, one JSON object a line, one line a test, in the suite's order (the format
official/robustness/suite.py reads and checks):

    {"name", "capability", "type": "MFT" | "INV" | "DIR" (the test's class), "description",
     "classes": the suite's label names (--classes; id i is classes[i]),
     "expectation": what passing means (official/robustness/suite.py lists the kinds),
     "expectation_source": "pickle" | "table" | "pickle+table",
     "cases": [text, ...] (MFT) or [[original, perturbation, ...], ...] (INV, DIR),
     "labels": an id for every case, a list of ids, or null}

The expectation: CheckList's own expectation functions keep their settings in closure cells,
which dill stores as plain data (`_create_cell(value)`): `Expect.eq`'s value, `Expect.inv`'s
tolerance, `Expect.monotonic`'s label, direction and tolerance are read from there ("pickle").
Functions the suite's authors wrote in their notebook have only bytecode; what they do was read
from their bytecode once, by hand, and is written in `NOTEBOOK_EXPECTATIONS` keyed by test name
("table"), each entry used only when the test's notebook code is byte for byte the code it was
read from (its fingerprint); a monotonic expectation filtered by a notebook slice takes its
settings from the pickle and the filter from the table ("pickle+table"). A test whose expectation
is neither is refused, naming it.

Bad input (not a tarball or a pickle, a tarball without exactly one .pkl, a pickle that is not a
CheckList TestSuite, a refused opcode) is one line naming the file and what is wrong, exit status
1, and nothing written; the output appears only when complete.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import pickle
import pickletools
import re
import tarfile
import zlib
from typing import Any

from absl import flags, logging

from official import command_line
from official.atomic_files import open_atomically
from official.output_paths import check_output_file

FLAGS = flags.FLAGS


def define_flags() -> None:
    """The entry point's flags; defined when it runs, not on import, so that a process that
    imports this module and another data maker (the tests) meets no flag twice."""
    flags.DEFINE_string("input_file", None, "A CheckList suite: the released .tar.gz holding "
                        "one .pkl, or the .pkl itself.")
    flags.DEFINE_string("output_file", None, "The JSON-lines suite to write.")
    flags.DEFINE_list("classes", ["negative", "neutral", "positive"],
                      "The names of the suite's label ids 0, 1, ... (CheckList's sentiment "
                      "suite: negative,neutral,positive).")


class SuiteError(ValueError):
    """The input cannot be converted; the message is one line naming the file."""


# Opcodes refused before unpickling: persistent ids and the extension registry would reach
# outside the unpickler; INST and OBJ (protocols 0 and 1 instance building) and out-of-band
# buffers are never written by dill's protocol 3 and have no place in a suite.
REFUSED_OPCODES = {"PERSID", "BINPERSID", "EXT1", "EXT2", "EXT4", "INST", "OBJ",
                   "NEXT_BUFFER", "READONLY_BUFFER"}


class Inert:
    """A record of what the pickle asked for: `reference` (module, name) of the stub type it
    named, and every call's arguments, state, items and appended values. Nothing else."""

    reference = ("", "")

    def __new__(cls, *args, **kwargs):
        record = object.__new__(cls)
        record.args, record.kwargs, record.state = args, kwargs, None
        record.items, record.appended = [], []
        return record

    def __init__(self, *args, **kwargs):
        pass

    def __setstate__(self, state):
        self.state = state

    def __setitem__(self, key, value):
        self.items.append((key, value))

    def append(self, value):
        self.appended.append(value)

    def extend(self, values):
        self.appended.extend(values)

    def __call__(self, *args, **kwargs):
        called = Call(*args, **kwargs)
        called.function = self
        return called


class Call(Inert):
    """A record called (dill's `_load_type('CodeType')(...)`, `_get_attr(...)(...)`)."""

    reference = ("", "<call>")


class InertUnpickler(pickle.Unpickler):
    """Unpickles into `Inert` records: every class or function reference becomes a fresh stub
    type that imports and resolves nothing; persistent ids are refused."""

    def find_class(self, module: str, name: str) -> type:
        return type("Stub", (Inert,), {"reference": (module, name)})

    def persistent_load(self, pid):
        raise pickle.UnpicklingError("a persistent id")


def _is(value: Any, module: str, name: str) -> bool:
    return isinstance(value, Inert) and value.reference == (module, name)


def _is_dill(value: Any, name: str) -> bool:
    return _is(value, "dill._dill", name) or _is(value, "dill.dill", name)


def read_pickle_bytes(path: str) -> bytes:
    """The pickle's bytes: the one .pkl member of a tarball, or the file itself."""
    if not os.path.exists(path):
        raise SuiteError(f"{path}: no such file")
    if os.path.isdir(path):
        raise SuiteError(f"{path}: a directory, not a CheckList suite")
    try:
        with tarfile.open(path, "r:*") as tar:
            members = [m for m in tar.getmembers() if m.isfile() and m.name.endswith(".pkl")]
            if len(members) != 1:
                raise SuiteError(f"{path}: a tarball with {len(members)} .pkl files, not one "
                                 "CheckList suite")
            return tar.extractfile(members[0]).read()
    except tarfile.ReadError:
        pass  # not a tarball: perhaps the pickle itself
    except (EOFError, zlib.error, tarfile.TarError) as e:
        raise SuiteError(f"{path}: a damaged tarball ({e})") from None
    with open(path, "rb") as f:
        data = f.read()
    if not data.startswith(b"\x80"):
        raise SuiteError(f"{path}: neither a tarball nor a pickle")
    return data


def check_opcodes(data: bytes, path: str) -> None:
    """Walks the opcodes (building nothing); raises SuiteError at a refused or broken one."""
    try:
        for opcode, _, position in pickletools.genops(data):
            if opcode.name in REFUSED_OPCODES:
                raise SuiteError(f"{path}: refused pickle opcode {opcode.name} at byte "
                                 f"{position}: a CheckList suite never needs it")
    except SuiteError:
        raise
    except Exception as e:  # noqa: BLE001 -- genops raises ValueError and others on bad data
        raise SuiteError(f"{path}: not a readable pickle ({e})") from None


def inert_load(data: bytes, path: str) -> Any:
    """The pickle's object graph as `Inert` records and plain values."""
    check_opcodes(data, path)
    try:
        return InertUnpickler(io.BytesIO(data)).load()
    except Exception as e:  # noqa: BLE001 -- a malformed pickle fails in many ways
        raise SuiteError(f"{path}: not a readable pickle ({type(e).__name__}: {e})") from None


# ---- Values: text, numpy scalars, labels.

_UNICODE_DTYPE = re.compile(r"[<=|]?U(\d+)$")
_BYTES_DTYPE = re.compile(r"[<=|]?S(\d+)$")


def _text(value: Any) -> str | None:
    """A str, or a numpy string scalar's text (`scalar(dtype('U82'), raw)`: UTF-32 code
    points, NUL-padded; 'S': bytes), else None."""
    if isinstance(value, str):
        return value
    if not (isinstance(value, Call) and _is_dill(value.function, "_get_attr")
            and value.function.args[1:] == ("scalar",) and len(value.args) == 2):
        return None
    dtype, raw = value.args
    if not (_is(dtype, "numpy", "dtype") and dtype.args and isinstance(raw, bytes)):
        return None
    order = dtype.state[1] if isinstance(dtype.state, tuple) and len(dtype.state) > 1 else "<"
    if _UNICODE_DTYPE.match(str(dtype.args[0])):
        return raw.decode("utf-32-be" if order == ">" else "utf-32-le").rstrip("\x00")
    if _BYTES_DTYPE.match(str(dtype.args[0])):
        return raw.rstrip(b"\x00").decode("utf-8")
    return None


def _label(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


# ---- Expectations: CheckList's functions read from their closures, notebook ones by table.

_EXPECT_FILE = "checklist/expect.py"


def _code(function: Inert) -> dict | None:
    """The fields of a dill `_create_function` record's code object, by name, for the code
    layouts of Python 3.7 (15 arguments) and 3.8-3.10 (16, posonlyargcount second)."""
    code = function.args[0] if function.args else None
    if not isinstance(code, Call):
        return None
    names = ["argcount", "kwonlyargcount", "nlocals", "stacksize", "flags", "code", "consts",
             "names", "varnames", "filename", "name", "firstlineno", "lnotab", "freevars",
             "cellvars"]
    if len(code.args) == 16:
        names.insert(1, "posonlyargcount")
    return dict(zip(names, code.args)) if len(code.args) == len(names) else None


def _cells(function: Inert) -> list:
    closure = function.args[4] if len(function.args) > 4 else None
    if not isinstance(closure, tuple):
        return []
    return [cell.args[0] if _is_dill(cell, "_create_cell") and cell.args else cell
            for cell in closure]


def _functions(root: Any) -> list[tuple[dict | None, list]]:
    """(code fields, closure values) of every function rebuilt under `root`, depth first."""
    found, seen, stack = [], set(), [root]
    while stack:
        value = stack.pop()
        if id(value) in seen:
            continue
        seen.add(id(value))
        if _is_dill(value, "_create_function"):
            found.append((_code(value), _cells(value)))
        if isinstance(value, Inert):
            stack += [*value.args, value.state, *value.items, *value.appended]
            if isinstance(value, Call):
                stack.append(value.function)
        elif isinstance(value, (list, tuple)):
            stack += list(value)
        elif isinstance(value, dict):
            stack += list(value.values())
    return found


def _plain(value: Any) -> Any:
    return value if isinstance(value, (int, float, str, type(None))) else repr(type(value))


def notebook_fingerprint(functions: list[tuple[dict | None, list]]) -> str:
    """sha256 (16 hex digits) of the notebook functions' names, bytecode and constants."""
    parts = sorted(f"{code['name']}|{code['code'].hex()}|"
                   f"{[_plain(c) for c in code['consts']]}"
                   for code, _ in functions if code and not _from_checklist(code))
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def _from_checklist(code: dict) -> bool:
    return str(code.get("filename", "")).replace("\\", "/").endswith(_EXPECT_FILE)


# What the notebook functions of CheckList's sentiment suite do, read from their bytecode
# (their constants are given beside each):
#   `lambda x, pred, *args: pred != 0` (MFT, no labels): any prediction but negative;
#   `lambda x, pred, _, label, _2: pred != 0 if label == 1 else pred == label` (Q & A: no,
#   labels 0 and 1): label 1 means "not negative";
#   `positive_change(orig_conf, conf) = orig_conf[0] - conf[0] + conf[2] - orig_conf[2]` with
#   `diff_up`: change + 0.1 >= 0, `diff_down`: change - 0.1 <= 0 (the add positive / negative
#   phrases DIRs): P(positive) - P(negative) must not fall (rise) by more than 0.1;
#   `lambda pred, *args, **kwargs: pred != 1` as `Expect.slice_pairwise`'s slice of a
#   monotonic DIR: cases whose original is predicted neutral are left out.
_NOT_NEGATIVE = {"kind": "allowed", "allowed": [1, 2]}
_NEUTRAL_ORIGINALS_LEFT_OUT = {"skip_original": [1]}
NOTEBOOK_EXPECTATIONS = {
    "simple negations: not negative": ("346dee368fe47cba", _NOT_NEGATIVE),
    "simple negations: I thought x was negative, but it was not (should be neutral or "
    "positive)": ("346dee368fe47cba", _NOT_NEGATIVE),
    "Hard: Negation of negative with neutral stuff in the middle (should be positive or "
    "neutral)": ("346dee368fe47cba", _NOT_NEGATIVE),
    "Q & A: no": ("a03953a07586d949", {"kind": "label", "allowed": {"1": [1, 2]}}),
    "add positive phrases": ("81e9017b720078c0", {"kind": "shift", "up": 2, "down": 0,
                                                  "increasing": True, "tolerance": 0.1}),
    "add negative phrases": ("c29c32ef1b125946", {"kind": "shift", "up": 2, "down": 0,
                                                  "increasing": False, "tolerance": 0.1}),
    "intensifiers": ("32dfe1ce427056d3", _NEUTRAL_ORIGINALS_LEFT_OUT),
    "reducers": ("32dfe1ce427056d3", _NEUTRAL_ORIGINALS_LEFT_OUT),
    '"used to" should reduce': ("32dfe1ce427056d3", _NEUTRAL_ORIGINALS_LEFT_OUT),
}


def _checklist_expectation(functions: list[tuple[dict | None, list]]) -> dict | None:
    """The expectation CheckList's own functions under a test's `expect` say, when exactly
    one of eq, inv and monotonic is there; None otherwise."""
    found = []
    for code, cells in functions:
        if not code or not _from_checklist(code):
            continue
        free = tuple(code["freevars"])
        if code["name"] == "ret_fn" and free == ("val",):
            value = _label(cells[0]) if cells else None
            found.append({"kind": "label"} if cells and cells[0] is None else
                         {"kind": "allowed", "allowed": [value]} if value is not None else None)
        elif code["name"] == "expect" and free == ("tolerance",):
            found.append({"kind": "inv", "tolerance": float(cells[0])}
                         if cells and isinstance(cells[0], (int, float)) else None)
        elif code["name"] == "expect" and free == ("increasing", "keep_label", "tolerance"):
            increasing, label, tolerance = (cells + [None] * 3)[:3]
            ok = (isinstance(increasing, bool) and isinstance(tolerance, (int, float))
                  and (label is None or _label(label) is not None))
            found.append({"kind": "monotonic", "label": label, "increasing": increasing,
                          "tolerance": float(tolerance)} if ok else None)
    return found[0] if len(found) == 1 and found[0] is not None else None


def expectation(name: str, expect: Any, path: str) -> tuple[dict, str]:
    """(the expectation, where it came from) of the test `name` whose `expect` record is
    given (see the module docstring)."""
    functions = _functions(expect)
    recovered = _checklist_expectation(functions)
    notebook = any(code is None or not _from_checklist(code) for code, _ in functions)
    if recovered is not None and not notebook:
        return recovered, "pickle"
    fingerprint = notebook_fingerprint(functions)
    entry = NOTEBOOK_EXPECTATIONS.get(name)
    if entry is None or entry[0] != fingerprint:
        why = ("is not in the table" if entry is None else
               f"has code {fingerprint}, not the {entry[0]} the table was read from")
        raise SuiteError(f"{path}: test {name!r}: its expectation is a function written in "
                         f"the suite's notebook, and the test {why} "
                         "(data_prep/checklist_suite.py NOTEBOOK_EXPECTATIONS)")
    if "kind" in entry[1]:
        return dict(entry[1]), "table"
    if recovered is None or recovered["kind"] != "monotonic":
        raise SuiteError(f"{path}: test {name!r}: the table's filter needs a monotonic "
                         "expectation, and none was read from the pickle")
    return dict(recovered, **entry[1]), "pickle+table"


# ---- The suite.

TEST_TYPES = ("MFT", "INV", "DIR")


def _case(value: Any, test_type: str) -> str | list[str] | None:
    if test_type == "MFT":
        return _text(value)
    texts = [_text(x) for x in value] if isinstance(value, (list, tuple)) else [None]
    return texts if texts and None not in texts else None


def convert(path: str, classes: list[str]) -> list[dict]:
    """The tests of the CheckList suite at `path` as JSON-ready dicts (module docstring)."""
    suite = inert_load(read_pickle_bytes(path), path)
    state = suite.state if _is(suite, "checklist.test_suite", "TestSuite") else None
    tests = state.get("tests") if isinstance(state, dict) else None
    if not isinstance(tests, Inert) or not tests.items:
        what = ".".join(suite.reference) if isinstance(suite, Inert) else type(suite).__name__
        raise SuiteError(f"{path}: holds a {what}, not a CheckList TestSuite with tests")
    converted = []
    for key, test in tests.items:
        fields = test.state if isinstance(test, Inert) else None
        if not (isinstance(fields, dict) and test.reference[0] == "checklist.test_types"
                and test.reference[1] in TEST_TYPES):
            raise SuiteError(f"{path}: test {key!r} is not a CheckList MFT, INV or DIR")
        kind, name = test.reference[1], fields.get("name") or key
        for field, value in (("name", name), ("capability", fields.get("capability")),
                             ("description", fields.get("description"))):
            if not isinstance(value, (str, type(None))):
                raise SuiteError(f"{path}: test {key!r}: its {field} is not text")
        data = fields.get("data")
        if not isinstance(data, list) or not data:
            raise SuiteError(f"{path}: test {name!r}: no list of cases")
        cases = [_case(x, kind) for x in data]
        if None in cases:
            raise SuiteError(f"{path}: test {name!r}: case {cases.index(None) + 1} is not "
                             + ("a text" if kind == "MFT" else "a list of texts"))
        labels = fields.get("labels")
        if isinstance(labels, list):
            labels = [_label(x) for x in labels]
            if len(labels) != len(cases) or None in labels:
                raise SuiteError(f"{path}: test {name!r}: labels are not one id per case")
        elif labels is not None and _label(labels) is None:
            raise SuiteError(f"{path}: test {name!r}: labels are neither an id nor a list")
        used = labels if isinstance(labels, list) else [] if labels is None else [labels]
        if any(not 0 <= label < len(classes) for label in used):
            raise SuiteError(f"{path}: test {name!r}: a label id outside --classes "
                             f"({len(classes)} classes)")
        expected, source = expectation(name, fields.get("expect"), path)
        converted.append({
            "name": name, "capability": fields.get("capability") or "", "type": kind,
            "description": fields.get("description") or "", "classes": list(classes),
            "expectation": expected, "expectation_source": source, "cases": cases,
            "labels": labels})
    return converted


def prepare() -> None:
    """The flags and the output place checked."""
    for name in ("input_file", "output_file"):
        if not FLAGS[name].value:
            raise SuiteError(f"--{name}: required")
    if len(FLAGS.classes) < 2 or len(set(FLAGS.classes)) != len(FLAGS.classes):
        raise SuiteError(f"--classes={','.join(FLAGS.classes)}: at least two distinct names")
    check_output_file(FLAGS.output_file, "output_file")


def job(_: None) -> None:
    tests = convert(FLAGS.input_file, FLAGS.classes)
    with open_atomically(FLAGS.output_file) as f:
        for test in tests:
            f.write(json.dumps(test, ensure_ascii=False) + "\n")
    cases = sum(len(test["cases"]) for test in tests)
    logging.info("wrote %d tests (%d cases) to %s", len(tests), cases, FLAGS.output_file)


if __name__ == "__main__":
    define_flags()
    command_line.main("checklist_suite", prepare, job, tensorflow=False,
                      left=lambda: f"{FLAGS.output_file} not written")
