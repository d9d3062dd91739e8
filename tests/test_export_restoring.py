"""official/export/restoring.py: the encoder an export gets from any checkpoint."""


import numpy as np

from official.checkpoints import tf1
from official.export import restoring
from official.modeling.encoder import build_encoder
from official.modeling.models import BertPretrainer


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
