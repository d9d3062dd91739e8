"""official/checkpoints/reading.py: one rule for the config of any checkpoint's weights, and one
reader of (config, weights), against files written here by hand; and the package's face, which
holds no logic."""

import ast
import dataclasses
import os

import numpy as np
import pytest

from official import checkpoints
from official.checkpoints import hf, reading, tf1
from official.checkpoints.errors import CheckpointError
from tests.checkpoint_helpers import original_weights


@pytest.fixture
def release(tiny_config, tmp_path):
    """An original TF1 release: bert_model.ckpt with bert_config.json beside it."""
    folder = tmp_path / "release"
    folder.mkdir()
    weights = original_weights(tiny_config, heads=False)
    tf1.write(weights, str(folder / "bert_model.ckpt"))
    tiny_config.to_json_file(str(folder / reading.CONFIG_FILE))
    return folder, weights


def test_a_config_given_wins_over_the_one_beside(release, tiny_config, tmp_path):
    folder, _ = release
    other = dataclasses.replace(tiny_config, hidden_dropout_prob=0.5)
    other.to_json_file(str(tmp_path / "other.json"))
    assert reading.config_of(str(folder), str(tmp_path / "other.json")) == (
        str(tmp_path / "other.json"), other)
    assert reading.config_of(str(folder), other) == (None, other)
    assert reading.config_of(str(folder / "bert_model.ckpt")) == (
        str(folder / reading.CONFIG_FILE), tiny_config)


def test_a_folder_formats_own_config_is_its_config(tiny_config, tmp_path):
    exact = dataclasses.replace(tiny_config, hidden_act="gelu_exact")
    weights = original_weights(exact, heads=False)
    hf.write(str(tmp_path), exact, weights)
    assert reading.config_of(str(tmp_path)) == (str(tmp_path), exact)
    config, read = reading.read(str(tmp_path))
    assert config == exact
    np.testing.assert_array_equal(read["bert/pooler/dense/kernel"],
                                  weights["bert/pooler/dense/kernel"])
    # Given, it must compute as the folder's does; a dropout rate may differ.
    assert reading.read(str(tmp_path), dataclasses.replace(exact, hidden_dropout_prob=0.3))[0] \
        .hidden_dropout_prob == 0.3
    with pytest.raises(CheckpointError, match=r"hidden_act \('gelu_exact' vs 'gelu'\)$"):
        reading.read(str(tmp_path), tiny_config)


def test_read_gives_the_weights_written_with_the_config_beside(release, tiny_config):
    folder, weights = release
    config, read = reading.read(str(folder))
    assert config == tiny_config
    assert sorted(read) == sorted(weights)
    for name, value in weights.items():
        np.testing.assert_array_equal(read[name], value)


def test_a_missing_checkpoint_is_named_before_a_missing_config(release, tmp_path):
    folder, _ = release
    with pytest.raises(CheckpointError, match="no checkpoint there"):
        reading.read(str(tmp_path / "nowhere"))
    os.remove(folder / reading.CONFIG_FILE)
    with pytest.raises(CheckpointError, match=rf"no {reading.CONFIG_FILE} beside the checkpoint "
                                              r".*; pass config=$"):
        reading.read(str(folder), remedy="pass config=")


def test_the_package_face_holds_no_logic():
    """official/checkpoints/__init__.py: a docstring, imports and __all__, nothing else; every
    name it lists is there."""
    path = os.path.join(os.path.dirname(checkpoints.__file__), "__init__.py")
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    body = tree.body[1:]  # after the docstring
    assert all(isinstance(node, (ast.ImportFrom, ast.Import)) or (
        isinstance(node, ast.Assign) and node.targets[0].id == "__all__") for node in body)
    assert all(hasattr(checkpoints, name) for name in checkpoints.__all__)
