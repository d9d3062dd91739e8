"""The test suite runs on a fresh clone: no test reads the project's shared data folder.

Beside the checkout sits `../shared` (the full data sets: pretraining text, GLUE, SQuAD, ...),
which a clone does not have. Benches and the data makers read it; a test that needs real data
reads a small sample shipped in `data/` or `tests/data/` (their READMEs give each one's source).

A Python file under tests/ names the folder when
- a line holds the name of the folder in quotes, or a quote and then a path through
  `../shared` (the pattern of the before-stop hook of the project: comments count too), or
- a string in its code (not a docstring) is a path with a component `shared`: `../../shared`,
  `/work/shared/data`, `shared/data` joined to the repository's parent, an f-string or an
  implicit concatenation that makes one.
The word in prose (`one shared cat`, a docstring naming `../shared/data`) is no path.
"""

from __future__ import annotations

import ast
import os
import re

import pytest

TESTS = os.path.dirname(os.path.abspath(__file__))
FOLDER = "sha" + "red"  # spelled in two parts, so that this file does not name it
# Line by line, as the hook greps: the name in quotes, or a quote and then a path through it.
HOOK_PATTERN = re.compile(r"""['"]%s['"]|['"][^'"]*\.\.[/\\]%s""" % (FOLDER, FOLDER))


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the Constant nodes that are docstrings (module, class, function)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            first = node.body[0] if node.body else None
            if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                    and isinstance(first.value.value, str)):
                found.add(id(first.value))
    return found


def places_naming_the_folder(source: str) -> list[str]:
    """`line N: text` for each place in a Python file's source that names the shared folder."""
    lines = source.splitlines()
    found = {number for number, line in enumerate(lines, 1) if HOOK_PATTERN.search(line)}
    tree = ast.parse(source)
    docstrings = _docstrings(tree)
    for node in ast.walk(tree):
        if (isinstance(node, ast.Constant) and isinstance(node.value, str)
                and id(node) not in docstrings
                and FOLDER in re.split(r"[/\\]", node.value)):
            found.add(node.lineno)
    return [f"line {number}: {lines[number - 1].strip()}" for number in sorted(found)]


def python_files(root: str) -> list[str]:
    return sorted(os.path.join(folder, name) for folder, dirs, names in os.walk(root)
                  if "__pycache__" not in folder for name in names if name.endswith(".py"))


def test_no_test_names_the_shared_folder():
    files = python_files(TESTS)
    assert os.path.join(TESTS, "test_squad_data.py") in files
    offending = {}
    for path in files:
        with open(path, encoding="utf-8") as f:
            places = places_naming_the_folder(f.read())
        if places:
            offending[os.path.relpath(path, TESTS)] = places
    assert not offending, (
        f"tests read ../{FOLDER}, which a fresh clone does not have (ship a small sample in "
        f"data/ instead): {offending}")


# "@" stands for the folder's name in these snippets.
@pytest.mark.parametrize("snippet", [
    'DEV = os.path.join(HERE, "..", "..", "@", "data", "squad", "v1.1", "dev-v1.1.json")',
    "CORPUS = '../@/data/pretraining_text'",
    "ROOT = pathlib.Path(__file__).parents[2] / '@' / 'data'",
    'path = f"{HERE}/../../@/data/glue"',
    # Neither of these is the hook's pattern: an absolute path, a path inside one string.
    'open("/work/@/data/squad/v1.1/dev-v1.1.json")',
    'DATA = os.path.join(HERE, "..", "..", "@/data")',
    # Implicit concatenation makes one string.
    'DATA = "../sh" "ared/data"',
    # In a comment, quoted: the hook's pattern.
    'x = 1  # was os.path.join(HERE, "..", "@")',
])
def test_the_check_finds_a_path_to_the_shared_folder(snippet):
    snippet = snippet.replace("@", FOLDER)
    assert places_naming_the_folder(f"import os\n\n{snippet}\n") == [f"line 3: {snippet}"]


@pytest.mark.parametrize("snippet", [
    '("cat cat cat", "cat dog", 0.4),  # bags: one @ cat; P = 1/3, R = 1/2',
    'assert message == "the vocab is @ by both models"',
    '"""What a test compares.\n\nThe comparison with every corpus in ../@/data is a bench.\n"""',
    "@_weights = True",
    'DEV = os.path.join(HERE, "..", "data", "squad", "dev-v1.1-sample.json")',
])
def test_the_word_in_prose_is_no_path(snippet):
    assert places_naming_the_folder(snippet.replace("@", FOLDER) + "\n") == []
