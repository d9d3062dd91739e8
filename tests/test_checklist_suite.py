"""data_prep/checklist_suite.py: CheckList's suites read without running anything.

The planted pickles would run code if loaded (a module that writes a file when imported, a
`__reduce__` calling os.system): the converter refuses them and the test checks that nothing
ran. The CheckList-shaped pickle is built here the way dill writes the released suite (fake
`checklist.*` and `dill._dill` modules in sys.modules, objects whose `__reduce__` gives dill's
calls: `_create_function(_load_type('CodeType')(<code fields>), ..., closure)`,
`_create_cell(value)`, numpy's `scalar(dtype, raw)`), and its conversion is checked against the
JSON written out by hand.
"""

import io
import json
import os
import pickle
import subprocess
import sys
import tarfile
import types

import pytest

from data_prep import checklist_suite
from tests import cli


def _module(monkeypatch, name, **members):
    module = types.ModuleType(name)
    for key, value in members.items():
        if isinstance(value, type) or callable(value):
            value.__module__, value.__qualname__ = name, key
        setattr(module, key, value)
    monkeypatch.setitem(sys.modules, name, module)
    return module


class Reduced:
    """Pickles as `function(*args)` (what dill's records are)."""

    def __init__(self, function, *args):
        self.function, self.args = function, args

    def __reduce__(self):
        return self.function, self.args

    def __call__(self, *args):
        return Reduced(self, *args)


@pytest.fixture
def fakes(monkeypatch):
    """The modules a dill-written CheckList suite names, as harmless fakes; the classes and
    functions pickle by reference to them."""
    def stub(*args):
        raise AssertionError("never called: the test only pickles")

    dill = _module(monkeypatch, "dill._dill", **{name: types.FunctionType(
        stub.__code__, {}, name) for name in ("_create_function", "_create_cell", "_load_type",
                                             "_get_attr", "_import_module")})
    _module(monkeypatch, "dill")._dill = dill

    class Test:
        def __init__(self, **fields):
            self.__dict__.update(fields)

    checklist = _module(monkeypatch, "checklist")
    checklist.test_types = _module(monkeypatch, "checklist.test_types",
                                   MFT=type("MFT", (Test,), {}), INV=type("INV", (Test,), {}),
                                   DIR=type("DIR", (Test,), {}))
    checklist.test_suite = _module(monkeypatch, "checklist.test_suite",
                                   TestSuite=type("TestSuite", (Test,), {}))

    def code(name, freevars, filename="/home/x/checklist/checklist/expect.py",
             bytecode=b"d\x01S\x00", consts=(None,)):
        """dill's code record: CodeType's 15 arguments in Python 3.7's order."""
        return Reduced(dill._load_type, "CodeType")(
            1, 0, 1, 2, 19, bytecode, consts, (), ("x",), filename, name, 1, b"",
            tuple(freevars), ())

    def function(code_record, cells=()):
        closure = tuple(Reduced(dill._create_cell, value) for value in cells) or None
        return Reduced(dill._create_function, code_record, {}, "expect", None, closure)

    def wrapped(inner):
        """CheckList's Expect.single/testcase layers around an expectation function."""
        return function(code("expect", ["fn"]), [function(code("expect_fn", ["fn"]),
                                                          [inner])])

    class Dtype:
        """Pickles as numpy's dtype does: numpy.dtype('U8', 0, 1) and its state."""

        def __init__(self, kind):
            self.kind = kind

        def __reduce__(self):
            import numpy
            return numpy.dtype, (self.kind, 0, 1), (3, "<", None, None, None, 16, 4, 8)

    def numpy_text(text):
        scalar = Reduced(dill._get_attr, Reduced(dill._import_module,
                                                 "numpy.core._multiarray_umath"), "scalar")
        return scalar(Dtype(f"U{len(text) + 2}"), (text + "\0\0").encode("utf-32-le"))

    return types.SimpleNamespace(
        types=checklist.test_types, suite=checklist.test_suite.TestSuite, wrapped=wrapped,
        function=function, code=code, numpy_text=numpy_text,
        eq=lambda: wrapped(function(code("ret_fn", ["val"]), [None])),
        inv=lambda tolerance: wrapped(function(code("expect", ["tolerance"]), [tolerance])),
        monotonic=lambda label, increasing, tolerance: wrapped(function(
            code("expect", ["increasing", "keep_label", "tolerance"]),
            [increasing, label, tolerance])))


class OrderedTests:
    """Pickles as collections.OrderedDict() filled by SETITEMS, as the suite's `tests`."""

    def __init__(self, tests):
        self.tests = tests

    def __reduce__(self):
        import collections
        return collections.OrderedDict, (), None, None, iter(self.tests.items())


def _suite(fakes, tests) -> bytes:
    suite = fakes.suite(tests=OrderedTests(tests), info=None, format_example_fn=None,
                        print_fn=None, test_ranges={})
    return pickle.dumps(suite, protocol=3)


def _fields(name, capability, data, labels, expect, description=""):
    return dict(data=data, expect=expect, labels=labels, meta=None, agg_fn="all",
                templates=None, print_first=False, run_idxs=None, name=name,
                description=description, capability=capability)


def test_a_checklist_shaped_suite_converts_to_the_hand_written_lines(fakes, tmp_path):
    t = fakes.types
    tests = {
        "single words": t.MFT(**_fields("single words", "Vocabulary", ["good", "awful"],
                                        [2, 0], fakes.eq(), "one word")),
        "negations": t.MFT(**_fields("negations", "Negation",
                                     [fakes.numpy_text("not good"), fakes.numpy_text("no")], 0,
                                     fakes.eq())),
        "typos": t.INV(**_fields("typos", "Robustness", [["a b", "ab"], ["c", "c.", "c!"]],
                                 None, fakes.inv(0.1))),
        "intensity": t.DIR(**_fields("intensity", "Vocabulary", [["ok", "very ok"]], None,
                                     fakes.monotonic(2, False, 0.25))),
    }
    path = tmp_path / "suite.pkl"
    path.write_bytes(_suite(fakes, tests))
    with tarfile.open(tmp_path / "suite.tar.gz", "w:gz") as tar:
        tar.add(path, arcname="sentiment_suite.pkl")
    expected = [
        {"name": "single words", "capability": "Vocabulary", "type": "MFT",
         "description": "one word", "classes": ["negative", "neutral", "positive"],
         "expectation": {"kind": "label"}, "expectation_source": "pickle",
         "cases": ["good", "awful"], "labels": [2, 0]},
        {"name": "negations", "capability": "Negation", "type": "MFT", "description": "",
         "classes": ["negative", "neutral", "positive"], "expectation": {"kind": "label"},
         "expectation_source": "pickle", "cases": ["not good", "no"], "labels": 0},
        {"name": "typos", "capability": "Robustness", "type": "INV", "description": "",
         "classes": ["negative", "neutral", "positive"],
         "expectation": {"kind": "inv", "tolerance": 0.1}, "expectation_source": "pickle",
         "cases": [["a b", "ab"], ["c", "c.", "c!"]], "labels": None},
        {"name": "intensity", "capability": "Vocabulary", "type": "DIR", "description": "",
         "classes": ["negative", "neutral", "positive"],
         "expectation": {"kind": "monotonic", "label": 2, "increasing": False,
                         "tolerance": 0.25},
         "expectation_source": "pickle", "cases": [["ok", "very ok"]], "labels": None}]
    for given in (path, tmp_path / "suite.tar.gz"):
        out = tmp_path / f"{given.name}.jsonl"
        cli.succeeded(cli.run_module("data_prep.checklist_suite", f"--input_file={given}",
                                     f"--output_file={out}"))
        with open(out, encoding="utf-8") as f:
            assert [json.loads(line) for line in f] == expected
    from official.robustness.suite import read_suite
    assert [test.name for test in read_suite(str(out))] == list(tests)


def _not_negative_lambda(fakes, constant):
    """`lambda x, pred, *args: pred != <constant>` as the suite's notebook compiled it
    (Python 3.7: LOAD_FAST 1, LOAD_CONST 1, COMPARE_OP !=, RETURN_VALUE)."""
    return fakes.wrapped(fakes.function(fakes.code(
        "<lambda>", [], filename="<ipython-input-57-ae0749e20d69>",
        bytecode=b"|\x01d\x01k\x03S\x00", consts=(None, constant))))


def test_notebook_code_is_used_only_when_the_table_knows_it_byte_for_byte(fakes, tmp_path):
    t, name = fakes.types, "simple negations: not negative"
    path = tmp_path / "suite.pkl"
    path.write_bytes(_suite(fakes, {name: t.MFT(**_fields(name, "Negation", ["not bad"], None,
                                                          _not_negative_lambda(fakes, 0)))}))
    (test,) = checklist_suite.convert(str(path), ["negative", "neutral", "positive"])
    assert test["expectation"] == {"kind": "allowed", "allowed": [1, 2]}
    assert test["expectation_source"] == "table"

    # The same name with other code (pred != 1): the table's reading does not apply.
    path.write_bytes(_suite(fakes, {name: t.MFT(**_fields(name, "Negation", ["not bad"], None,
                                                          _not_negative_lambda(fakes, 1)))}))
    fingerprint = checklist_suite.NOTEBOOK_EXPECTATIONS[name][0]
    with pytest.raises(checklist_suite.SuiteError, match=(
            r"test 'simple negations: not negative': its expectation is a function written in "
            rf"the suite's notebook, and the test has code [0-9a-f]{{16}}, not the "
            rf"{fingerprint} the table was read from")):
        checklist_suite.convert(str(path), ["negative", "neutral", "positive"])

    path.write_bytes(_suite(fakes, {"my test": t.MFT(**_fields(
        "my test", "X", ["a"], None, _not_negative_lambda(fakes, 0)))}))
    with pytest.raises(checklist_suite.SuiteError, match="the test is not in the table"):
        checklist_suite.convert(str(path), ["negative", "neutral", "positive"])


def test_the_table_holds_what_the_notebook_bytecode_says():
    """The entries read by hand from the released suite's bytecode (see the module's table
    comment), in the suite format's terms."""
    table = {name: entry for name, (_, entry) in checklist_suite.NOTEBOOK_EXPECTATIONS.items()}
    assert table["simple negations: not negative"] == {"kind": "allowed", "allowed": [1, 2]}
    assert table["Q & A: no"] == {"kind": "label", "allowed": {"1": [1, 2]}}
    assert table["add positive phrases"] == {"kind": "shift", "up": 2, "down": 0,
                                             "increasing": True, "tolerance": 0.1}
    assert table["add negative phrases"]["increasing"] is False
    assert table["reducers"] == {"skip_original": [1]}
    assert len(table) == 9


# ---- Planted pickles: refused or inert, and nothing runs.

PAYLOAD = """
import os

def run(marker):
    open(marker, "w").write("called")

if os.environ.get("PLANTED_MARKER"):
    open(os.environ["PLANTED_MARKER"], "w").write("imported")
"""


class CallsOsSystem:
    def __init__(self, command):
        self.command = command

    def __reduce__(self):
        return os.system, (self.command,)


class CallsPayload:
    def __init__(self, run, marker):
        self.run, self.marker = run, marker

    def __reduce__(self):
        return self.run, (self.marker,)


def test_planted_pickles_are_refused_and_nothing_runs(fakes, tmp_path, monkeypatch):
    (tmp_path / "planted_payload.py").write_text(PAYLOAD)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv("PLANTED_MARKER", raising=False)
    import planted_payload
    marker, touched = tmp_path / "marker.txt", tmp_path / "touched.txt"
    planted = {
        "system.pkl": (pickle.dumps(CallsOsSystem(f"touch {touched}"), protocol=3),
                       "holds a posix.system, not a CheckList TestSuite"),
        "payload.pkl": (pickle.dumps(CallsPayload(planted_payload.run, str(marker)), protocol=3),
                        "holds a planted_payload.run, not a CheckList TestSuite"),
        "inside.pkl": (_suite(fakes, {"t": fakes.types.MFT(**_fields(
            "t", "X", ["fine", CallsPayload(planted_payload.run, str(marker))], 1,
            fakes.eq()))}), "test 't': case 2 is not a text")}
    monkeypatch.delitem(sys.modules, "planted_payload")  # a load would have to import it
    env = dict(cli.ENV, PLANTED_MARKER=str(marker),
               PYTHONPATH=os.pathsep.join([str(tmp_path), cli.ENV["PYTHONPATH"]]))

    # The control: loaded as pickle.load would, the payload runs (imports and calls).
    (tmp_path / "control.pkl").write_bytes(planted["payload.pkl"][0])
    control = subprocess.run([sys.executable, "-c", "import pickle, sys; "
                              "pickle.load(open(sys.argv[1], 'rb'))",
                              str(tmp_path / "control.pkl")], env=env, cwd=cli.REPO,
                             capture_output=True, text=True)
    assert control.returncode == 0 and marker.read_text() == "called"
    marker.unlink()

    for name, (data, error) in planted.items():
        path = tmp_path / name
        path.write_bytes(data)
        out = tmp_path / f"{name}.jsonl"
        result = subprocess.run([sys.executable, "-m", "data_prep.checklist_suite",
                                 f"--input_file={path}", f"--output_file={out}"],
                                env=env, cwd=cli.REPO, capture_output=True, text=True)
        cli.refused(result, "checklist_suite:", f"{path}: ", error)
        assert not out.exists()
        with pytest.raises(checklist_suite.SuiteError, match=error):  # in this process too
            checklist_suite.convert(str(path), ["a", "b", "c"])
    assert not touched.exists() and not marker.exists()
    assert "planted_payload" not in sys.modules


class PersistentPickler(pickle.Pickler):
    def persistent_id(self, obj):
        return "outside" if obj == "secret" else None


def test_opcodes_that_reach_outside_the_unpickler_are_refused_before_unpickling(tmp_path):
    buffer = io.BytesIO()
    PersistentPickler(buffer, protocol=3).dump(["secret"])
    path = tmp_path / "persistent.pkl"
    path.write_bytes(buffer.getvalue())
    with pytest.raises(checklist_suite.SuiteError,
                       match=r"refused pickle opcode BINPERSID at byte \d+"):
        checklist_suite.convert(str(path), ["a", "b"])


@pytest.mark.parametrize("content, error", [
    (b"name\tlabel\nnot a pickle\n", "neither a tarball nor a pickle"),
    (pickle.dumps({"tests": []}, protocol=3), "holds a dict, not a CheckList TestSuite"),
    (b"\x80\x03]q\x00(K\x01", "not a readable pickle"),
    ("tarball", "a tarball with 0 .pkl files, not one CheckList suite"),
])
def test_files_that_are_not_checklist_suites_are_one_line_and_nothing_is_written(
        tmp_path, content, error):
    path = tmp_path / "input"
    if content == "tarball":
        (tmp_path / "README").write_text("no suite here")
        with tarfile.open(path, "w:gz") as tar:
            tar.add(tmp_path / "README", arcname="README")
    else:
        path.write_bytes(content)
    out = tmp_path / "out" / "suite.jsonl"
    cli.refused(cli.run_module("data_prep.checklist_suite", f"--input_file={path}",
                               f"--output_file={out}"), f"checklist_suite: {path}: {error}")
    assert not (tmp_path / "out").exists()
