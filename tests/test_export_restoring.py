"""official/export/restoring.py: which weights an export gets from which checkpoint."""


import numpy as np
import pytest
import tensorflow as tf

from official.checkpoints import tf1, training
from official.checkpoints.errors import CheckpointError
from official.export import restoring
from official.modeling.encoder import build_encoder
from official.modeling.models import BertClassifier, BertPretrainer, BertSpanLabeler


def _same_weights(a, b):
    for x, y in zip(a.weights, b.weights):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y), err_msg=x.path)


def test_pretrained_encoder_has_the_mlm_head_only_when_the_checkpoint_does(tiny_config, tmp_path):
    source = BertPretrainer(build_encoder(tiny_config))
    weights = tf1.weights_of(source)
    tf1.write(weights, str(tmp_path / "with_head" / "bert_model.ckpt"))
    tf1.write({k: v for k, v in weights.items() if not k.startswith("cls/")},
              str(tmp_path / "encoder_only" / "bert_model.ckpt"))

    encoder, pretrainer = restoring.pretrained_encoder(tiny_config, str(tmp_path / "with_head"))
    assert pretrainer is not None and pretrainer.encoder is encoder
    _same_weights(pretrainer.masked_lm, source.masked_lm)
    _same_weights(encoder, source.encoder)
    encoder, pretrainer = restoring.pretrained_encoder(tiny_config,
                                                       str(tmp_path / "encoder_only"))
    assert pretrainer is None
    _same_weights(encoder, source.encoder)


def test_restore_finetuned_prefers_best_and_needs_the_head(tiny_config, tmp_path):
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
    prefix = restoring.restore_finetuned(model, str(output_dir))
    assert prefix == str(output_dir / "best" / "model.ckpt-5")
    _same_weights(model, best)
    restoring.restore_finetuned(model, str(output_dir / "model.ckpt-10"))
    _same_weights(model, trained)

    with pytest.raises(CheckpointError, match="heads/span"):  # a classifier is no span labeler
        restoring.restore_finetuned(BertSpanLabeler(build_encoder(tiny_config)),
                                    str(output_dir / "model.ckpt-10"))
    with pytest.raises(CheckpointError, match="heads/classifier"):  # another num_labels
        restoring.restore_finetuned(BertClassifier(build_encoder(tiny_config), num_labels=2),
                                    str(output_dir / "model.ckpt-10"))
    tf1.write(tf1.weights_of(trained), str(tmp_path / "tf1" / "bert_model.ckpt"))
    with pytest.raises(CheckpointError, match="not a fine-tuning checkpoint"):
        restoring.restore_finetuned(model, str(tmp_path / "tf1"))
    with pytest.raises(CheckpointError, match="no checkpoint"):
        restoring.restore_finetuned(model, str(tmp_path / "nothing"))
