import dataclasses
import math

import keras
import numpy as np
import pytest
import tensorflow as tf

from official import configs
from official.modeling import activations, models
from official.modeling.attention import SelfAttention
from official.modeling.embeddings import BertEmbeddings
from official.modeling.encoder import BertEncoder, build_encoder, encoder_inputs
from official.modeling.heads import DenseLogits, MaskedLMHead
from official.modeling.transformer import TransformerBlock

# Independent numpy references (float64).

def gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


def gelu_exact(x):
    return 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))


NUMPY_ACTIVATIONS = {"gelu": gelu_tanh, "gelu_exact": gelu_exact,
                     "relu": lambda x: np.maximum(x, 0)}


def layer_norm(x, gamma, beta, eps=1e-12):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * gamma + beta


def softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def weights_of(layer):
    """{"attention/qkv/kernel": array, ...}: a layer's weights by path below the layer."""
    prefix = layer.path + "/"
    return {w.path.removeprefix(prefix): w.numpy().astype(np.float64) for w in layer.weights}


def attention_reference(x, mask, w, num_heads):
    """Multi-head self-attention, (output, probs [batch, heads, query, key]); `w` holds a
    SelfAttention's weights, the fused qkv kernel's columns [q | k | v], each head-major."""
    batch, seq_len, hidden = x.shape
    head = hidden // num_heads
    qkv = x @ w["qkv/kernel"] + w["qkv/bias"]
    q, k, v = (qkv[..., i * hidden:(i + 1) * hidden].reshape(batch, seq_len, num_heads, head)
               for i in range(3))
    scores = np.einsum("bqnd,bknd->bnqk", q, k) / math.sqrt(head)
    scores = np.where(mask[:, None, None, :] == 1, scores, -np.inf)  # padding keys: weight 0
    probs = softmax(scores)
    context = np.einsum("bnqk,bknd->bqnd", probs, v).reshape(batch, seq_len, hidden)
    return context @ w["output_dense/kernel"] + w["output_dense/bias"], probs


def block_reference(x, mask, w, num_heads, act):
    """One post-LN BERT layer, (output, attention probs)."""
    attention = {k.removeprefix("attention/"): v for k, v in w.items()
                 if k.startswith("attention/")}
    attended, probs = attention_reference(x, mask, attention, num_heads)
    x = layer_norm(x + attended, w["attention_layer_norm/gamma"], w["attention_layer_norm/beta"])
    h = act(x @ w["intermediate_dense/kernel"] + w["intermediate_dense/bias"])
    h = h @ w["output_dense/kernel"] + w["output_dense/bias"]
    return layer_norm(x + h, w["output_layer_norm/gamma"], w["output_layer_norm/beta"]), probs


def encoder_reference(inputs, encoder):
    """(sequence, pooled, every layer's output, every layer's attention probs)."""
    config = encoder.config
    ids, mask, types = (inputs[k] for k in ("input_word_ids", "input_mask", "input_type_ids"))
    e = weights_of(encoder.embeddings)
    x = (e["word_embeddings"][ids] + e["token_type_embeddings"][types]
         + e["position_embeddings"][:ids.shape[1]])
    x = layer_norm(x, e["layer_norm/gamma"], e["layer_norm/beta"])
    layer_outputs, layer_probs = [], []
    for layer in encoder.transformer_layers:
        x, probs = block_reference(x, mask, weights_of(layer), config.num_attention_heads,
                                   NUMPY_ACTIVATIONS[config.hidden_act])
        layer_outputs.append(x)
        layer_probs.append(probs)
    p = weights_of(encoder.pooler)
    pooled = np.tanh(x[:, 0] @ p["kernel"] + p["bias"])
    return x, pooled, layer_outputs, layer_probs


def randomize(layer, seed=1, scale=0.3):
    """Every weight (LayerNorm scales and biases too) drawn at random, so no term is trivial."""
    rng = np.random.default_rng(seed)
    for w in layer.weights:
        w.assign(rng.normal(0.0, scale, w.shape).astype(w.dtype))


def np_out(outputs):
    return tf.nest.map_structure(lambda t: np.asarray(t, np.float32), outputs)


@pytest.fixture
def encoder(tiny_config):
    return build_encoder(tiny_config)


# Activations.

def test_gelu_is_the_tanh_approximation():
    x = np.concatenate([np.linspace(-6, 6, 121), [1.5]]).astype(np.float32)
    np.testing.assert_allclose(activations.get("gelu")(x), gelu_tanh(x.astype(np.float64)),
                               atol=1e-6)
    np.testing.assert_allclose(activations.get("gelu_exact")(x), gelu_exact(x.astype(np.float64)),
                               atol=1e-6)


def test_the_two_gelus_differ_measurably():
    x = np.array([1.5], np.float32)
    difference = float(activations.get("gelu")(x)[0]) - float(activations.get("gelu_exact")(x)[0])
    assert abs(difference) > 2e-4  # 1.39957 vs 1.39979: far above float32 rounding (1e-7)


def test_unknown_activation():
    with pytest.raises(ValueError, match="gelu_new"):
        activations.get("gelu_new")


# Against numpy.

@pytest.mark.parametrize("hidden_act", ["gelu", "gelu_exact", "relu"])
def test_transformer_block_matches_numpy(make_inputs, hidden_act):
    block = TransformerBlock(num_heads=4, intermediate_size=48, hidden_act=hidden_act)
    block.build((None, None, 32))
    randomize(block)
    x = np.random.default_rng(2).normal(size=(3, 7, 32)).astype(np.float32)
    mask = make_inputs(3, 7)["input_mask"]
    assert mask.min() == 0  # some keys are padding

    expected, _ = block_reference(x.astype(np.float64), mask, weights_of(block), 4,
                                  NUMPY_ACTIVATIONS[hidden_act])
    np.testing.assert_allclose(block(x, mask), expected, atol=1e-5)


def test_first_token_only_is_the_blocks_first_row(make_inputs):
    """The [CLS]-only path a classifier's last layer takes: the numpy block's row 0."""
    block = TransformerBlock(num_heads=4, intermediate_size=48, hidden_act="gelu")
    block.build((None, None, 32))
    randomize(block)
    x = np.random.default_rng(3).normal(size=(3, 7, 32)).astype(np.float32)
    mask = make_inputs(3, 7)["input_mask"]
    expected, _ = block_reference(x.astype(np.float64), mask, weights_of(block), 4,
                                  NUMPY_ACTIVATIONS["gelu"])
    first = block(x, mask, first_token_only=True)
    assert first.shape == (3, 1, 32)
    np.testing.assert_allclose(first, expected[:, :1], atol=1e-5)


@pytest.mark.parametrize("first_token_only", [False, True])
def test_transformer_block_returns_its_attention_probs(make_inputs, first_token_only):
    """The same output as without them, and the numpy block's softmax (row 0 alone for a
    classifier's last layer)."""
    block = TransformerBlock(num_heads=4, intermediate_size=48, hidden_act="gelu")
    block.build((None, None, 32))
    randomize(block)
    x = np.random.default_rng(4).normal(size=(3, 7, 32)).astype(np.float32)
    mask = make_inputs(3, 7)["input_mask"]
    _, expected = block_reference(x.astype(np.float64), mask, weights_of(block), 4,
                                  NUMPY_ACTIVATIONS["gelu"])
    output, probs = block(x, mask, first_token_only=first_token_only,
                          return_attention_probs=True)
    np.testing.assert_array_equal(output, block(x, mask, first_token_only=first_token_only))
    rows = 1 if first_token_only else 7
    assert probs.shape == (3, 4, rows, 7) and probs.dtype == "float32"
    np.testing.assert_allclose(probs, expected[:, :, :rows], atol=1e-6)


@pytest.mark.parametrize("last_layer_positions", ["all", "first"])
def test_forward_matches_numpy(encoder, make_inputs, last_layer_positions):
    """Every output `forward` can give, against the numpy encoder, called on tensors and in a
    functional model built on it (as models.py builds its models)."""
    randomize(encoder)
    inputs = make_inputs(3, 9)
    sequence, pooled, layers, probs = encoder_reference(inputs, encoder)
    rows = 1 if last_layer_positions == "first" else 9
    symbolic = encoder_inputs()
    model = keras.Model(symbolic, encoder.forward(
        symbolic, last_layer_positions=last_layer_positions, per_layer_outputs=True,
        attention_probs=True))
    for outputs in (encoder.forward(inputs, last_layer_positions=last_layer_positions,
                                    per_layer_outputs=True, attention_probs=True),
                    model(inputs)):
        outputs = np_out(outputs)
        np.testing.assert_allclose(outputs["sequence_output"], sequence[:, :rows], atol=1e-5)
        np.testing.assert_allclose(outputs["pooled_output"], pooled, atol=1e-5)
        *got_layers, got_last = outputs["encoder_outputs"]
        for got, want in zip(got_layers, layers[:-1], strict=True):
            np.testing.assert_allclose(got, want, atol=1e-5)
        np.testing.assert_allclose(got_last, layers[-1][:, :rows], atol=1e-5)
        *got_probs, got_last = outputs["attention_probs"]
        for got, want in zip(got_probs, probs[:-1], strict=True):
            assert got.shape == (3, 4, 9, 9)
            np.testing.assert_allclose(got, want, atol=1e-6)
        assert got_last.shape == (3, 4, rows, 9)
        np.testing.assert_allclose(got_last, probs[-1][:, :, :rows], atol=1e-6)


def test_forward_returns_what_it_is_asked_for(encoder, make_inputs):
    inputs = make_inputs(2, 5)
    assert set(encoder.forward(inputs)) == {"sequence_output", "pooled_output"}
    # The encoder's own graph is forward with every layer's output.
    tf.nest.map_structure(np.testing.assert_array_equal, np_out(encoder(inputs)),
                          np_out(encoder.forward(inputs, per_layer_outputs=True)))
    with pytest.raises(ValueError, match="last_layer_positions.*'cls'"):
        encoder.forward(inputs, last_layer_positions="cls")


def test_forward_attention_probs_under_a_mixed_policy(tiny_config, make_inputs):
    """float32 whatever the compute dtype: the softmax runs in float32 and is returned as is."""
    encoder = build_encoder(tiny_config, dtype="mixed_bfloat16")
    outputs = encoder.forward(make_inputs(2, 5), attention_probs=True)
    assert outputs["sequence_output"].dtype == "bfloat16"
    assert all(p.dtype == "float32" for p in outputs["attention_probs"])


def test_encoder_matches_numpy(encoder, make_inputs):
    randomize(encoder)
    inputs = make_inputs(3, 9)

    sequence, pooled, layers, _ = encoder_reference(inputs, encoder)
    outputs = np_out(encoder(inputs))
    np.testing.assert_allclose(outputs["sequence_output"], sequence, atol=1e-5)
    np.testing.assert_allclose(outputs["pooled_output"], pooled, atol=1e-5)
    for got, want in zip(outputs["encoder_outputs"], layers, strict=True):
        np.testing.assert_allclose(got, want, atol=1e-5)


# Padding.

def append_padding(inputs, extra, seed=5):
    """`extra` more positions with random ("garbage") word and segment ids and mask 0."""
    rng = np.random.default_rng(seed)
    batch = inputs["input_mask"].shape[0]
    garbage = {"input_word_ids": rng.integers(0, 100, (batch, extra)),
               "input_mask": np.zeros((batch, extra)),
               "input_type_ids": rng.integers(0, 2, (batch, extra))}
    return {k: np.concatenate([v, garbage[k]], axis=1).astype("int32") for k, v in inputs.items()}


@pytest.mark.parametrize("batch, seq_len, extra", [(1, 4, 1), (2, 9, 5), (4, 16, 30)])
def test_padding_does_not_change_real_tokens(tiny_config, make_inputs, batch, seq_len, extra):
    # Larger weights than BERT's 0.02 make attention far from uniform, so a leak would show.
    encoder = build_encoder(dataclasses.replace(tiny_config, initializer_range=0.3))
    inputs = make_inputs(batch, seq_len, seed=seq_len)
    real = inputs["input_mask"].astype(bool)

    out = np_out(encoder(inputs))
    padded = np_out(encoder(append_padding(inputs, extra)))

    np.testing.assert_allclose(padded["sequence_output"][:, :seq_len][real],
                               out["sequence_output"][real], atol=1e-5)
    np.testing.assert_allclose(padded["pooled_output"], out["pooled_output"], atol=1e-5)
    # Each row alone, cut to its real length, is what the padded batch computed for it.
    for row, length in enumerate(real.sum(axis=1)):
        alone = np_out(encoder({k: v[row:row + 1, :length] for k, v in inputs.items()}))
        np.testing.assert_allclose(alone["sequence_output"][0],
                                   padded["sequence_output"][row, :length], atol=1e-5)
        np.testing.assert_allclose(alone["pooled_output"][0], padded["pooled_output"][row],
                                   atol=1e-5)


# Saving.

MODELS = {
    "encoder": lambda encoder: encoder,
    "pretrainer": models.BertPretrainer,
    "classifier": lambda encoder: models.BertClassifier(encoder, num_labels=3),
    "span_labeler": models.BertSpanLabeler,
    "token_classifier": lambda encoder: models.BertTokenClassifier(encoder, num_labels=5),
}


@pytest.mark.parametrize("name", MODELS)
def test_keras_file_round_trip(encoder, make_inputs, tmp_path, name):
    model = MODELS[name](encoder)
    inputs = make_inputs(2, 6)
    if name == "pretrainer":
        inputs["masked_lm_positions"] = np.array([[1, 3], [0, 2]], "int32")
    path = str(tmp_path / f"{name}.keras")

    model.save(path)
    loaded = keras.models.load_model(path)

    assert type(loaded) is type(model)
    assert loaded.count_params() == model.count_params()
    tf.nest.map_structure(np.testing.assert_array_equal, np_out(loaded(inputs)),
                          np_out(model(inputs)))
    if name == "pretrainer":
        assert loaded.masked_lm.embeddings is loaded.encoder.embeddings  # still tied


# Configs of custom layers.

def layers_to_serialize(config):
    embeddings = BertEmbeddings(100, 32, 64, 2, initializer_range=0.05, dropout_rate=0.2,
                                name="emb")
    return {
        "embeddings": (embeddings, {"vocab_size": 100, "hidden_size": 32,
                                    "max_position_embeddings": 64, "type_vocab_size": 2,
                                    "initializer_range": 0.05, "dropout_rate": 0.2}),
        "attention": (SelfAttention(4, initializer_range=0.05, dropout_rate=0.2),
                      {"num_heads": 4, "initializer_range": 0.05, "dropout_rate": 0.2}),
        "block": (TransformerBlock(4, 48, "gelu_exact", 0.2, 0.3, 0.05),
                  {"num_heads": 4, "intermediate_size": 48, "hidden_act": "gelu_exact",
                   "hidden_dropout_prob": 0.2, "attention_probs_dropout_prob": 0.3,
                   "initializer_range": 0.05}),
        "masked_lm": (MaskedLMHead(embeddings, "relu", 0.05),
                      {"hidden_act": "relu", "initializer_range": 0.05}),
        "dense_logits": (DenseLogits(7, 0.2, 0.05),
                         {"num_outputs": 7, "dropout_rate": 0.2, "initializer_range": 0.05}),
        "encoder": (BertEncoder(**config.to_dict()), config.to_dict()),
    }


@pytest.mark.parametrize("name", ["embeddings", "attention", "block", "masked_lm",
                                  "dense_logits", "encoder"])
def test_get_config_from_config(tiny_config, name):
    layer, expected = layers_to_serialize(tiny_config)[name]
    config = layer.get_config()
    assert {k: config[k] for k in expected} == expected

    clone = type(layer).from_config(config)
    assert type(clone) is type(layer)
    assert clone.get_config() == config
    # And through Keras's registry, as load_model resolves it.
    again = keras.layers.deserialize(keras.layers.serialize(layer))
    assert type(again) is type(layer) and again.get_config() == config


def test_masked_lm_head_config_carries_the_embeddings_config():
    embeddings = BertEmbeddings(100, 32, 64, 2)
    clone = MaskedLMHead.from_config(MaskedLMHead(embeddings).get_config())
    assert isinstance(clone.embeddings, BertEmbeddings)
    assert clone.embeddings.get_config() == embeddings.get_config()


# Mixed precision.

@pytest.mark.parametrize("policy, compute_dtype, atol", [
    # Measured max |difference| over 5 seeds: bfloat16 (8-bit mantissa) 0.034 on the
    # LayerNorm-ed O(1) sequence output, float16 (11-bit) 0.005; logits and pooled less.
    ("mixed_bfloat16", "bfloat16", 5e-2),
    ("mixed_float16", "float16", 1e-2),
])
def test_mixed_precision(tiny_config, make_inputs, policy, compute_dtype, atol):
    reference = models.BertPretrainer(build_encoder(tiny_config))
    mixed = models.BertPretrainer(build_encoder(tiny_config, dtype=policy))
    mixed.set_weights(reference.get_weights())
    inputs = make_inputs(3, 10)
    inputs["masked_lm_positions"] = np.array([[0, 4]] * 3, "int32")
    encoder_inputs = {k: v for k, v in inputs.items() if k != "masked_lm_positions"}

    out = mixed.encoder(encoder_inputs)
    assert out["sequence_output"].dtype == compute_dtype
    assert out["pooled_output"].dtype == compute_dtype
    assert all(t.dtype == compute_dtype for t in out["encoder_outputs"])
    assert {w.dtype for w in mixed.weights} == {"float32"}
    logits = mixed(inputs)
    assert logits["masked_lm_logits"].dtype == "float32"
    assert logits["next_sentence_logits"].dtype == "float32"
    assert models.BertClassifier(mixed.encoder, 2)(encoder_inputs).dtype == "float32"
    # The heads themselves, outside a model (a functional model may cast its outputs anyway).
    sequence = out["sequence_output"]
    assert mixed.masked_lm(sequence, inputs["masked_lm_positions"]).dtype == "float32"
    assert DenseLogits(2, dtype=policy)(sequence).dtype == "float32"

    want = np_out(reference.encoder(encoder_inputs))
    got = np_out(out)
    real = inputs["input_mask"].astype(bool)
    np.testing.assert_allclose(got["sequence_output"][real], want["sequence_output"][real],
                               atol=atol)
    np.testing.assert_allclose(got["pooled_output"], want["pooled_output"], atol=atol)
    tf.nest.map_structure(lambda a, b: np.testing.assert_allclose(a, b, atol=atol),
                          np_out(logits), np_out(reference(inputs)))


def test_mixed_policy_reaches_the_encoder_and_the_heads(tiny_config):
    encoder = build_encoder(tiny_config, dtype="mixed_bfloat16")
    assert encoder.dtype_policy.name == "mixed_bfloat16"
    pretrainer = models.BertPretrainer(encoder)
    # The heads take the encoder's policy: the vocab-sized decoder matmul runs in bfloat16.
    assert pretrainer.masked_lm.compute_dtype == "bfloat16"
    assert pretrainer.next_sentence.compute_dtype == "bfloat16"


@pytest.mark.parametrize("policy", ["mixed_bfloat16", "mixed_float16"])
def test_masked_lm_head_under_a_mixed_policy(policy):
    embeddings = BertEmbeddings(100, 32, 64, 2, dtype=policy)
    embeddings.build((None, None))
    head = MaskedLMHead(embeddings, dtype=policy)
    sequence = keras.ops.ones((2, 6, 32), head.compute_dtype)
    logits = head(sequence, np.array([[1, 3], [0, 5]], "int32"))
    assert logits.shape == (2, 2, 100) and logits.dtype == "float32"


def test_mixed_policy_survives_a_keras_file(tiny_config, make_inputs, tmp_path):
    encoder = build_encoder(tiny_config, dtype="mixed_bfloat16")
    encoder.save(tmp_path / "mixed.keras")
    loaded = keras.models.load_model(tmp_path / "mixed.keras")
    assert loaded.embeddings.dtype_policy.name == "mixed_bfloat16"
    assert loaded(make_inputs(2, 5))["sequence_output"].dtype == "bfloat16"


# XLA.

def test_jit_compile_matches_eager(encoder, make_inputs):
    inputs = make_inputs(3, 11)
    compiled = tf.function(lambda x: encoder(x), jit_compile=True)
    tf.nest.map_structure(lambda a, b: np.testing.assert_allclose(a, b, atol=1e-5),
                          np_out(compiled(inputs)), np_out(encoder(inputs)))


# Dropout.

@pytest.mark.parametrize("hidden_dropout, attention_dropout", [(0.1, 0.0), (0.0, 0.1)])
def test_dropout_only_in_training(tiny_config, make_inputs, hidden_dropout, attention_dropout):
    encoder = build_encoder(dataclasses.replace(
        tiny_config, hidden_dropout_prob=hidden_dropout,
        attention_probs_dropout_prob=attention_dropout))
    inputs = make_inputs(2, 8)
    def run(training):
        return np_out(encoder(inputs, training=training))["sequence_output"]

    inference = run(False)
    np.testing.assert_array_equal(run(False), inference)
    np.testing.assert_array_equal(np_out(encoder(inputs))["sequence_output"], inference)
    first, second = run(True), run(True)
    assert np.abs(first - inference).max() > 1e-3
    assert np.abs(first - second).max() > 1e-3


def test_no_dropout_means_training_changes_nothing(tiny_config, make_inputs):
    encoder = build_encoder(dataclasses.replace(
        tiny_config, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0))
    inputs = make_inputs(2, 8)
    np.testing.assert_array_equal(np_out(encoder(inputs, training=True)["sequence_output"]),
                                  np_out(encoder(inputs, training=False)["sequence_output"]))


# Masked-LM head.

def test_masked_lm_head_is_tied_to_the_word_embeddings(encoder):
    pretrainer = models.BertPretrainer(encoder)
    head = pretrainer.masked_lm
    assert head.embeddings is encoder.embeddings
    # Its only weights beyond the encoder: transform dense, LayerNorm, output bias (no decoder).
    H, V = 32, 100
    assert pretrainer.count_params() == (encoder.count_params() + (H * H + H) + 2 * H + V
                                         + (H * 2 + 2))

    randomize(head, seed=4)  # transform weights, output bias (and the embeddings, a sublayer)
    rng = np.random.default_rng(3)
    table = rng.normal(size=(V, H)).astype(np.float32)
    encoder.embeddings.word_embeddings.assign(table)  # through the encoder, not the head
    sequence = rng.normal(size=(2, 6, H)).astype(np.float32)
    positions = np.array([[1, 3], [5, 0]], "int32")

    w = weights_of(head)
    gathered = np.take_along_axis(sequence, positions[:, :, None], axis=1).astype(np.float64)
    x = gelu_tanh(gathered @ w["transform_dense/kernel"] + w["transform_dense/bias"])
    x = layer_norm(x, w["transform_layer_norm/gamma"], w["transform_layer_norm/beta"])
    expected = x @ table.T.astype(np.float64) + w["output_bias"]

    logits = head(sequence, positions)
    assert logits.shape == (2, 2, V) and logits.dtype == "float32"
    np.testing.assert_allclose(logits, expected, rtol=1e-5, atol=1e-4)


def test_masked_lm_head_gathers_positions(encoder):
    head = models.BertPretrainer(encoder).masked_lm
    sequence = np.random.default_rng(6).normal(size=(2, 6, 32)).astype(np.float32)

    every = np.asarray(head(sequence, None))
    some = np.asarray(head(sequence, np.array([[1, 3], [1, 3]], "int32")))

    assert every.shape == (2, 6, 100)
    np.testing.assert_allclose(some, every[:, [1, 3]], atol=1e-5)
    assert np.abs(every[:, 1] - every[:, 3]).max() > 1e-3  # the two positions are distinguishable


def test_a_config_key_this_version_lacks_is_refused_not_dropped():
    """A newer version's .keras file (a bare encoder saved on its own) would load here without
    its setting: refused, with the field a near-miss may mean."""
    config = configs.BertConfig(vocab_size=20, hidden_size=8, num_hidden_layers=1,
                        num_attention_heads=2, intermediate_size=16).to_dict()
    with pytest.raises(ValueError, match="unknown key rotary_embeddings; a newer version"):
        BertEncoder.from_config(dict(config, rotary_embeddings=True))
    with pytest.raises(ValueError, match=r"unknown key num_hidden_layer \(did you mean "
                                         r"num_hidden_layers\?\)"):
        BertEncoder.from_config(dict(config, num_hidden_layer=1))
