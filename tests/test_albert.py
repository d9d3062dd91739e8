"""ALBERT's options in a BERT config (official/configs.py, official/modeling/encoder.py,
official/checkpoints/tf1.py) against independent references: the published parameter counts, a
numpy ALBERT written from google-research/albert's modeling.py and reading its TF1 names, and
the names themselves listed by hand from that file."""

import dataclasses
import json
import math

import numpy as np
import pytest

from official.checkpoints import converter, tf1
from official.configs import BertConfig, ConfigError, preset
from official.modeling.encoder import build_encoder
from official.modeling.models import BertPretrainer

# google-research/albert's released albert_base (v2) config, as its albert_config.json says.
ALBERT_BASE = {
    "attention_probs_dropout_prob": 0, "hidden_act": "gelu", "hidden_dropout_prob": 0,
    "embedding_size": 128, "hidden_size": 768, "initializer_range": 0.02,
    "intermediate_size": 3072, "max_position_embeddings": 512, "num_attention_heads": 12,
    "num_hidden_layers": 12, "num_hidden_groups": 1, "net_structure_type": 0, "gap_size": 0,
    "num_memory_blocks": 0, "inner_group_num": 1, "down_scale_factor": 1, "type_vocab_size": 2,
    "vocab_size": 30000}
ALBERT_LARGE = dict(ALBERT_BASE, hidden_size=1024, intermediate_size=4096,
                    num_attention_heads=16, num_hidden_layers=24)
# The encoders' (embeddings, projection, shared layers, pooler) parameters as published for
# albert-base-v2 and albert-large-v2 (the ALBERT paper's Table 1 rounds them to 12M and 18M).
PUBLISHED_PARAMETERS = {"base": 11_683_584, "large": 17_683_968}


def small_albert(**changes) -> BertConfig:
    values = dict(vocab_size=50, hidden_size=32, num_hidden_layers=4, num_attention_heads=4,
                  intermediate_size=40, hidden_dropout_prob=0.0,
                  attention_probs_dropout_prob=0.0, type_vocab_size=2,
                  max_position_embeddings=16, embedding_size=8, num_hidden_groups=2)
    return BertConfig(**dict(values, **changes))


def randomize(model, seed=3, scale=0.3):
    rng = np.random.default_rng(seed)
    for w in model.weights:
        w.assign(rng.normal(0.0, scale, w.shape).astype(w.dtype))


def inputs(batch=2, seq_len=7, vocab=50, seed=0):
    rng = np.random.default_rng(seed)
    ids = rng.integers(1, vocab, (batch, seq_len)).astype("int32")
    mask = np.ones_like(ids)
    mask[1, 5:] = 0
    return {"input_word_ids": ids * mask, "input_mask": mask,
            "input_type_ids": (np.arange(seq_len) >= 3).astype("int32")[None].repeat(batch, 0)}


# A numpy ALBERT, float64, from google-research/albert's modeling.py (transformer_model and
# attention_ffn_block) and its variable names.

def gelu(x):
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


def layer_norm(x, w, name):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-12) * w[name + "/gamma"] + w[name + "/beta"]


def numpy_albert(w, config, feed):
    """(sequence_output [batch, seq, hidden], pooled [batch, hidden], masked-LM logits at every
    position [batch, seq, vocab])."""
    w = {k: v.astype(np.float64) for k, v in w.items()}
    ids, mask, types = (feed[k] for k in ("input_word_ids", "input_mask", "input_type_ids"))
    batch, seq = ids.shape
    heads, hidden = config.num_attention_heads, config.hidden_size
    size = hidden // heads

    def dense(h, name):
        return h @ w[name + "/kernel"] + w[name + "/bias"]

    x = (w["bert/embeddings/word_embeddings"][ids]
         + w["bert/embeddings/token_type_embeddings"][types]
         + w["bert/embeddings/position_embeddings"][:seq])
    x = layer_norm(x, w, "bert/embeddings/LayerNorm")
    if config.embedding_width != hidden:
        x = dense(x, "bert/encoder/embedding_hidden_mapping_in")
    adder = (1.0 - mask[:, None, None, :]) * -10000.0
    for layer in range(config.num_hidden_layers):
        group = int(layer / config.num_hidden_layers * config.num_hidden_groups)
        for inner in range(config.inner_group_num):
            p = f"bert/encoder/transformer/group_{group}/inner_group_{inner}/"
            q, k, v = (dense(x, p + f"attention_1/self/{m}").reshape(batch, seq, heads, size)
                       .transpose(0, 2, 1, 3) for m in ("query", "key", "value"))
            scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(size) + adder
            probs = np.exp(scores - scores.max(-1, keepdims=True))
            probs /= probs.sum(-1, keepdims=True)
            context = (probs @ v).transpose(0, 2, 1, 3).reshape(batch, seq, hidden)
            x = layer_norm(x + dense(context, p + "attention_1/output/dense"), w, p + "LayerNorm")
            h = dense(gelu(dense(x, p + "ffn_1/intermediate/dense")),
                      p + "ffn_1/intermediate/output/dense")
            x = layer_norm(x + h, w, p + "LayerNorm_1")
    pooled = np.tanh(dense(x[:, 0], "bert/pooler/dense"))
    t = layer_norm(gelu(dense(x, "cls/predictions/transform/dense")), w,
                   "cls/predictions/transform/LayerNorm")
    logits = t @ w["bert/embeddings/word_embeddings"].T + w["cls/predictions/output_bias"]
    return x, pooled, logits


def albert_names(config, heads=True):
    """Every TF1 variable name of an ALBERT pretraining checkpoint, by hand from
    google-research/albert's modeling.py and run_pretraining.py."""
    names = [f"bert/embeddings/{table}" for table in
             ("word_embeddings", "token_type_embeddings", "position_embeddings")]
    names += ["bert/embeddings/LayerNorm/gamma", "bert/embeddings/LayerNorm/beta",
              "bert/encoder/embedding_hidden_mapping_in/kernel",
              "bert/encoder/embedding_hidden_mapping_in/bias",
              "bert/pooler/dense/kernel", "bert/pooler/dense/bias"]
    for group in range(config.num_hidden_groups):
        for inner in range(config.inner_group_num):
            p = f"bert/encoder/transformer/group_{group}/inner_group_{inner}/"
            for dense in ("attention_1/self/query", "attention_1/self/key",
                          "attention_1/self/value", "attention_1/output/dense",
                          "ffn_1/intermediate/dense", "ffn_1/intermediate/output/dense"):
                names += [p + dense + "/kernel", p + dense + "/bias"]
            for norm in ("LayerNorm", "LayerNorm_1"):
                names += [p + norm + "/gamma", p + norm + "/beta"]
    if heads:
        names += ["cls/predictions/transform/dense/kernel",
                  "cls/predictions/transform/dense/bias",
                  "cls/predictions/transform/LayerNorm/gamma",
                  "cls/predictions/transform/LayerNorm/beta", "cls/predictions/output_bias",
                  "cls/seq_relationship/output_weights", "cls/seq_relationship/output_bias"]
    return sorted(names)


# The config.

@pytest.mark.parametrize("size", ["base", "large"])
def test_albert_configs_read_as_released_and_count_the_published_parameters(size):
    values = ALBERT_BASE if size == "base" else ALBERT_LARGE
    config = BertConfig.from_dict(values, f"albert_{size}_config.json")
    assert (config.embedding_size, config.num_hidden_groups, config.inner_group_num) == (128, 1, 1)
    encoder = build_encoder(config)
    assert encoder.count_params() == PUBLISHED_PARAMETERS[size]
    assert len(encoder.transformer_layers) == 1  # every layer the same block


def test_a_bert_config_is_written_without_the_extensions():
    written = json.loads(preset("tiny").to_json_string())
    original = {"vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads",
                "intermediate_size", "hidden_act", "hidden_dropout_prob",
                "attention_probs_dropout_prob", "max_position_embeddings", "type_vocab_size",
                "initializer_range"}
    assert set(written) == original
    albert = json.loads(small_albert(causal_attention=True).to_json_string())
    assert {k: albert[k] for k in ("embedding_size", "num_hidden_groups", "causal_attention")} \
        == {"embedding_size": 8, "num_hidden_groups": 2, "causal_attention": True}
    assert BertConfig.from_dict(albert) == small_albert(causal_attention=True)


@pytest.mark.parametrize("change, error", [
    ({"net_structure_type": 1}, "net_structure_type=1: ALBERT's experimental"),
    ({"num_hidden_groups": 13}, r"num_hidden_groups \(13\) is more than num_hidden_layers"),
    ({"embedding_size": 0}, "embedding_size must be positive"),
    ({"inner_group_num": 1.5}, "inner_group_num must be an integer"),
    ({"causal_attention": 1}, "causal_attention must be true or false"),
])
def test_bad_albert_fields_are_one_line_naming_the_file(change, error):
    with pytest.raises(ConfigError, match=f"^albert.json: {error}"):
        BertConfig.from_dict(dict(ALBERT_BASE, **change), "albert.json")


def test_layers_map_to_groups_as_albert_does():
    config = small_albert(num_hidden_layers=6, num_hidden_groups=4)
    # int(layer / 6 * 4): 0 0 1 2 2 3
    assert [config.group_of_layer(i) for i in range(6)] == [0, 0, 1, 2, 2, 3]


# The model against numpy ALBERT, through ALBERT's names.

@pytest.mark.parametrize("changes", [{}, {"num_hidden_groups": 1, "inner_group_num": 2},
                                     {"embedding_size": 32, "num_hidden_groups": 4}])
def test_the_model_computes_numpy_albert_from_its_tf1_names(changes):
    config = small_albert(**changes)
    model = BertPretrainer(build_encoder(config))
    feed = inputs()
    positions = np.tile(np.arange(7, dtype="int32"), (2, 1))
    model(dict(feed, masked_lm_positions=positions))
    randomize(model)
    weights = tf1.weights_of(model)
    expected_names = [n for n in albert_names(config)  # no projection when E = hidden
                      if config.embedding_width != config.hidden_size
                      or "embedding_hidden_mapping_in" not in n]
    assert sorted(weights) == expected_names
    sequence, pooled, logits = numpy_albert(weights, config, feed)
    encoded = model.encoder(feed)
    np.testing.assert_allclose(encoded["sequence_output"], sequence, atol=2e-4)
    np.testing.assert_allclose(encoded["pooled_output"], pooled, atol=2e-4)
    got = model(dict(feed, masked_lm_positions=positions))["masked_lm_logits"]
    real = feed["input_mask"].astype(bool)
    np.testing.assert_allclose(np.asarray(got)[real], logits[real], atol=5e-4)


def test_shared_layers_are_one_set_of_variables():
    config = small_albert(num_hidden_groups=1)
    encoder = build_encoder(config)
    unshared = build_encoder(dataclasses.replace(config, num_hidden_groups=None))
    block_variables = len(encoder.transformer_layers[0].weights)
    assert len(encoder.weights) == len(unshared.weights) - 3 * block_variables
    feed = inputs()
    before = [np.asarray(x) for x in encoder(feed)["encoder_outputs"]]
    kernel = encoder.transformer_layers[0].intermediate_dense.kernel
    kernel.assign(kernel.numpy() * 2.0)
    after = [np.asarray(x) for x in encoder(feed)["encoder_outputs"]]
    for layer in range(4):  # one change, every layer's output moves
        assert np.abs(after[layer] - before[layer]).max() > 1e-3


def test_albert_checkpoints_round_trip_in_the_tf1_and_tf2_formats(tmp_path):
    config = small_albert()
    model = BertPretrainer(build_encoder(config))
    model(dict(inputs(), masked_lm_positions=np.zeros((2, 2), "int32")))
    randomize(model)
    bundle = converter.Bundle(config, tf1.weights_of(model))
    for output_format in ("tf1", "tf2"):
        folder = tmp_path / output_format
        converter.write(output_format, bundle, str(folder))
        back = converter.read(output_format, str(folder))
        assert back.config == config
        assert sorted(back.weights) == sorted(bundle.weights)
        for name, value in bundle.weights.items():
            np.testing.assert_array_equal(back.weights[name], value)


@pytest.mark.parametrize("output_format, error", [
    ("hf", "Hugging Face's BERT format holds BERT alone, not ALBERT's layout"),
    ("keras_hub", "keras-hub's BertBackbone is BERT alone, not ALBERT's layout")])
def test_formats_without_albert_refuse_it_in_one_line(tmp_path, output_format, error):
    config = small_albert()
    bundle = converter.Bundle(config, tf1.weights_of(build_encoder(config)))
    with pytest.raises(ConfigError, match=error):
        converter.write(output_format, bundle, str(tmp_path / output_format))
    assert not (tmp_path / output_format).exists() or not any(
        p for p in (tmp_path / output_format).iterdir() if not p.name.startswith("."))


# Adaptation methods on shared layers.

@pytest.mark.parametrize("flags, added", [
    ({"lora_rank": 2}, ["bert/encoder/transformer/group_0/inner_group_0/attention_1/self/query"
                        "/lora_A", "bert/encoder/transformer/group_0/inner_group_0/attention_1/"
                        "self/value/lora_A"]),
    ({"adapter_size": 4}, ["bert/encoder/transformer/group_0/inner_group_0/attention_1/output/"
                           "adapters/weights1"])])
def test_peft_methods_go_on_the_shared_blocks_once(flags, added):
    from official.modeling.models import BertClassifier
    from official.peft import methods

    config = small_albert(num_hidden_groups=1)
    model = BertClassifier(build_encoder(config), 2)
    feed = inputs()
    before = np.asarray(model(feed))
    methods.apply(model, methods.from_flags(**flags))
    names = tf1.weights_of(model)
    for name in added:
        assert name in names
    new = sorted(set(names) - set(albert_names(config, heads=False)))
    assert len(new) == {"lora_rank": 4, "adapter_size": 8}[next(iter(flags))]  # one block's
    np.testing.assert_allclose(np.asarray(model(feed)), before, atol=1e-5)  # fresh: identity


def test_distilling_layers_out_of_an_albert_teacher_is_refused_in_one_line():
    from official.distillation.settings import DistillationSettings

    settings = DistillationSettings.from_flags(teacher_checkpoint="teacher", student_layers="0,2")
    with pytest.raises(ValueError, match="^--student_layers=0,2: the teacher has ALBERT's"):
        settings.student_config(small_albert())
