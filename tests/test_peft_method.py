"""official/peft/method.py and the flags of the methods' table (official/peft/methods.py): each
method's settings, checked up front, and their record."""

import pytest

from official.peft import methods
from official.peft.lora import DEFAULT_LORA_TARGETS
from official.peft.method import DEFAULT_TRAIN_POOLER

ADAPTERS, LORA = "adapters", "lora"


def test_no_method_is_full_fine_tuning():
    assert methods.from_flags() is None


def test_the_flags_of_each_method():
    adapters = methods.from_flags(adapter_size=64)
    assert (adapters.method, adapters.adapter_size, adapters.train_pooler) == (
        ADAPTERS, 64, DEFAULT_TRAIN_POOLER)
    lora = methods.from_flags(lora_rank=8, train_pooler=False)
    assert (lora.method, lora.lora_rank, lora.lora_alpha, lora.lora_targets, lora.train_pooler) \
        == (LORA, 8, 8.0, DEFAULT_LORA_TARGETS, False)
    assert lora.lora_scale == 1.0
    assert methods.from_flags(lora_rank=8, lora_alpha=32).lora_scale == 4.0


@pytest.mark.parametrize("flags, message", [
    ({"adapter_size": 8, "lora_rank": 4}, "--adapter_size and --lora_rank are two methods"),
    ({"lora_alpha": 16}, "--lora_alpha is a LoRA setting: it needs --lora_rank"),
    ({"adapter_size": 8, "lora_targets": "query"}, "--lora_targets is a LoRA setting"),
    ({"train_pooler": True}, "--peft_train_pooler needs a parameter-efficient method"),
    ({"adapter_size": -2}, "--adapter_size must be positive, got -2"),
    ({"lora_rank": 4, "lora_alpha": 0}, "--lora_alpha must be positive"),
    ({"lora_rank": 4, "lora_targets": "query("}, "--lora_targets='query(' is not a regular"),
])
def test_bad_flags_are_one_line_errors_naming_the_flag(flags, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        methods.from_flags(**flags)


def test_the_record_round_trip_and_differences():
    lora = methods.from_flags(lora_rank=8, lora_targets="query")
    assert methods.from_dict(lora.to_dict()) == lora
    assert "adapter_size" not in lora.to_dict()
    other = methods.from_flags(lora_rank=4, lora_targets="query")
    assert lora.differences(other) == ["lora_rank (8 vs 4)", "lora_alpha (8.0 vs 4.0)"]
    adapters = methods.from_flags(adapter_size=64)
    assert "method (lora vs adapters)" in lora.differences(adapters)
    assert not lora.differences(lora)
