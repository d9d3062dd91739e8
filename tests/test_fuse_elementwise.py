"""job_setup.fuse_elementwise: which runs get XLA's elementwise clusters, and what a user's own
TF_XLA_FLAGS keep (TensorFlow reads the variable when the first function compiles)."""

import os

import pytest

from official.training.job_setup import fuse_elementwise
from official.training.options import TrainingOptions

FUSIBLE = ["--tf_xla_auto_jit=2", "--tf_xla_cpu_global_jit", "--tf_xla_ops_to_cluster=FUSIBLE"]


def _options(tmp_path, **fields):
    return TrainingOptions(output_dir=str(tmp_path), bert_config_file=str(tmp_path / "c.json"),
                           **fields)


@pytest.mark.parametrize("fields, on", [
    ({"dtype": "bfloat16"}, True),                                  # the default with bfloat16
    ({"dtype": "float32"}, False),                                  # off with float32
    ({"dtype": "float32", "fuse_elementwise": True}, True),         # asked for
    ({"dtype": "bfloat16", "fuse_elementwise": False}, False),      # turned off
])
def test_who_fuses(tmp_path, monkeypatch, fields, on):
    monkeypatch.delenv("TF_XLA_FLAGS", raising=False)
    assert fuse_elementwise(_options(tmp_path, **fields)) is on
    assert os.environ.get("TF_XLA_FLAGS", "").split() == (FUSIBLE if on else [])


def test_whole_step_compilation_is_left_alone(tmp_path, monkeypatch):
    """--jit_compile compiles the step itself: no auto-clustering on top of it."""
    monkeypatch.delenv("TF_XLA_FLAGS", raising=False)
    fuse_elementwise(_options(tmp_path, dtype="bfloat16", jit_compile=True))
    assert "TF_XLA_FLAGS" not in os.environ


def test_a_users_own_flags_win(tmp_path, monkeypatch):
    monkeypatch.setenv("TF_XLA_FLAGS", "--tf_xla_auto_jit=1 --xla_cpu_something")
    fuse_elementwise(_options(tmp_path, dtype="bfloat16"))
    assert os.environ["TF_XLA_FLAGS"].split() == [
        "--tf_xla_auto_jit=1", "--xla_cpu_something", "--tf_xla_cpu_global_jit",
        "--tf_xla_ops_to_cluster=FUSIBLE"]
