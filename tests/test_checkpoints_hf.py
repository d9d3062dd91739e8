"""Hugging Face BERT directories: read with safetensors, written back, read again."""

import dataclasses
import json

import numpy as np
import pytest
import safetensors.numpy

from official.checkpoints import converter, hf, tf1
from official.checkpoints.errors import CheckpointError
from official.configs import ACTIVATIONS, ConfigError
from official.modeling.encoder import build_encoder
from tests.checkpoint_helpers import original_weights


def write_hf_directory(directory, config, prefix="", hidden_act="gelu", extra=None):
    """A directory as Hugging Face writes it: names spelt by hand here, linear weights [out, in]."""
    weights = original_weights(config, heads=bool(prefix))
    tensors = {}
    for name, value in weights.items():
        if name == "cls/predictions/output_bias":
            tensors["cls.predictions.bias"] = value
            tensors["cls.predictions.decoder.bias"] = value
            continue
        if name.startswith("cls/seq_relationship/"):
            leaf = "weight" if name.endswith("output_weights") else "bias"
            tensors[f"cls.seq_relationship.{leaf}"] = value
            continue
        path, leaf = name.rsplit("/", 1)
        path = path.replace("bert/", prefix).replace("layer_", "layer.").replace("/", ".")
        if leaf.endswith("_embeddings"):
            tensors[f"{path}.{leaf}.weight"] = value
        elif leaf == "kernel":
            tensors[f"{path}.weight"] = value.T.copy()
        else:
            tensors[f"{path}.{dict(gamma='weight', beta='bias', bias='bias')[leaf]}"] = value
    tensors[prefix + "embeddings.position_ids"] = np.arange(
        config.max_position_embeddings)[None].astype("int64")
    tensors.update(extra or {})
    safetensors.numpy.save_file(tensors, str(directory / "model.safetensors"))
    hf_config = dict(config.to_dict(), hidden_act=hidden_act, model_type="bert",
                     layer_norm_eps=1e-12, architectures=["BertModel"])
    (directory / "config.json").write_text(json.dumps(hf_config))
    (directory / "vocab.txt").write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n")
    return weights


@pytest.mark.parametrize("prefix", ["", "bert."], ids=["BertModel", "BertForPreTraining"])
def test_reads_hugging_face_names_and_orientation(tiny_config, tmp_path, prefix):
    expected = write_hf_directory(
        tmp_path, tiny_config, prefix,
        extra={"classifier.weight": np.zeros((3, tiny_config.hidden_size), "float32")})
    config, weights, vocab = hf.read(str(tmp_path))
    assert config.hidden_act == "gelu_exact"  # Hugging Face's "gelu" is the erf one.
    assert vocab == str(tmp_path / "vocab.txt")
    assert sorted(weights) == sorted(expected)
    for name, value in expected.items():
        np.testing.assert_array_equal(weights[name], value, err_msg=name)


def test_query_weight_lands_transposed_in_the_fused_kernel(tiny_config, tmp_path):
    expected = write_hf_directory(tmp_path, tiny_config)
    encoder = converter.build_model(converter.read("hf", str(tmp_path)), "test")
    h = tiny_config.hidden_size
    kernel = encoder.transformer_layers[0].attention.qkv.kernel.numpy()
    hf_query = safetensors.numpy.load_file(str(tmp_path / "model.safetensors"))[
        "encoder.layer.0.attention.self.query.weight"]
    np.testing.assert_array_equal(kernel[:, :h], hf_query.T)
    np.testing.assert_array_equal(
        kernel[:, 2 * h:], expected["bert/encoder/layer_0/attention/self/value/kernel"])


@pytest.mark.parametrize("prefix", ["", "bert."])
def test_round_trip_through_export(tiny_config, tmp_path, prefix):
    source, exported = tmp_path / "source", tmp_path / "exported"
    source.mkdir()
    write_hf_directory(source, tiny_config, prefix, hidden_act="gelu_new")
    converter.convert("hf", str(source), str(exported), output_format="hf")

    written = json.loads((exported / "config.json").read_text())
    assert written["hidden_act"] == "gelu_new"
    assert written["architectures"] == ["BertForPreTraining" if prefix else "BertModel"]
    original = safetensors.numpy.load_file(str(source / "model.safetensors"))
    again = safetensors.numpy.load_file(str(exported / "model.safetensors"))
    skipped = {prefix + "embeddings.position_ids", "cls.predictions.decoder.bias"}
    assert set(again) == set(original) - skipped
    for name in again:
        np.testing.assert_array_equal(again[name], original[name], err_msg=name)
    assert hf.read(str(exported))[0] == hf.read(str(source))[0]


def test_a_written_folder_carries_the_vocab_and_tokenizer_config_transformers_reads(
        tiny_config, tmp_path):
    """BertTokenizer(Fast).from_pretrained reads vocab.txt and tokenizer_config.json (without
    the vocab it builds a tokenizer of a few words that reads every other as [UNK]); a source
    without a vocab is refused before anything is written."""
    source = tmp_path / "source"
    source.mkdir()
    write_hf_directory(source, tiny_config)
    converter.convert("hf", str(source), str(tmp_path / "cased"), output_format="hf",
                      do_lower_case=False)
    assert (tmp_path / "cased" / "vocab.txt").read_bytes() == (source / "vocab.txt").read_bytes()
    assert json.loads((tmp_path / "cased" / "tokenizer_config.json").read_text()) == {
        "tokenizer_class": "BertTokenizer", "do_lower_case": False,
        "strip_accents": None,  # stripped when lower-cased, as the original's FullTokenizer
        "tokenize_chinese_chars": True, "unk_token": "[UNK]", "sep_token": "[SEP]",
        "pad_token": "[PAD]", "cls_token": "[CLS]", "mask_token": "[MASK]",
        "model_max_length": tiny_config.max_position_embeddings}

    (source / "vocab.txt").unlink()
    with pytest.raises(CheckpointError, match=r"source: no vocab.txt beside it, and Hugging Face "
                                              r"needs one .*: pass --vocab_file"):
        converter.convert("hf", str(source), str(tmp_path / "no_vocab"), output_format="hf")
    assert not (tmp_path / "no_vocab").exists()


def test_activation_names_keep_the_two_gelus_apart(tiny_config):
    ours_exact = hf.config_from_hf(dict(tiny_config.to_dict(), hidden_act="gelu"), "x")
    ours_tanh = hf.config_from_hf(dict(tiny_config.to_dict(), hidden_act="gelu_new"), "x")
    assert (ours_exact.hidden_act, ours_tanh.hidden_act) == ("gelu_exact", "gelu")
    assert hf.config_to_hf(ours_exact, "BertModel")["hidden_act"] == "gelu"
    assert hf.config_to_hf(ours_tanh, "BertModel")["hidden_act"] == "gelu_new"


@pytest.mark.parametrize("hidden_act", ACTIVATIONS)
def test_every_activation_has_a_hugging_face_name_that_reads_back(tiny_config, hidden_act):
    config = dataclasses.replace(tiny_config, hidden_act=hidden_act)
    assert hf.config_from_hf(hf.config_to_hf(config, "BertModel"), "x") == config


def test_bad_directories_are_named(tiny_config, tmp_path):
    with pytest.raises(ValueError, match=r"config.json: no such file"):
        hf.read(str(tmp_path))
    write_hf_directory(tmp_path, tiny_config)
    (tmp_path / "config.json").write_text('{"vocab_size": 100,')
    with pytest.raises(ConfigError, match=r"config.json: line 1: invalid JSON"):
        hf.read(str(tmp_path))
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "roberta"}))
    with pytest.raises(ConfigError, match=r"model_type is 'roberta'"):
        hf.read(str(tmp_path))


def test_encoder_weights_of_another_size_are_rejected(tiny_config, tmp_path):
    write_hf_directory(tmp_path, tiny_config)
    bundle = converter.read("hf", str(tmp_path))
    bundle.weights["bert/embeddings/word_embeddings"] = np.zeros((99, 32), "float32")
    with pytest.raises(ValueError, match=r"word_embeddings checkpoint \[99, 32\] vs model"):
        tf1.assign(build_encoder(tiny_config), bundle.weights, "test")


def test_a_folder_whose_config_computes_otherwise_is_refused(tiny_config, tmp_path):
    """A Hugging Face folder as --init_checkpoint: its config.json must agree with the model's
    (the same shapes with HF's exact "gelu" against the original's tanh "gelu" would load and
    compute something else); dropout rates may differ."""
    import dataclasses

    from official import checkpoints
    from official.checkpoints.errors import CheckpointError

    exact = dataclasses.replace(tiny_config, hidden_act="gelu_exact", hidden_dropout_prob=0.3)
    weights = original_weights(exact, heads=False)
    hf.write(str(tmp_path), exact, weights)
    with pytest.raises(CheckpointError, match=r"its config differs from the model's in "
                                              r"hidden_act \('gelu_exact' vs 'gelu'\)$"):
        checkpoints.load_init_checkpoint(str(tmp_path), build_encoder(tiny_config))
    encoder = build_encoder(dataclasses.replace(tiny_config, hidden_act="gelu_exact"))
    checkpoints.load_init_checkpoint(str(tmp_path), encoder)
    np.testing.assert_array_equal(encoder.pooler.kernel.numpy(),
                                  weights["bert/pooler/dense/kernel"])
