"""The import rule of WORKSPACE.md, checked by parsing every .py file's imports with `ast`.

Data flows one way (text files -> data_prep -> records -> official -> run_scripts), and imports
point the same way:

- `official/` (the library) imports none of data_prep, run_scripts, demo, bench, tests;
- `data_prep/` imports from official only the modules in DATA_PREP_MAY_IMPORT: those light enough
  for the generator's TensorFlow-free coordinator, the formats and featurisation rules both sides
  read, and the fine-tuning data interface;
- `run_scripts/` (the entry points) import anything but demo, bench and tests.

Inside `official/` the rooms stand in one order (OFFICIAL_ROOMS, lowest first): a module imports
from its own room and the rooms below it, never from one above, so no import circle can form
between rooms and a shared room (the training run, the export) cannot come to know its
plug-ins (an adaptation method, a task's serving) by name.

Every import counts, including those inside functions (the lazy imports that keep TensorFlow out
of a process). A breach is reported as `path:line: the import statement (the rule)`.
"""

from __future__ import annotations

import ast
import os

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The official modules data_prep may import, and why each. A module listed covers its submodules.
DATA_PREP_MAY_IMPORT = (
    "official.text",                 # the tokenizer (plain Python in the workers), vocab files
    "official.atomic_files",         # files that appear only when complete
    "official.output_paths",         # output places checked before any work
    "official.console",              # what a user reads on stderr
    "official.command_line",         # how every command ends (`main`), before TensorFlow loads
    "official.parent_death",         # a worker dies with its coordinator
    "official.pretraining_shards",   # the generator's folder: shard names, summary.json
    "official.pretraining_records",  # the pretraining TFRecord format the input pipeline reads
    "official.settings_parsing",     # settings given as text (--masking_mix), one-line errors
    "official.tasks.ner_metrics",    # conlleval's tag schemes (IOB1 -> IOB2), one rule for both
    "official.features",             # the featurisation rules the serving graphs follow too
    "official.tasks.base",           # the fine-tuning data interface (TaskData, Records)
    "official.tasks.squad_settings",  # the settings that shape SQuAD's features
    "official.tasks.long_doc_settings",  # how a classifier's records read long documents
    "official.tasks.squad",          # SquadSplit, and the gold answers an evaluation needs
    "official.robustness.candidates",  # synonym and antonym pair files, read one way (numpy only)
    "official.robustness.text_words",  # an attack's words: texts cut to a word count by them
)

# The rooms of official/, lowest first, and why each stands where it does. A room covers its
# submodules; a module outside every room (a new one) is a breach until it is placed here.
OFFICIAL_ROOMS = (
    # No TensorFlow: what every other room and data_prep's light processes use.
    ("official.configs", "official.console", "official.command_line", "official.atomic_files",
     "official.output_paths", "official.output_lock", "official.parent_death",
     "official.records", "official.settings_parsing", "official.sentence_settings",
     "official.pretraining_shards", "official.pretraining_records",
     "official.flag_rows", "official.adaptation", "official.__init__"),
    ("official.text",),       # the one tokenizer
    ("official.features",),   # featurisation rules shared by records and serving graphs
    ("official.modeling",),   # layers and models
    ("official.checkpoints",),  # formats, all meeting in the original names
    ("official.tasks",),      # what each fine-tuning task is: model, loss, metrics, files
    ("official.peft",),       # parameter-efficient methods: one seam, one table
    ("official.distillation",),  # a teacher: may be a PEFT run, so above peft
    ("official.adaptation_kinds",),  # the table of adaptation kinds: above every kind's row
    ("official.training",),   # the generic runs: ask tasks and adaptations through protocols
    ("official.export",),     # serving: maps a task's serving spec to its builder
    ("official.retrieval", "official.embeddings", "official.probing", "official.lm_scoring",
     "official.robustness", "official.ablation",  # read checkpoints, exports; run studies
     "official.api"),  # the Python API over all of them
)


def official_room(module: str) -> int | None:
    """The rank of the room of an official module (its longest prefix in OFFICIAL_ROOMS)."""
    for rank, rooms in enumerate(OFFICIAL_ROOMS):
        if any(module == room or module.startswith(room + ".") for room in rooms):
            return rank
    return None


def room_breaches(repo: str = REPO) -> list[str]:
    """`path:line: statement (why)` for every import inside official/ that points up the rooms'
    order, and every official module that is in no room."""
    found = []
    for path in python_files("official", repo):
        where = os.path.relpath(path, repo)
        module = where[:-3].replace(os.sep, ".")
        rank = official_room(module)
        if rank is None:
            found.append(f"{where}: in no room of OFFICIAL_ROOMS (place it in the order)")
            continue
        for line, imported, statement in imported_modules(path, repo):
            target = official_room(imported) if imported.startswith("official.") else None
            if target is not None and target > rank:
                found.append(f"{where}:{line}: {statement} ({imported}'s room stands above "
                             f"{module}'s: {OFFICIAL_ROOMS[target][0]} over "
                             f"{OFFICIAL_ROOMS[rank][0]})")
    return found


# Top-level folders that a folder's code must never import.
NEVER_IMPORTED_BY = {
    "official": ("data_prep", "run_scripts", "demo", "bench", "tests"),
    "data_prep": ("run_scripts", "demo", "bench", "tests"),
    "run_scripts": ("demo", "bench", "tests"),
}


def imported_modules(path: str, repo: str = REPO,
                     run_time_only: bool = False) -> list[tuple[int, str, str]]:
    """(line, module, statement) for every import in the file at `path` (`run_time_only`: not
    those under `if TYPE_CHECKING:`, which run at no time).

    `from package import name` counts as importing `package.name` when that is a module or
    package of the repo (`from official import console` imports official.console), else as
    importing `package`. Relative imports are resolved against the file's package.
    """
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    package = os.path.relpath(os.path.dirname(path), repo).replace(os.sep, ".")
    for_type_checkers = {id(inner) for node in ast.walk(tree)
                         if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
                         for inner in ast.walk(node)} if run_time_only else set()
    found = []
    for node in ast.walk(tree):
        if id(node) in for_type_checkers:
            continue
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name, ast.unparse(node)) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([module] if module else []))
            for alias in node.names:
                child = f"{module}.{alias.name}"
                child_path = os.path.join(repo, *child.split("."))
                is_module = os.path.isfile(child_path + ".py") or os.path.isdir(child_path)
                found.append((node.lineno, child if is_module else module, ast.unparse(node)))
    return sorted(found)


def python_files(folder: str, repo: str = REPO) -> list[str]:
    """Every .py file under `folder` of the repo, sorted."""
    paths = []
    for directory, _, names in os.walk(os.path.join(repo, folder)):
        paths += [os.path.join(directory, name) for name in names if name.endswith(".py")]
    return sorted(paths)


def breaches(folder: str, repo: str = REPO) -> list[str]:
    """`path:line: statement (why)` for every import of `folder`'s files that breaks the rule."""
    forbidden = NEVER_IMPORTED_BY[folder]
    found = []
    for path in python_files(folder, repo):
        where = os.path.relpath(path, repo)
        for line, module, statement in imported_modules(path, repo):
            top = module.split(".")[0]
            if top in forbidden:
                found.append(f"{where}:{line}: {statement} ({folder}/ never imports {top}/)")
            elif (folder == "data_prep" and top == "official"
                  and not any(module == allowed or module.startswith(allowed + ".")
                              for allowed in DATA_PREP_MAY_IMPORT)):
                found.append(f"{where}:{line}: {statement} ({module} is not among the official "
                             f"modules data_prep may import: {', '.join(DATA_PREP_MAY_IMPORT)})")
    return found


def import_circles(repo: str = REPO) -> list[list[str]]:
    """Every circle of run-time imports among the modules of official/ (function-level imports
    included), as its modules sorted: a circle inside a room, which the rooms' order cannot see,
    is a module that can only be imported after another that needs it."""
    modules = {}
    for path in python_files("official", repo):
        module = os.path.relpath(path, repo)[:-3].replace(os.sep, ".")
        modules[module.removesuffix(".__init__")] = path
    imports = {module: sorted({imported for _, imported, _ in
                               imported_modules(path, repo, run_time_only=True)
                               if imported in modules and imported != module})
               for module, path in modules.items()}
    # Tarjan's strongly connected components: a component of more than one module is a circle.
    order: dict[str, int] = {}
    lowest: dict[str, int] = {}
    stack: list[str] = []
    circles = []

    def visit(module: str) -> None:
        order[module] = lowest[module] = len(order)
        stack.append(module)
        for imported in imports[module]:
            if imported not in order:
                visit(imported)
                lowest[module] = min(lowest[module], lowest[imported])
            elif imported in stack:
                lowest[module] = min(lowest[module], order[imported])
        if lowest[module] == order[module]:
            component = stack[stack.index(module):]
            del stack[stack.index(module):]
            if len(component) > 1:
                circles.append(sorted(component))

    for module in sorted(imports):
        if module not in order:
            visit(module)
    return sorted(circles)


def test_no_modules_of_official_import_each_other_in_a_circle():
    circles = import_circles()
    assert not circles, "\n".join(" -> ".join(circle) for circle in circles)


def test_a_circle_through_a_function_is_found_and_one_for_type_checkers_is_not(tmp_path):
    (tmp_path / "official" / "checkpoints").mkdir(parents=True)
    files = {"official/__init__.py": "",
             "official/checkpoints/__init__.py": "from official.checkpoints import reading\n",
             "official/checkpoints/reading.py": "def f():\n    from official.checkpoints "
                                                "import converter\n",
             "official/checkpoints/converter.py": "from official import checkpoints\n"
                                                  "from official.checkpoints import tf1\n",
             "official/checkpoints/hf.py": "from typing import TYPE_CHECKING\n"
                                           "if TYPE_CHECKING:\n"
                                           "    from official.checkpoints import converter\n",
             "official/checkpoints/tf1.py": "from official.checkpoints import hf\n"}
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    # tf1 -> hf -> converter -> tf1 would be one too, but hf's import runs for type checkers only.
    assert import_circles(str(tmp_path)) == [
        ["official.checkpoints", "official.checkpoints.converter",
         "official.checkpoints.reading"]]


@pytest.mark.parametrize("folder", sorted(NEVER_IMPORTED_BY))
def test_imports_point_one_way(folder):
    found = breaches(folder)
    assert not found, "\n".join(found)


def test_the_rooms_of_official_import_downwards_only():
    found = room_breaches()
    assert not found, "\n".join(found)


def test_an_upward_import_between_rooms_is_a_breach(tmp_path):
    (tmp_path / "official" / "training").mkdir(parents=True)
    (tmp_path / "official" / "peft").mkdir()
    for name in ("official/__init__.py", "official/training/__init__.py",
                 "official/peft/__init__.py", "official/peft/methods.py"):
        (tmp_path / name).write_text("")
    (tmp_path / "official" / "training" / "run.py").write_text(
        "from official.peft import methods\n")
    (tmp_path / "official" / "peft" / "adaptation.py").write_text(
        "def f():\n    from official.training import run\n")
    (tmp_path / "official" / "stray.py").write_text("")
    assert room_breaches(str(tmp_path)) == [
        "official/peft/adaptation.py:2: from official.training import run (official.training."
        "run's room stands above official.peft.adaptation's: official.training over "
        "official.peft)",
        "official/stray.py: in no room of OFFICIAL_ROOMS (place it in the order)"]


def test_a_breach_names_the_file_line_and_import(tmp_path):
    (tmp_path / "official" / "training").mkdir(parents=True)
    (tmp_path / "official" / "__init__.py").write_text("")
    (tmp_path / "official" / "console.py").write_text("")
    (tmp_path / "official" / "training" / "__init__.py").write_text("")
    (tmp_path / "official" / "training" / "bad.py").write_text(
        '"""A library module that reads flags."""\n\n\n'
        'def f():\n'
        '    from run_scripts import common_flags\n')
    (tmp_path / "data_prep").mkdir()
    (tmp_path / "data_prep" / "maker.py").write_text(
        "from official import console\nimport official.training.bad\n")
    assert breaches("official", str(tmp_path)) == [
        "official/training/bad.py:5: from run_scripts import common_flags "
        "(official/ never imports run_scripts/)"]
    found = breaches("data_prep", str(tmp_path))
    assert len(found) == 1 and found[0].startswith(
        "data_prep/maker.py:2: import official.training.bad (official.training.bad is not among "
        "the official modules data_prep may import: official.text, ")


def test_relative_and_package_imports_are_resolved(tmp_path):
    (tmp_path / "official" / "text").mkdir(parents=True)
    (tmp_path / "official" / "text" / "vocab.py").write_text("")
    (tmp_path / "official" / "text" / "tokenizer.py").write_text(
        "from . import vocab\nfrom .vocab import load_vocab\nfrom official import text\n")
    assert [module for _, module, _ in imported_modules(
        str(tmp_path / "official" / "text" / "tokenizer.py"), str(tmp_path))] == [
        "official.text.vocab", "official.text.vocab", "official.text"]
