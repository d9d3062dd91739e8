"""official/training/output_dir.py: a rerun's config checked against the checkpoints', and
what a killed run left removed (the leftovers written here by hand, as TensorFlow names them)."""

import os

import pytest

from official.checkpoints import finetuned
from official.configs import BertConfig, ConfigError
from official.training import output_dir

CONFIG = BertConfig(vocab_size=10, hidden_size=8, num_hidden_layers=1, num_attention_heads=2,
                    intermediate_size=16)


def with_checkpoint(folder, config=CONFIG):
    output_dir.claim(str(folder), config)
    (folder / "model.ckpt-3.index").write_bytes(b"")
    (folder / "checkpoint").write_text('model_checkpoint_path: "model.ckpt-3"\n')


def test_another_config_is_refused_with_its_fields(tmp_path):
    with_checkpoint(tmp_path)
    other = BertConfig(**dict(CONFIG.to_dict(), hidden_size=16, num_hidden_layers=2))
    with pytest.raises(ConfigError) as error:
        output_dir.check_config(str(tmp_path), other, "other.json")
    assert str(error.value).startswith(f"{tmp_path}/bert_config.json (the config of the "
                                       f"checkpoints in {tmp_path}) and --bert_config_file="
                                       f"other.json differ in hidden_size (8 vs 16), "
                                       f"num_hidden_layers (1 vs 2)")
    output_dir.check_config(str(tmp_path), CONFIG, "same.json")  # the same config resumes


def test_a_config_without_checkpoints_may_be_replaced(tmp_path):
    output_dir.claim(str(tmp_path), CONFIG)
    other = BertConfig(**dict(CONFIG.to_dict(), hidden_size=16))
    output_dir.check_config(str(tmp_path), other, "other.json")
    assert not finetuned.has_checkpoint(str(tmp_path))


def test_what_a_kill_left_is_removed_and_best_is_put_back(tmp_path):
    with_checkpoint(tmp_path)
    leftovers = ["model.ckpt-4_temp", "bert_model.ckpt_temp_0123abcd", "best.tmp"]
    for name in leftovers:
        (tmp_path / name).mkdir()
        (tmp_path / name / "part-00000-of-00001.data-00000-of-00001").write_bytes(b"x" * 10)
    for name in ("checkpoint.tmp5e8f0a9b1c2d4e6f", ".train.tf_record.0a1b2c.tmp",
                 "eval_results.txt.tmp"):
        (tmp_path / name).write_text("half")
    (tmp_path / "best.old").mkdir()  # killed between moving best/ aside and the new one in
    (tmp_path / "best.old" / "best_metric.json").write_text("{}")
    output_dir.remove_interrupted_writes(str(tmp_path))
    assert sorted(os.listdir(tmp_path)) == ["bert_config.json", "best", "checkpoint",
                                            "model.ckpt-3.index"]
    assert (tmp_path / "best" / "best_metric.json").read_text() == "{}"
    # With a best/ in place, an old one left beside it goes.
    (tmp_path / "best.old").mkdir()
    output_dir.remove_interrupted_writes(str(tmp_path))
    assert not (tmp_path / "best.old").exists() and (tmp_path / "best").exists()


def test_a_record_left_by_a_run_stopped_before_its_first_save_is_removed(tmp_path):
    """(A PEFT run writes peft_config.json at its claim; one killed before saving leaves it. The
    next run's PEFT adaptation names it as a file it does not write: official/adaptation.py's
    Leftover.)"""
    config = BertConfig(vocab_size=10, hidden_size=8, num_hidden_layers=1,
                        num_attention_heads=2, intermediate_size=8)
    (tmp_path / "peft_config.json").write_text("{}")
    output_dir.claim(str(tmp_path), config, {"peft_config.json": None})  # a record not written
    assert not (tmp_path / "peft_config.json").exists()
    output_dir.claim(str(tmp_path), config, {"peft_config.json": "{\"method\": \"lora\"}"})
    assert (tmp_path / "peft_config.json").read_text() == "{\"method\": \"lora\"}"
