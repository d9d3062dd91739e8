"""Docstring examples that claim to run, run: every `>>>` line under official/ and data_prep/ is a
doctest, and no docstring there shows an "Example" block without one.

The files are read with `ast`, not imported, to find their docstrings; only a module holding
`>>>` lines is imported (by dotted name) and its doctests run, from the repo root (where the
examples' data/ paths resolve), with ELLIPSIS and NORMALIZE_WHITESPACE. An entry point that
defines absl flags when imported (data_prep/create_pretraining_data.py, ...) is never imported:
importing it twice, or beside another, fails on the duplicate flags. What it shows is a command
line, under "Usage:", and a `>>>` line in it is an error.

An example that cannot run in a doctest (a training run takes seconds to trace) is headed
"Usage:" rather than "Example:", so that a reader knows which of the two they are reading.
"""

from __future__ import annotations

import ast
import dataclasses
import doctest
import importlib
import io
import os
import re
import tempfile

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGES = ("official", "data_prep")
OPTIONS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE

# "Example:", "Examples:" or "Example (what it shows ...):" at the start of a docstring line; not
# "Example   { 1: Features ... }" (a wire format) nor "for example".
_EXAMPLE_HEADING = re.compile(r"^(\s*)Examples?(:| \()")


@dataclasses.dataclass(frozen=True)
class Docstring:
    name: str  # the module's dotted name, then the class / function path
    line: int  # of the docstring's first line in its file
    text: str


@dataclasses.dataclass(frozen=True)
class SourceModule:
    name: str  # dotted, "official.text.tokenizer"
    path: str  # relative to the repo
    docstrings: tuple[Docstring, ...]
    defines_flags: bool  # calls flags.DEFINE_* when imported: an entry point, never imported

    @property
    def has_doctests(self) -> bool:
        return any(">>>" in d.text for d in self.docstrings)


def _docstrings(tree: ast.Module, module_name: str) -> list[Docstring]:
    """The docstrings of the module and of every class and function in it, nested ones too."""
    found = []
    stack: list[tuple[ast.AST, str]] = [(tree, module_name)]
    while stack:
        node, name = stack.pop()
        text = ast.get_docstring(node, clean=False)
        if text is not None:
            found.append(Docstring(name, node.body[0].lineno, text))
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                stack.append((child, f"{name}.{child.name}"))
    return sorted(found, key=lambda d: d.line)


def _defines_flags_at_import(tree: ast.Module) -> bool:
    """Whether code run at import (not inside a function) calls flags.DEFINE_* / DEFINE_*."""
    stack: list[ast.AST] = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        if isinstance(node, ast.Call):
            func = node.func
            called = (func.attr if isinstance(func, ast.Attribute)
                      else func.id if isinstance(func, ast.Name) else "")
            if called.startswith("DEFINE"):
                return True
        stack.extend(ast.iter_child_nodes(node))
    return False


def _source_modules() -> list[SourceModule]:
    modules = []
    for package in PACKAGES:
        for folder, dirs, files in os.walk(os.path.join(REPO, package)):
            dirs[:] = sorted(d for d in dirs if not d.startswith((".", "__")))
            for file in sorted(f for f in files if f.endswith(".py")):
                path = os.path.relpath(os.path.join(folder, file), REPO)
                parts = path[:-len(".py")].split(os.sep)
                if parts[-1] == "__init__":
                    parts.pop()
                name = ".".join(parts)
                with open(os.path.join(REPO, path), encoding="utf-8") as f:
                    tree = ast.parse(f.read(), path)
                modules.append(SourceModule(name, path, tuple(_docstrings(tree, name)),
                                            _defines_flags_at_import(tree)))
    return modules


SOURCE_MODULES = _source_modules()
DOCTEST_MODULES = [m for m in SOURCE_MODULES if m.has_doctests and not m.defines_flags]


def example_blocks_without_doctest(text: str) -> list[int]:
    """The 0-based lines of `text` that head an "Example" block holding no `>>>` line.

    The block is what follows the heading (and the heading's own continuation lines, at its
    indent) while lines are blank or indented deeper than the heading.
    """
    lines = text.splitlines()
    bare = []
    for i, line in enumerate(lines):
        heading = _EXAMPLE_HEADING.match(line)
        if not heading:
            continue
        indent = len(heading.group(1))
        j = i + 1
        while j < len(lines) and lines[j].strip() and _indent(lines[j]) == indent:
            j += 1
        block = []
        while j < len(lines) and (not lines[j].strip() or _indent(lines[j]) > indent):
            block.append(lines[j])
            j += 1
        if not any(b.lstrip().startswith(">>>") for b in block):
            bare.append(i)
    return bare


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def test_the_packages_have_doctests_and_entry_points_are_found():
    """The walk found the modules the other tests rely on (a wrong root would find none)."""
    names = {m.name for m in DOCTEST_MODULES}
    assert {"official.records", "official.text.tokenizer", "data_prep.squad"} <= names
    flag_modules = {m.name for m in SOURCE_MODULES if m.defines_flags}
    assert "data_prep.create_pretraining_data" in flag_modules
    assert "data_prep.squad" not in flag_modules


def test_every_example_heading_has_a_doctest():
    bare = [f"{m.path}:{d.line + i}: {d.name}: an Example block without a `>>>` line (make it "
            f"a doctest, or head it 'Usage:' if it cannot run)"
            for m in SOURCE_MODULES for d in m.docstrings
            for i in example_blocks_without_doctest(d.text)]
    assert not bare, "\n".join(bare)


def test_no_entry_point_holds_a_doctest():
    """A module that defines flags at import is never imported here, so its `>>>` lines would
    never run: the example belongs in the library module the entry point calls."""
    holding = [m.path for m in SOURCE_MODULES if m.defines_flags and m.has_doctests]
    assert not holding, f"`>>>` lines in entry points, which cannot be imported: {holding}"


def test_the_heading_rule_reads_blocks_as_the_docstrings_write_them():
    text = ("Summary.\n\nExample (a heading\nthat goes on):\n    >>> 1 + 1\n    2\n\n"
            "    More words.\n\nExample:\n    plain_code()\n\n"
            "    Example   { 1: Features }\n  Usage:\n    python -m tool\n")
    assert example_blocks_without_doctest(text) == [9]


@pytest.mark.parametrize("module", DOCTEST_MODULES, ids=lambda m: m.name)
def test_docstring_examples_run(module: SourceModule, monkeypatch, tmp_path):
    monkeypatch.chdir(REPO)
    # The examples' tempfile.mkdtemp() folders go in the test's own folder, not left in /tmp.
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    imported = importlib.import_module(module.name)
    tests = [t for t in doctest.DocTestFinder().find(imported) if t.examples]
    assert tests, f"{module.path}: `>>>` lines that doctest does not find (not in a docstring " \
                  "of the module or of a class or function defined in it?)"
    report = io.StringIO()
    runner = doctest.DocTestRunner(optionflags=OPTIONS)
    failed = sum(runner.run(test, out=report.write).failed for test in tests)
    assert not failed, f"{module.path}:\n{report.getvalue()}"
