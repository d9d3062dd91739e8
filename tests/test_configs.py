import json
import logging

import pytest

from official import configs
from official.configs import BertConfig, ConfigError
from official.modeling.encoder import build_encoder

# google-research/bert's uncased_L-12_H-768_A-12/bert_config.json, verbatim.
BASE_UNCASED_JSON = """{
  "attention_probs_dropout_prob": 0.1,
  "hidden_act": "gelu",
  "hidden_dropout_prob": 0.1,
  "hidden_size": 768,
  "initializer_range": 0.02,
  "intermediate_size": 3072,
  "max_position_embeddings": 512,
  "num_attention_heads": 12,
  "num_hidden_layers": 12,
  "type_vocab_size": 2,
  "vocab_size": 30522
}
"""

# multi_cased_L-12_H-768_A-12/bert_config.json: six keys the original BertConfig does not define.
MULTILINGUAL_EXTRAS = {
    "directionality": "bidi",
    "pooler_fc_size": 768,
    "pooler_num_attention_heads": 12,
    "pooler_num_fc_layers": 3,
    "pooler_size_per_head": 128,
    "pooler_type": "first_token_transform",
}

ORIGINAL_FIELDS = {
    "vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads",
    "intermediate_size", "hidden_act", "hidden_dropout_prob", "attention_probs_dropout_prob",
    "max_position_embeddings", "type_vocab_size", "initializer_range",
}


def write(tmp_path, text, name="bert_config.json"):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_defaults_are_the_originals():
    assert BertConfig(vocab_size=30522).to_dict() == {
        "vocab_size": 30522, "hidden_size": 768, "num_hidden_layers": 12,
        "num_attention_heads": 12, "intermediate_size": 3072, "hidden_act": "gelu",
        "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1,
        "max_position_embeddings": 512, "type_vocab_size": 16, "initializer_range": 0.02,
    }


def test_reads_a_released_config(tmp_path):
    config = BertConfig.from_json_file(write(tmp_path, BASE_UNCASED_JSON))
    assert config == configs.preset("base")
    assert config.head_size == 64


def test_json_round_trip(tmp_path):
    config = BertConfig(vocab_size=119547, hidden_size=256, num_hidden_layers=3,
                        num_attention_heads=4, intermediate_size=1000, hidden_act="gelu_exact",
                        hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.25,
                        max_position_embeddings=128, type_vocab_size=3, initializer_range=0.1)
    path = str(tmp_path / "sub" / "bert_config.json")
    config.to_json_file(path)

    assert BertConfig.from_json_file(path) == config
    with open(path) as f:
        written = json.load(f)
    assert set(written) == ORIGINAL_FIELDS
    assert written["hidden_act"] == "gelu_exact"
    assert [p.name for p in (tmp_path / "sub").iterdir()] == ["bert_config.json"]  # no temp left


def test_written_json_matches_the_released_file():
    assert configs.preset("base").to_json_string() == BASE_UNCASED_JSON


def test_integer_where_a_float_is_expected_is_accepted():
    config = BertConfig.from_dict({"vocab_size": 10, "initializer_range": 1,
                                   "hidden_dropout_prob": 0})
    assert config.initializer_range == 1.0 and isinstance(config.initializer_range, float)
    assert isinstance(config.hidden_dropout_prob, float)


def test_unknown_keys_are_tolerated_with_a_warning(tmp_path, caplog):
    values = dict(json.loads(BASE_UNCASED_JSON), vocab_size=119547, **MULTILINGUAL_EXTRAS)
    path = write(tmp_path, json.dumps(values, indent=2))

    with caplog.at_level(logging.WARNING):
        config = BertConfig.from_json_file(path)

    assert config.vocab_size == 119547
    assert config.hidden_size == 768
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert path in warnings[0]
    for key in MULTILINGUAL_EXTRAS:
        assert key in warnings[0]


def test_no_warning_for_a_clean_config(tmp_path, caplog):
    with caplog.at_level(logging.WARNING):
        BertConfig.from_json_file(write(tmp_path, BASE_UNCASED_JSON))
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


@pytest.mark.parametrize("change, words", [
    ({"vocab_size": None}, ["vocab_size"]),           # None = key removed
    ({"hidden_size": "768"}, ["hidden_size", "'768'"]),
    ({"num_hidden_layers": True}, ["num_hidden_layers", "True"]),
    ({"hidden_size": 768.0}, ["hidden_size"]),
    ({"hidden_dropout_prob": "0.1"}, ["hidden_dropout_prob"]),
    ({"num_attention_heads": 0}, ["num_attention_heads"]),
    ({"num_attention_heads": 10}, ["num_attention_heads", "10", "768"]),
    ({"hidden_act": "gelu_new"}, ["hidden_act", "gelu_new"]),
    ({"attention_probs_dropout_prob": 1.0}, ["attention_probs_dropout_prob"]),
], ids=["missing_vocab", "string_int", "bool_int", "float_int", "string_float", "zero_heads",
        "heads_not_dividing", "unknown_act", "dropout_1"])
def test_invalid_values_name_the_file_and_the_field(tmp_path, change, words):
    values = json.loads(BASE_UNCASED_JSON)
    for key, value in change.items():
        if value is None:
            del values[key]
        else:
            values[key] = value
    path = write(tmp_path, json.dumps(values))

    with pytest.raises(ConfigError) as error:
        BertConfig.from_json_file(path)

    assert path in str(error.value)
    for word in words:
        assert word in str(error.value)


def test_bad_json_names_the_file_and_line(tmp_path):
    path = write(tmp_path, '{\n  "vocab_size": 100,\n  "hidden_size": 32,,\n}\n')
    with pytest.raises(ConfigError, match="line 3") as error:
        BertConfig.from_json_file(path)
    assert path in str(error.value)


def test_json_that_is_not_an_object(tmp_path):
    path = write(tmp_path, "[1, 2]")
    with pytest.raises(ConfigError, match="object") as error:
        BertConfig.from_json_file(path)
    assert path in str(error.value)


def test_missing_file_names_the_file(tmp_path):
    path = str(tmp_path / "nowhere" / "bert_config.json")
    with pytest.raises(ConfigError) as error:
        BertConfig.from_json_file(path)
    assert path in str(error.value)


def test_config_error_is_a_value_error():
    with pytest.raises(ValueError):
        BertConfig(vocab_size=-1)


# Presets.

def count_by_formula(config):
    """Parameters of the encoder and pooler of the original BERT, counted weight by weight."""
    V, H, L, I = (config.vocab_size, config.hidden_size,  # noqa: E741 (the paper's letters)
                  config.num_hidden_layers, config.intermediate_size)
    P, T = config.max_position_embeddings, config.type_vocab_size
    embeddings = V * H + P * H + T * H + 2 * H            # three tables + LayerNorm
    per_layer = (4 * H * H + 4 * H                        # query, key, value, output dense
                 + 2 * 2 * H                              # two LayerNorms
                 + H * I + I                              # intermediate dense
                 + I * H + H)                             # output dense
    pooler = H * H + H
    return embeddings + L * per_layer + pooler


def test_preset_names():
    names = configs.preset_names()
    grid = [f"L{layers}_H{hidden}" for layers in (2, 4, 6, 8, 10, 12)
            for hidden in (128, 256, 512, 768)]
    assert len(names) == len(set(names)) == 24 + 6 + 1
    assert set(grid) <= set(names)
    assert {"tiny", "mini", "small", "medium", "base", "large", "L24_H1024"} <= set(names)


@pytest.mark.parametrize("name", configs.preset_names())
def test_every_preset_has_the_released_shape(name):
    config = configs.preset(name, vocab_size=1000)
    assert config.vocab_size == 1000
    assert config.num_attention_heads * 64 == config.hidden_size
    assert config.intermediate_size == 4 * config.hidden_size
    assert config.type_vocab_size == 2
    assert config.max_position_embeddings == 512
    assert config.hidden_act == "gelu"


@pytest.mark.parametrize("name, layers, hidden", [
    ("tiny", 2, 128), ("mini", 4, 256), ("small", 4, 512), ("medium", 8, 512),
    ("base", 12, 768), ("large", 24, 1024), ("L6_H256", 6, 256), ("L24_H1024", 24, 1024)])
def test_preset_sizes(name, layers, hidden):
    config = configs.preset(name)
    assert (config.num_hidden_layers, config.hidden_size) == (layers, hidden)


def test_unknown_preset():
    with pytest.raises(ConfigError, match="L3_H128"):
        configs.preset("L3_H128")


@pytest.mark.parametrize("name", ["tiny", "mini", "small", "medium", "base"])
def test_preset_parameter_counts(name):
    config = configs.preset(name, vocab_size=30522)
    assert build_encoder(config).count_params() == count_by_formula(config)


def test_bert_base_and_large_counts():
    assert count_by_formula(configs.preset("base")) == 109_482_240    # "110M"
    assert count_by_formula(configs.preset("large")) == 335_141_888   # "340M"


def test_a_missing_field_is_named_with_the_default_it_takes(tmp_path, caplog):
    values = json.loads(BASE_UNCASED_JSON)
    del values["initializer_range"], values["type_vocab_size"]
    path = write(tmp_path, json.dumps(values))
    with caplog.at_level(logging.WARNING):
        config = BertConfig.from_json_file(path)
    assert config.type_vocab_size == 16 and config.initializer_range == 0.02
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings == [f"{path}: missing, so the original's defaults are used: "
                        f"type_vocab_size=16, initializer_range=0.02"]


def test_a_misspelt_key_is_an_error_naming_the_field_it_resembles(tmp_path):
    values = json.loads(BASE_UNCASED_JSON)
    values["num_hidden_layer"] = values.pop("num_hidden_layers")
    with pytest.raises(ConfigError, match=r"unknown key num_hidden_layer \(did you mean "
                                          r"num_hidden_layers\?\)"):
        BertConfig.from_json_file(write(tmp_path, json.dumps(values)))
    # A near name of a field that is there too is an extra, tolerated with the warning above.
    values["num_hidden_layers"] = 12
    assert BertConfig.from_json_file(write(tmp_path, json.dumps(values))).num_hidden_layers == 12
