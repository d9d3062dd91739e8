"""official/export/encoder.py: Hub's encoder API over BertEncoder (and its masked-LM head).

References: the Keras encoder and BertPretrainer themselves; the fresh-process load of the
SavedModel is in test_export_saved_model.py.
"""

import os

import numpy as np
import pytest
import tensorflow as tf

from official.export.encoder import HubEncoder
from official.modeling.encoder import build_encoder
from official.modeling.models import BertPretrainer
from official.text.tokenizer import FullTokenizer

VOCAB = os.path.join(os.path.dirname(__file__), "..", "data", "vocab", "uncased_vocab.txt")


@pytest.fixture(scope="module")
def tokenizer():
    return FullTokenizer(VOCAB, do_lower_case=True)


def test_outputs_are_the_encoders_with_hub_names(tiny_config, make_inputs, tokenizer):
    encoder = build_encoder(tiny_config)
    hub = HubEncoder(encoder, tokenizer)
    inputs = make_inputs(batch=3, seq_len=7)
    got, expected = hub(inputs), encoder(inputs)
    assert set(got) == {"pooled_output", "default", "sequence_output", "encoder_outputs"}
    np.testing.assert_allclose(got["pooled_output"], expected["pooled_output"], atol=1e-6)
    np.testing.assert_array_equal(got["default"], got["pooled_output"])
    np.testing.assert_allclose(got["sequence_output"], expected["sequence_output"], atol=1e-6)
    assert len(got["encoder_outputs"]) == tiny_config.num_hidden_layers
    assert not hasattr(hub, "mlm")
    # Dropout only when training; the variables Hub's KerasLayer fine-tunes are listed.
    assert not np.allclose(hub(inputs, training=True)["pooled_output"], got["pooled_output"])
    assert {id(v) for v in hub.trainable_variables} == {id(v.value) for v in
                                                        encoder.trainable_variables}
    serving = hub.signatures()["serving_default"](**{k: tf.constant(v) for k, v in
                                                     inputs.items()})
    assert sorted(serving) == ["default", "encoder_outputs_0", "encoder_outputs_1",
                               "pooled_output", "sequence_output"]


def test_mlm_is_the_pretrainers_masked_lm(tiny_config, make_inputs, tokenizer):
    encoder = build_encoder(tiny_config)
    pretrainer = BertPretrainer(encoder)
    hub = HubEncoder(encoder, tokenizer, pretrainer)
    inputs = dict(make_inputs(batch=2, seq_len=6),
                  masked_lm_positions=np.array([[1, 2], [3, 0]], np.int32))
    got = hub.mlm(inputs)
    expected = pretrainer(inputs)["masked_lm_logits"]
    assert got["mlm_logits"].shape == (2, 2, tiny_config.vocab_size)
    np.testing.assert_allclose(got["mlm_logits"], expected, atol=1e-5)
    np.testing.assert_allclose(got["pooled_output"], hub(inputs)["pooled_output"], atol=1e-6)
    assert "mlm" in hub.signatures()


def test_pretrainer_must_wrap_the_encoder(tiny_config, tokenizer):
    with pytest.raises(ValueError, match="built on the exported encoder"):
        HubEncoder(build_encoder(tiny_config), tokenizer,
                   BertPretrainer(build_encoder(tiny_config)))
