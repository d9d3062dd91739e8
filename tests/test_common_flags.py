"""Tests for run_scripts/common_flags.py's adaptation kinds: a kind registered in the table of
official/adaptation_kinds.py gets its flags on the entry points, its settings read and checked
and its resolve called, while common_flags names no kind. The kind here is a fake registered
for the test alone; the real kinds' flags are checked against their command lines in
tests/test_startup.py, tests/test_distillation_runs.py and tests/test_bad_inputs_finetuning.py.
"""

from __future__ import annotations

import ast
import dataclasses
import os

import pytest
from absl import flags

from official.adaptation import Adaptation, AdaptationKind
from official.adaptation_kinds import KINDS
from official.flag_rows import Flag
from run_scripts import common_flags
from tests.test_import_rule import REPO, imported_modules


@dataclasses.dataclass(frozen=True)
class FakeSettings:
    size: int
    source: str | None


class FakeAdaptation(Adaptation):
    def __init__(self, settings: FakeSettings):
        self.settings = settings


def fake_settings(values, pretraining):
    """--fake_size switches the fake kind on; --fake_source is its setting."""
    if not values["fake_size"]:
        if values["fake_source"] is not None:
            raise ValueError("--fake_source needs --fake_size")
        return None
    return FakeSettings(values["fake_size"], values["fake_source"])


class Calls(list):
    """What the fake kind's row was asked, in order."""

    def check(self, settings, options, others):
        self.append(("check", settings, options, others))
        if options == "too small":
            raise ValueError(f"--fake_size={settings.size} does not fit these options")

    def resolve(self, settings, options, task):
        self.append(("resolve", settings, options, task))
        if settings is None:
            return options, None
        return f"{options}, resolved", FakeAdaptation(settings)


FAKE_FLAGS = (Flag("fake_size", int, 0, "The fake kind's size: on when positive."),
              Flag("fake_source", str, None, "A checkpoint the fake kind reads."))


@pytest.fixture
def fake_kind():
    """The table holding the fake kind alone (the real kinds' flags may be defined already in
    this process); its flags removed and the table restored, in its order, afterwards."""
    calls = Calls()
    kind = AdaptationKind(name="fake", flags=FAKE_FLAGS, pretraining_flags=None,
                          settings=fake_settings, resolve=calls.resolve, check=calls.check,
                          checkpoints=lambda settings: (settings.source,))
    table = dict(KINDS)
    KINDS.clear()
    KINDS["fake"] = kind
    try:
        yield calls
    finally:
        KINDS.clear()
        KINDS.update(table)
        for flag in FAKE_FLAGS:
            if flag.name in flags.FLAGS:
                delattr(flags.FLAGS, flag.name)


def given(**values: str) -> None:
    """The fake flags as a command line gives them (each parsed by its own flag's parser)."""
    for flag in FAKE_FLAGS:
        flags.FLAGS[flag.name].unparse()
    for name, text in values.items():
        flags.FLAGS[name].parse(text)


def test_a_registered_kind_gets_its_flags_and_is_resolved_without_common_flags_naming_it(
        fake_kind, tmp_path):
    common_flags.define_adaptation_flags(pretraining=False)
    size = flags.FLAGS["fake_size"]
    assert (size.flag_type(), size.default, size.help) == (
        "int", 0, "The fake kind's size: on when positive.")
    assert flags.FLAGS["fake_source"].flag_type() == "string"

    given(fake_size="3", fake_source=str(tmp_path))
    settings = common_flags.adaptation_settings("the options")
    assert settings == {"fake": FakeSettings(3, str(tmp_path))}
    assert fake_kind == [("check", FakeSettings(3, str(tmp_path)), "the options", {})]
    common_flags.check_adaptation_checkpoints(settings)  # the folder is there

    options, resolved = common_flags.adaptations("the options", "the task", settings)
    assert options == "the options, resolved"
    assert [type(a) for a in resolved] == [FakeAdaptation]
    assert resolved[0].settings == FakeSettings(3, str(tmp_path))
    assert fake_kind[-1] == ("resolve", FakeSettings(3, str(tmp_path)), "the options",
                             "the task")


def test_a_kind_not_asked_for_is_still_resolved_and_adds_no_adaptation(fake_kind):
    common_flags.define_adaptation_flags(pretraining=False)
    given()
    settings = common_flags.adaptation_settings("the options")
    assert settings == {"fake": None}
    common_flags.check_adaptation_checkpoints(settings)
    assert common_flags.adaptations("the options", "the task", settings) == ("the options", [])
    assert fake_kind == [("resolve", None, "the options", "the task")]  # no check


def test_a_kind_without_pretraining_flags_is_not_on_run_pretraining(fake_kind):
    assert common_flags.adaptation_kinds(pretraining=True) == []
    common_flags.define_adaptation_flags(pretraining=True)
    assert "fake_size" not in flags.FLAGS
    assert common_flags.adaptation_settings("the options", pretraining=True) == {}


def test_a_kinds_refusals_come_through(fake_kind, tmp_path):
    common_flags.define_adaptation_flags(pretraining=False)
    given(fake_source="x")
    with pytest.raises(ValueError, match="^--fake_source needs --fake_size$"):
        common_flags.adaptation_settings("the options")
    given(fake_size="2", fake_source=str(tmp_path))
    with pytest.raises(ValueError, match="^--fake_size=2 does not fit these options$"):
        common_flags.adaptation_settings("too small")
    missing = str(tmp_path / "nowhere")
    given(fake_size="2", fake_source=missing)
    with pytest.raises(ValueError, match=f"^{missing}: no checkpoint there"):
        common_flags.check_adaptation_checkpoints(common_flags.adaptation_settings("fine"))


def test_common_flags_names_no_kind():
    """No import of a kind's package, and no kind's name as a string, in common_flags."""
    path = os.path.join(REPO, "run_scripts", "common_flags.py")
    imported = [module for _, module, _ in imported_modules(path)]
    assert not [m for m in imported
                if m.startswith(("official.peft", "official.distillation"))], imported
    with open(path, encoding="utf-8") as f:
        strings = {node.value for node in ast.walk(ast.parse(f.read()))
                   if isinstance(node, ast.Constant) and isinstance(node.value, str)}
    assert set(KINDS) == {"distillation", "peft"} and not strings & set(KINDS)
