"""official/checkpoints/finetuned.py: a training output resolved once (best/ first), its config
and records, its weights restored into the model that made them, and a rerun's record checked."""

import numpy as np
import pytest
import tensorflow as tf

from official.checkpoints import finetuned, tf1, training
from official.checkpoints.errors import CheckpointError
from official.modeling.encoder import build_encoder
from official.modeling.models import BertClassifier, BertSpanLabeler


def _same_weights(a, b):
    for x, y in zip(a.weights, b.weights):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y), err_msg=x.path)


def test_a_run_resolves_to_best_and_restores_only_its_own_model(tiny_config, tmp_path):
    trained = BertClassifier(build_encoder(tiny_config), num_labels=3)
    output_dir = tmp_path / "output"
    checkpoint = tf.train.Checkpoint(**training.model_roots(trained))
    checkpoint.write(str(output_dir / "model.ckpt-10"))
    with open(output_dir / "checkpoint", "w") as f:
        f.write('model_checkpoint_path: "model.ckpt-10"\n')
    best = BertClassifier(build_encoder(tiny_config), num_labels=3)
    tf.train.Checkpoint(**training.model_roots(best)).write(
        str(output_dir / "best" / "model.ckpt-5"))
    with open(output_dir / "best" / "checkpoint", "w") as f:
        f.write('model_checkpoint_path: "model.ckpt-5"\n')

    model = BertClassifier(build_encoder(tiny_config), num_labels=3)
    run = finetuned.resolve(str(output_dir))
    run.restore(model)
    assert run.prefix == str(output_dir / "best" / "model.ckpt-5")
    _same_weights(model, best)
    finetuned.resolve(str(output_dir / "model.ckpt-10")).restore(model)
    _same_weights(model, trained)

    with pytest.raises(CheckpointError, match="heads/span"):  # a classifier is no span labeler
        finetuned.resolve(str(output_dir / "model.ckpt-10")).restore(
            BertSpanLabeler(build_encoder(tiny_config)))
    with pytest.raises(CheckpointError, match="heads/classifier"):  # another num_labels
        finetuned.resolve(str(output_dir / "model.ckpt-10")).restore(
            BertClassifier(build_encoder(tiny_config), num_labels=2))
    tf1.write(tf1.weights_of(trained), str(tmp_path / "tf1" / "bert_model.ckpt"))
    with pytest.raises(CheckpointError, match="not a fine-tuning checkpoint"):
        finetuned.resolve(str(tmp_path / "tf1")).restore(model)
    with pytest.raises(CheckpointError, match="no checkpoint"):
        finetuned.resolve(str(tmp_path / "nothing"))
