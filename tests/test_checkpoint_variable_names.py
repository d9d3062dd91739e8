"""official/checkpoints/variable_names.py: a checkpoint's variable names read without
TensorFlow, against tf.train.list_variables (and the safetensors library for a Hugging Face
folder), in every format the project writes."""

import os

import numpy as np
import pytest
import tensorflow as tf

from official.checkpoints import hf, tf1, tf2
from official.checkpoints import variable_names as vn
from official.checkpoints.errors import CheckpointError
from official.configs import BertConfig
from tests.checkpoint_helpers import original_weights

CONFIG = BertConfig(vocab_size=99, hidden_size=8, num_hidden_layers=2, num_attention_heads=2,
                    intermediate_size=16, max_position_embeddings=16)


def listed(prefix: str) -> list[str]:
    return [name for name, _ in tf.train.list_variables(prefix)]


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    root = tmp_path_factory.mktemp("names")
    with_heads, encoder = original_weights(CONFIG), original_weights(CONFIG, heads=False)
    tf1.write(with_heads, str(root / "tf1" / "bert_model.ckpt"))
    tf1.write(encoder, str(root / "encoder" / "bert_model.ckpt"))
    tf2.write(with_heads, str(root / "tf2" / "model"))
    # A training loop's object checkpoint in a folder, found through its `checkpoint` file.
    step = tf.Variable(3)
    manager = tf.train.CheckpointManager(tf.train.Checkpoint(
        heads={"masked_lm": {"output_bias": tf.Variable(np.zeros(3, np.float32))}}, step=step),
        str(root / "training"), max_to_keep=2, checkpoint_name="model.ckpt")
    manager.save(checkpoint_number=3)
    manager.save(checkpoint_number=7)
    (root / "hf").mkdir()
    hf.write(str(root / "hf"), CONFIG, with_heads)
    return root


def test_the_names_are_tensorflows_in_every_format(written):
    for prefix in (written / "tf1" / "bert_model.ckpt", written / "tf2" / "model",
                   written / "training" / "model.ckpt-7"):
        assert sorted(vn.variable_names(str(prefix))) == sorted(
            name for name in listed(str(prefix)))
    assert len(vn.variable_names(str(written / "tf1"))) == len(original_weights(CONFIG))


def test_a_folder_resolves_to_its_newest_checkpoint_or_bert_model_ckpt(written):
    assert vn.checkpoint_prefix(str(written / "training")) == str(
        written / "training" / "model.ckpt-7")
    assert vn.checkpoint_prefix(str(written / "tf1")) == str(written / "tf1" / "bert_model.ckpt")
    with pytest.raises(CheckpointError, match=r"bert_model\.ckpt: no checkpoint there"):
        vn.checkpoint_prefix(str(written))


def test_a_hugging_face_folder_lists_its_safetensors_names(written):
    from safetensors.numpy import load_file

    assert sorted(vn.variable_names(str(written / "hf"))) == sorted(
        load_file(str(written / "hf" / "model.safetensors")))


def test_the_masked_lm_head_is_found_in_each_format_and_missing_from_an_encoder(written):
    for where in ("tf1", "tf2/model", "training", "hf"):
        assert vn.has_masked_lm_head(str(written / where)), where
    assert not vn.has_masked_lm_head(str(written / "encoder"))


def test_a_damaged_index_is_one_line(tmp_path, written):
    bad = tmp_path / "bad.ckpt"
    (tmp_path / "bad.ckpt.index").write_bytes(b"not a table" * 10)
    with pytest.raises(CheckpointError, match=r"bad\.ckpt\.index: not a checkpoint's index"):
        vn.variable_names(str(bad))
    data = (written / "tf1" / "bert_model.ckpt.index").read_bytes()
    cut = tmp_path / "cut.ckpt"
    (tmp_path / "cut.ckpt.index").write_bytes(data[:40] + data[-48:])
    with pytest.raises(CheckpointError, match=r"cut\.ckpt\.index: not a checkpoint's index"):
        vn.variable_names(str(cut))
    assert os.path.isfile(str(bad) + ".index")
