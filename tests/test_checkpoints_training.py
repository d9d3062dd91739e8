"""Training checkpoints (what the training loop saves) read back as original-named weights."""

import numpy as np
import pytest
import tensorflow as tf

from official import checkpoints
from official.checkpoints import converter, tf1
from official.checkpoints.training import model_roots
from official.modeling.encoder import build_encoder
from official.modeling.models import BertClassifier, BertPretrainer


def save_training_checkpoint(model, config, directory):
    """What official/training/trainer.py writes: model roots plus optimiser-like extra state."""
    config.to_json_file(str(directory / "bert_config.json"))
    extra = tf.Variable(7, dtype=tf.int64)
    manager = tf.train.CheckpointManager(tf.train.Checkpoint(**model_roots(model), step=extra),
                                         str(directory), max_to_keep=2,
                                         checkpoint_name="model.ckpt")
    return manager.save(checkpoint_number=7)


def test_a_pretraining_checkpoint_reads_as_the_models_weights(tiny_config, tmp_path):
    model = BertPretrainer(build_encoder(tiny_config))
    save_training_checkpoint(model, tiny_config, tmp_path)
    expected = tf1.weights_of(model)
    for path in (str(tmp_path), str(tmp_path / "model.ckpt-7")):
        weights = checkpoints.read_weights(path)
        assert weights.keys() == expected.keys()
        for name in expected:
            np.testing.assert_array_equal(weights[name], expected[name], err_msg=name)

    # ... and so it starts another model, and converts like any checkpoint of ours.
    fresh = BertPretrainer(build_encoder(tiny_config))
    checkpoints.load_init_checkpoint(str(tmp_path), fresh)
    np.testing.assert_array_equal(tf1.weights_of(fresh)["cls/predictions/output_bias"],
                                  expected["cls/predictions/output_bias"])
    bundle = converter.read("tf2", str(tmp_path))
    assert bundle.config == tiny_config
    converter.write("tf1", bundle, str(tmp_path / "as_tf1"))
    np.testing.assert_array_equal(
        tf1.read(str(tmp_path / "as_tf1" / "bert_model.ckpt"))["bert/pooler/dense/kernel"],
        expected["bert/pooler/dense/kernel"])


def test_a_fine_tuning_checkpoint_gives_its_encoder(tiny_config, tmp_path):
    model = BertClassifier(build_encoder(tiny_config), num_labels=3)
    save_training_checkpoint(model, tiny_config, tmp_path)
    weights = checkpoints.read_weights(str(tmp_path))
    assert not any(name.startswith("cls/") for name in weights)
    np.testing.assert_array_equal(weights["bert/embeddings/word_embeddings"],
                                  tf1.weights_of(model)["bert/embeddings/word_embeddings"])


def test_without_its_config_a_training_checkpoint_is_a_clear_error(tiny_config, tmp_path):
    save_training_checkpoint(BertPretrainer(build_encoder(tiny_config)), tiny_config, tmp_path)
    (tmp_path / "bert_config.json").unlink()
    with pytest.raises(checkpoints.CheckpointError, match="bert_config.json"):
        checkpoints.read_weights(str(tmp_path))


def test_a_checkpoint_of_another_size_is_a_clear_error(tiny_config, tmp_path):
    save_training_checkpoint(BertPretrainer(build_encoder(tiny_config)), tiny_config, tmp_path)
    bigger = type(tiny_config)(**{**tiny_config.to_dict(), "hidden_size": 64})
    bigger.to_json_file(str(tmp_path / "bert_config.json"))
    with pytest.raises(checkpoints.CheckpointError, match="model.ckpt-7"):
        checkpoints.read_weights(str(tmp_path))
