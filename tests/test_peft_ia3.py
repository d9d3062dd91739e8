"""official/peft/ia3.py and official/modeling/ia3.py: IA3 (Liu et al. 2022) against the paper's
formula in float64 numpy, what trains, folding, and the checkpoints of every format.

The reference layer is written from the paper (section 3.3) on BERT's post-LayerNorm block:
K = l_k * (x W_k + b_k), V = l_v * (x W_v + b_v), FF = (l_ff * gelu(h W_1 + b_1)) W_2 + b_2,
reading the weights by their original names, the IA3 vectors' included.
"""

import math

import numpy as np
import pytest

from official import checkpoints
from official.checkpoints import converter, tf1
from official.configs import preset
from official.modeling.encoder import build_encoder
from official.modeling.models import BertClassifier
from official.peft import artifact, ia3, merging, methods
from official.training import optimization
from tests.numpy_bert import gelu, layer_norm
from tests.peft_helpers import write_base, write_run

IA3 = methods.from_flags(ia3=True)


def ia3_layer_reference(x, mask, w, p, heads):
    """One BERT layer with IA3's vectors: x [batch, seq, H] float64, mask [batch, seq], w the
    weights by original name, p the layer's prefix (bert/encoder/layer_0)."""
    def dense(h, name):
        return h @ w[f"{p}/{name}/kernel"] + w[f"{p}/{name}/bias"]

    batch, seq, hidden = x.shape
    size = hidden // heads

    def split(t):  # [batch, seq, H] -> [batch, heads, seq, size]
        return t.reshape(batch, seq, heads, size).transpose(0, 2, 1, 3)

    q = dense(x, "attention/self/query")
    k = w[f"{p}/attention/self/key/ia3_scale"] * dense(x, "attention/self/key")  # l_k
    v = w[f"{p}/attention/self/value/ia3_scale"] * dense(x, "attention/self/value")  # l_v
    scores = split(q) @ split(k).transpose(0, 1, 3, 2) / math.sqrt(size)
    scores = scores + (1.0 - mask[:, None, None, :]) * -10000.0
    probs = np.exp(scores - scores.max(-1, keepdims=True))
    probs /= probs.sum(-1, keepdims=True)
    context = (probs @ split(v)).transpose(0, 2, 1, 3).reshape(batch, seq, hidden)
    h = layer_norm(x + dense(context, "attention/output/dense"),
                   w[f"{p}/attention/output/LayerNorm/gamma"],
                   w[f"{p}/attention/output/LayerNorm/beta"])
    inner = w[f"{p}/output/dense/ia3_input_scale"] * gelu(dense(h, "intermediate/dense"))  # l_ff
    return layer_norm(h + dense(inner, "output/dense"), w[f"{p}/output/LayerNorm/gamma"],
                      w[f"{p}/output/LayerNorm/beta"])


def randomized(model, seed=0, scale=0.3):
    """Every variable of `model` random (biases and IA3 vectors far from 0 and 1)."""
    rng = np.random.default_rng(seed)
    for variable in model.weights:
        variable.assign(rng.normal(0, scale, variable.shape).astype(np.float32) +
                        (1.0 if "scale" in variable.path else 0.0))
    return model


def test_the_flag_and_the_record():
    assert IA3.method == "ia3" and not IA3.train_pooler
    assert methods.from_dict(IA3.to_dict()) == IA3
    assert methods.from_flags(ia3=True, train_pooler=True).describe() == \
        "IA3 (scaled keys, values and feed-forward activations), pooler trained"
    with pytest.raises(ValueError, match="two methods"):
        methods.from_flags(ia3=True, lora_rank=2)


def test_a_layer_is_the_papers_formula_in_numpy(tiny_config, make_inputs):
    encoder = build_encoder(tiny_config)
    methods.apply(encoder, IA3)
    randomized(encoder)
    inputs = make_inputs(3, 9)
    x = np.asarray(encoder.embed(inputs["input_word_ids"], inputs["input_type_ids"]), np.float64)
    weights = {name: value.astype(np.float64) for name, value in tf1.weights_of(encoder).items()}

    got = encoder.forward(inputs, per_layer_outputs=True)["encoder_outputs"]
    for i in range(tiny_config.num_hidden_layers):
        x_next = ia3_layer_reference(x, inputs["input_mask"].astype(np.float64), weights,
                                     f"bert/encoder/layer_{i}", tiny_config.num_attention_heads)
        np.testing.assert_allclose(np.asarray(got[i]), x_next, atol=2e-4)
        x = np.asarray(got[i], np.float64)


def test_fresh_vectors_are_ones_and_leave_the_model_as_it_was(tiny_config, make_inputs):
    model = BertClassifier(build_encoder(tiny_config), 2)
    inputs = make_inputs(3, 9)
    before = np.asarray(model(inputs))
    methods.apply(model, IA3)
    vectors = {n: v.numpy() for n, v in tf1.original_names(model).items() if "/ia3_" in n}
    assert vectors and all((v == 1).all() for v in vectors.values())
    np.testing.assert_allclose(np.asarray(model(inputs)), before, atol=1e-6)


def test_only_the_vectors_and_the_head_train(tiny_config):
    model = BertClassifier(build_encoder(tiny_config), 2)
    methods.apply(model, IA3)
    h, i = tiny_config.hidden_size, tiny_config.intermediate_size
    shapes = {name: tuple(v.shape) for name, v in tf1.original_names(model).items()
              if v.trainable}
    assert shapes == {
        **{f"bert/encoder/layer_{n}/attention/self/{m}/ia3_scale": (h,)
           for n in range(tiny_config.num_hidden_layers) for m in ("key", "value")},
        **{f"bert/encoder/layer_{n}/output/dense/ia3_input_scale": (i,)
           for n in range(tiny_config.num_hidden_layers)}}
    head = {id(v) for v in model.classifier.weights}
    assert all(v.trainable for v in model.classifier.weights)
    assert all(not v.trainable for v in model.weights
               if id(v) not in head and "ia3" not in v.path)
    assert model.encoder.adapted_by == "ia3"


def test_weight_decay_leaves_the_vectors_at_one(tiny_config):
    """A step of the original's AdamW with no gradient: a decayed variable w becomes
    w - lr * rate * w (its Adam term is 0/(0 + eps)), and the vectors, which start at one as
    LayerNorm's gamma does, stay there as gamma does, rather than being pulled towards zero (the
    projections switched off)."""
    model = BertClassifier(build_encoder(tiny_config), 2)
    methods.apply(model, IA3)
    variables = model.trainable_variables
    before = [np.array(v) for v in variables]
    optimizer = optimization.create_optimizer(
        "adamw", 0.1, 10, 0, weight_decay_rate=0.5,
        decay_exempt=optimization.decay_exempt_variables(model))
    optimizer.apply([np.zeros(v.shape, np.float32) for v in variables], variables)
    for variable, value in zip(variables, before):
        if "ia3" in variable.path:
            np.testing.assert_array_equal(np.array(variable), np.ones(variable.shape))
        elif "kernel" in variable.path:  # the head's: decayed at the first step's rate, 0.1
            np.testing.assert_allclose(np.array(variable), value * (1 - 0.1 * 0.5), rtol=1e-6)
    assert any("kernel" in v.path for v in variables)


def test_bert_base_trains_the_papers_count():
    """L (2 H + I) = 12 (1536 + 3072) = 55,296 vectors' entries, 0.05% of BERT-Base."""
    model = BertClassifier(build_encoder(preset("base", vocab_size=30522)), 2)
    total = sum(int(np.prod(v.shape)) for v in model.encoder.weights)
    methods.apply(model, IA3)
    trained = sum(int(np.prod(v.shape)) for v in model.trainable_variables)
    assert trained - (2 * 768 + 2) == 55296
    assert 55296 / total < 0.0006


def test_fold_against_numpy_by_hand():
    rng = np.random.default_rng(0)
    k, f = "bert/encoder/layer_0/attention/self/key", "bert/encoder/layer_0/output/dense"
    weights = {f"{k}/kernel": rng.normal(size=(4, 4)), f"{k}/bias": rng.normal(size=4),
               f"{k}/ia3_scale": rng.normal(size=4), f"{f}/kernel": rng.normal(size=(6, 4)),
               f"{f}/bias": rng.normal(size=4), f"{f}/ia3_input_scale": rng.normal(size=6)}
    folded = ia3.fold_ia3(weights, IA3)
    assert sorted(folded) == sorted(n for n in weights if "ia3" not in n)
    x = rng.normal(size=(3, 4))
    np.testing.assert_allclose(x @ folded[f"{k}/kernel"] + folded[f"{k}/bias"],
                               weights[f"{k}/ia3_scale"] * (x @ weights[f"{k}/kernel"]
                                                            + weights[f"{k}/bias"]), rtol=1e-5)
    h = rng.normal(size=(3, 6))
    np.testing.assert_allclose(h @ folded[f"{f}/kernel"] + folded[f"{f}/bias"],
                               (weights[f"{f}/ia3_input_scale"] * h) @ weights[f"{f}/kernel"]
                               + weights[f"{f}/bias"], rtol=1e-5)
    np.testing.assert_array_equal(folded[f"{f}/bias"], weights[f"{f}/bias"])


def test_folded_it_computes_what_the_adapted_model_does(tiny_config, make_inputs, tmp_path):
    base = write_base(tiny_config, tmp_path / "base")
    adapted = write_run(base, IA3, tmp_path / "run")
    merged = merging.merged_model(adapted, BertClassifier(build_encoder(tiny_config), 2), IA3)
    inputs = make_inputs(3, 9)
    np.testing.assert_allclose(np.asarray(merged(inputs)), np.asarray(adapted(inputs)),
                               atol=1e-5)
    assert not merged.encoder.adapted


def test_the_runs_checkpoint_restores_it(tiny_config, make_inputs, tmp_path):
    """The run's checkpoint holds the vectors under their original names, and restores them on
    the base into a fresh model."""
    base = write_base(tiny_config, tmp_path / "base")
    adapted = write_run(base, IA3, tmp_path / "run")
    fresh = BertClassifier(build_encoder(tiny_config), 2)
    assert artifact.restore(fresh, str(tmp_path / "run")).settings == IA3
    inputs = make_inputs(2, 7)
    np.testing.assert_array_equal(np.asarray(fresh(inputs)), np.asarray(adapted(inputs)))


@pytest.mark.parametrize("output_format", ["tf1", "tf2", "hf", "keras_hub"])
def test_merged_it_is_a_plain_bert_in_every_format(tiny_config, make_inputs, tmp_path,
                                                   output_format):
    base = write_base(tiny_config, tmp_path / "base")
    adapted = write_run(base, IA3, tmp_path / "run")
    bundle = merging.merged_bundle(str(tmp_path / "run"))
    assert bundle.inserted is None
    out = str(tmp_path / output_format)
    converter.write(output_format, bundle, out)

    back = converter.read(output_format, out)
    assert not [name for name in back.weights if "ia3" in name]
    plain = build_encoder(tiny_config)
    checkpoints.load_init_checkpoint(out, plain)  # as any --init_checkpoint
    inputs = make_inputs(2, 7)
    np.testing.assert_allclose(np.asarray(plain(inputs)["sequence_output"]),
                               np.asarray(adapted.encoder(inputs)["sequence_output"]),
                               atol=1e-5)


def test_a_keras_file_carries_the_vectors(tmp_path):
    """A text model with IA3 saved as .keras: loading re-applies the method, then reads the
    vectors (random here, so a load that left them at ones would show)."""
    import keras
    import tensorflow as tf

    import official
    from official import api

    release = api.example_checkpoint(str(tmp_path / "release"))
    model = official.BertTextClassifier.from_checkpoint(release, num_classes=2, seq_length=16)
    model.adapt(IA3)
    randomized(model.model.encoder, seed=3)  # the frozen base too: any weight that fails shows
    texts = tf.constant(["the cat sat on the mat", "a dog"])
    saved = model(texts)
    model.save(str(tmp_path / "model.keras"))
    loaded = keras.models.load_model(str(tmp_path / "model.keras"))
    np.testing.assert_array_equal(loaded(texts), saved)
    vectors = [{n: v.numpy() for n, v in tf1.original_names(m.model).items() if "/ia3_" in n}
               for m in (model, loaded)]
    assert vectors[0].keys() == vectors[1].keys() and len(vectors[0]) == 6
    for name, value in vectors[0].items():
        assert np.abs(value - 1).max() > 0.1
        np.testing.assert_array_equal(vectors[1][name], value)
