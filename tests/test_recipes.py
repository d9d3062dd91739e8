"""Tests for run_scripts/recipes/: the real-scale shell recipes are not run here, but each parses
as bash and passes only flags that its entry points define, so they cannot drift from the code."""

import glob
import json
import os
import re
import subprocess
import sys

import pytest

from tests.cli import ENV, REPO

RECIPES = sorted(glob.glob(os.path.join(REPO, "run_scripts", "recipes", "*.sh")))

# Lists the flags each module defines, importing them one after another in one process (each
# module's flags are removed before the next is imported: several define the same names).
_LIST_FLAGS = """
import importlib, json, sys
import tensorflow
from absl import flags
base = set(flags.FLAGS)
defined = {}
for module in sys.argv[1:]:
    importlib.import_module(module)
    defined[module] = sorted(set(flags.FLAGS) - base)
    for name in defined[module]:
        delattr(flags.FLAGS, name)
print(json.dumps(defined))
"""


def commands(path: str) -> list[tuple[str, list[str]]]:
    """(module, flag names) of every `python -m module --flag...` in a script (in its comments
    too), continuation lines joined."""
    with open(path, encoding="utf-8") as f:
        text = re.sub(r"\\\n", " ", f.read())
    found = []
    for line in text.splitlines():
        match = re.search(r"python -m (\S+)(.*)", line)
        if match:
            flags = re.findall(r"(?:^|\s)--([a-z_0-9]+)", match.group(2))
            found.append((match.group(1), flags))
    return found


def test_there_are_recipes():
    assert {os.path.basename(p) for p in RECIPES} >= {
        "pretrain_bert_base_8gpu.sh", "pretrain_multi_host.sh", "pretrain_tpu.sh",
        "finetune_glue_squad.sh"}


@pytest.mark.parametrize("path", RECIPES, ids=os.path.basename)
def test_recipe_is_valid_bash(path):
    result = subprocess.run(["bash", "-n", path], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_every_flag_of_every_recipe_exists():
    used = {path: commands(path) for path in RECIPES}
    modules = sorted({module for found in used.values() for module, _ in found})
    assert "run_scripts.run_pretraining" in modules
    listed = subprocess.run([sys.executable, "-c", _LIST_FLAGS, *modules], cwd=REPO, env=ENV,
                            capture_output=True, text=True)
    assert listed.returncode == 0, listed.stderr[-2000:]
    defined = json.loads(listed.stdout.strip().splitlines()[-1])
    unknown = [(os.path.basename(path), module, flag)
               for path, found in used.items() for module, flags in found for flag in flags
               if flag not in defined[module]]
    assert unknown == []
