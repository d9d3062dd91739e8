"""Parity with keras-hub's BertBackbone, the independent reference implementation of BERT."""

import keras_hub
import numpy as np
import pytest

from official import configs
from official.checkpoints import converter, tf1
from official.checkpoints import keras_hub as keras_hub_format
from official.configs import ConfigError
from official.modeling.encoder import build_encoder

CONFIG = configs.BertConfig(vocab_size=120, hidden_size=64, num_hidden_layers=3,
                            num_attention_heads=4, intermediate_size=128,
                            max_position_embeddings=40, type_vocab_size=2)


def reference_backbone():
    # keras-hub's BERT computes the tanh GELU: our "gelu", the original's.
    return keras_hub.models.BertBackbone(vocabulary_size=120, num_layers=3, num_heads=4,
                                         hidden_dim=64, intermediate_dim=128,
                                         max_sequence_length=40, num_segments=2)


def inputs(batch, seq_len, seed):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, seq_len + 1, batch)
    mask = (np.arange(seq_len)[None] < lengths[:, None]).astype("int32")
    return (rng.integers(0, 120, (batch, seq_len)).astype("int32"), mask,
            rng.integers(0, 2, (batch, seq_len)).astype("int32"))


@pytest.fixture(scope="module")
def pair():
    backbone = reference_backbone()
    ours = build_encoder(CONFIG)
    tf1.assign(ours, keras_hub_format.weights_of(backbone), "keras-hub backbone")
    return backbone, ours


@pytest.mark.parametrize("batch,seq_len", [(1, 1), (1, 9), (4, 16), (7, 40)])
def test_same_outputs_as_keras_hub(pair, batch, seq_len):
    backbone, ours = pair
    ids, mask, types = inputs(batch, seq_len, seed=batch * 100 + seq_len)
    expected = backbone({"token_ids": ids, "padding_mask": mask, "segment_ids": types})
    actual = ours({"input_word_ids": ids, "input_mask": mask, "input_type_ids": types})
    real = mask.astype(bool)  # keras-hub leaves padding rows unmasked as queries; compare tokens
    np.testing.assert_allclose(np.asarray(actual["sequence_output"])[real],
                               np.asarray(expected["sequence_output"])[real], atol=1e-5)
    np.testing.assert_allclose(actual["pooled_output"], expected["pooled_output"], atol=1e-5)


def test_weights_travel_to_keras_hub_and_back(pair, tmp_path):
    _, ours = pair
    backbone = keras_hub_format.backbone_from(CONFIG, tf1.weights_of(ours))
    ids, mask, types = inputs(3, 12, seed=7)
    expected = ours({"input_word_ids": ids, "input_mask": mask, "input_type_ids": types})
    actual = backbone({"token_ids": ids, "padding_mask": mask, "segment_ids": types})
    np.testing.assert_allclose(actual["pooled_output"], expected["pooled_output"], atol=1e-5)

    vocab = tmp_path / "vocab.txt"
    vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "b"]) + "\n")
    bundle = converter.Bundle(CONFIG, tf1.weights_of(ours), str(vocab))
    converter.write("keras_hub", bundle, str(tmp_path / "preset"))
    config, weights, vocab_file = keras_hub_format.read(str(tmp_path / "preset"))
    assert config == CONFIG
    assert open(vocab_file).read().split() == vocab.read_text().split()
    for name, value in tf1.weights_of(ours).items():
        np.testing.assert_array_equal(weights[name], value, err_msg=name)


def test_erf_gelu_model_is_refused(pair):
    exact = configs.BertConfig(**dict(CONFIG.to_dict(), hidden_act="gelu_exact"))
    with pytest.raises(ConfigError, match="tanh GELU only"):
        keras_hub_format.backbone_from(exact, tf1.weights_of(pair[1]))


def test_a_keras_hub_preset_is_an_init_checkpoint(tmp_path):
    """A preset keras-hub saved itself, given as --init_checkpoint (load_init_checkpoint)."""
    from official import checkpoints

    backbone = reference_backbone()
    backbone.save_to_preset(str(tmp_path / "preset"))
    ours = build_encoder(CONFIG)
    checkpoints.load_init_checkpoint(str(tmp_path / "preset"), ours)
    ids, mask, types = inputs(2, 10, seed=3)
    expected = backbone({"token_ids": ids, "padding_mask": mask, "segment_ids": types})
    actual = ours({"input_word_ids": ids, "input_mask": mask, "input_type_ids": types})
    np.testing.assert_allclose(actual["pooled_output"], expected["pooled_output"], atol=1e-5)
    # A model of another size is refused with what differs, before any variable is assigned.
    deeper = configs.BertConfig(**dict(CONFIG.to_dict(), num_hidden_layers=4))
    with pytest.raises(checkpoints.CheckpointError, match=r"num_hidden_layers \(3 vs 4\)"):
        checkpoints.load_init_checkpoint(str(tmp_path / "preset"), build_encoder(deeper))
