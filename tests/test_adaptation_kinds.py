"""Tests for official/adaptation_kinds.py: the table of adaptation kinds, and the rows of
official/distillation/kind.py and official/peft/kind.py (how run_scripts/common_flags.py uses a
row: tests/test_common_flags.py)."""

from official.adaptation_kinds import KINDS
from official.peft import methods
from official.peft.method import PeftSettings

DISTILLATION_FLAGS = ["teacher_checkpoint", "student_layers", "student_layers_any_order",
                      "temperature", "alpha_soft", "alpha_hard", "alpha_hidden",
                      "alpha_attention", "alpha_cos"]


def test_a_run_checks_and_resolves_distillation_before_peft():
    assert list(KINDS) == ["distillation", "peft"]


def test_fine_tuning_takes_every_kind_and_pretraining_distillation_with_distilberts_names():
    distillation, peft = KINDS["distillation"], KINDS["peft"]
    assert [f.name for f in distillation.flags] == DISTILLATION_FLAGS
    assert [f.name for f in distillation.pretraining_flags] == [
        {"alpha_soft": "alpha_ce", "alpha_hard": "alpha_mlm"}.get(n, n)
        for n in DISTILLATION_FLAGS]
    soft = {f.name: f.help for f in distillation.pretraining_flags}
    assert soft["alpha_ce"].endswith("Default 5.") and soft["alpha_mlm"].endswith("Default 2.")
    assert peft.pretraining_flags is None
    assert [f.name for f in peft.flags] == [
        *(f.name for m in methods.METHODS.values() for f in m.flags), "peft_train_pooler"]
    names = [f.name for kind in KINDS.values() for f in kind.flags]
    assert len(names) == len(set(names))  # one entry point defines them all


def test_the_peft_row_reads_the_method_its_flags_ask_for():
    values = {f.name: f.default for f in KINDS["peft"].flags}
    assert KINDS["peft"].settings(values, False) is None
    chosen = KINDS["peft"].settings({**values, "lora_rank": 4, "peft_train_pooler": True}, False)
    assert isinstance(chosen, PeftSettings)
    assert (chosen.method, chosen.lora_rank, chosen.train_pooler) == ("lora", 4, True)


def test_the_distillation_row_names_its_teacher_as_the_checkpoint_it_reads():
    values = {f.name: f.default for f in KINDS["distillation"].flags}
    assert KINDS["distillation"].settings(values, False) is None
    settings = KINDS["distillation"].settings({**values, "teacher_checkpoint": "t"}, False)
    assert KINDS["distillation"].checkpoints(settings) == ("t",)
