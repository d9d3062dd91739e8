"""official/export/restoring.py: the encoder an export gets from any checkpoint, and an encoder
export read back."""

import dataclasses

import numpy as np
import pytest

from official.checkpoints import tf1
from official.checkpoints.errors import CheckpointError
from official.export import restoring, saving
from official.export.encoder import HubEncoder
from official.modeling.encoder import build_encoder
from official.modeling.models import BertPretrainer
from official.text.tokenizer import FullTokenizer


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


def test_an_encoder_export_reads_back_into_its_configs_encoder(tiny_config, tmp_path):
    source = build_encoder(tiny_config)
    vocab = "data/vocab/uncased_vocab.txt"
    saving.save(HubEncoder(source, FullTokenizer(vocab, do_lower_case=False)),
                str(tmp_path / "export"))
    encoder, vocab_file, lower_case = restoring.exported_encoder(str(tmp_path / "export"),
                                                                 tiny_config)
    expected = tf1.weights_of(source)
    assert tf1.weights_of(encoder).keys() == expected.keys()
    for name, value in tf1.weights_of(encoder).items():
        np.testing.assert_array_equal(value, expected[name], err_msg=name)
    assert open(vocab_file, "rb").read() == open(vocab, "rb").read()
    assert lower_case is False
    wider = dataclasses.replace(tiny_config, intermediate_size=2 * tiny_config.intermediate_size)
    with pytest.raises(CheckpointError, match=r"intermediate_dense/kernel has shape \[32, 64\], "
                                              r"the config's is \[32, 128\]"):
        restoring.exported_encoder(str(tmp_path / "export"), wider)
