"""Original TF1 checkpoints load into our model, and our TF1/TF2 checkpoints round-trip."""

import numpy as np
import pytest
import tensorflow as tf

from official import checkpoints
from official.checkpoints import tf1, tf2
from official.modeling.encoder import build_encoder
from official.modeling.models import BertClassifier, BertPretrainer
from tests.checkpoint_helpers import original_weights, set_directly


def write_like_the_original(weights: dict, prefix: str) -> None:
    """A checkpoint as google-research/bert's Estimator wrote it: TF1 graph variables saved by a
    Saver, with Adam slots and a global step beside the weights."""
    graph = tf.Graph()
    with graph.as_default():
        for name, value in weights.items():
            tf.compat.v1.get_variable(name, initializer=value)
            tf.compat.v1.get_variable(name + "/adam_m", initializer=np.zeros_like(value))
            tf.compat.v1.get_variable(name + "/adam_v", initializer=np.zeros_like(value))
        tf.compat.v1.train.get_or_create_global_step()
        saver = tf.compat.v1.train.Saver()
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            saver.save(session, prefix)


def pretrainer_inputs(make_inputs):
    inputs = make_inputs(batch=3, seq_len=10)
    inputs["masked_lm_positions"] = np.array([[1, 2, 5], [0, 3, 4], [2, 2, 1]], "int32")
    return inputs


def test_original_checkpoint_loads_like_weights_set_by_hand(tiny_config, make_inputs, tmp_path):
    weights = original_weights(tiny_config)
    write_like_the_original(weights, str(tmp_path / "bert_model.ckpt"))

    loaded = BertPretrainer(build_encoder(tiny_config))
    checkpoints.load_init_checkpoint(str(tmp_path / "bert_model.ckpt"), loaded)
    by_hand = BertPretrainer(build_encoder(tiny_config))
    set_directly(by_hand, weights)

    inputs = pretrainer_inputs(make_inputs)
    for key, value in by_hand(inputs).items():
        np.testing.assert_allclose(loaded(inputs)[key], value, atol=1e-6, err_msg=key)


def test_directory_resolves_to_bert_model_ckpt(tiny_config, tmp_path):
    write_like_the_original(original_weights(tiny_config), str(tmp_path / "bert_model.ckpt"))
    assert checkpoints.resolve_checkpoint(str(tmp_path)) == str(tmp_path / "bert_model.ckpt")


def test_classifier_takes_the_encoder_of_a_pretraining_checkpoint(tiny_config, tmp_path):
    weights = original_weights(tiny_config)
    write_like_the_original(weights, str(tmp_path / "bert_model.ckpt"))
    classifier = BertClassifier(build_encoder(tiny_config), num_labels=3)
    checkpoints.load_init_checkpoint(str(tmp_path / "bert_model.ckpt"), classifier)
    np.testing.assert_array_equal(classifier.encoder.pooler.kernel.numpy(),
                                  weights["bert/pooler/dense/kernel"])


def test_wrong_shape_fails_loudly_and_assigns_nothing(tiny_config, tmp_path):
    weights = original_weights(tiny_config)
    weights["bert/encoder/layer_1/intermediate/dense/kernel"] = np.zeros((32, 65), "float32")
    write_like_the_original(weights, str(tmp_path / "bert_model.ckpt"))
    model = BertPretrainer(build_encoder(tiny_config))
    before = model.encoder.embeddings.word_embeddings.numpy().copy()
    with pytest.raises(checkpoints.CheckpointMismatchError) as error:
        checkpoints.load_init_checkpoint(str(tmp_path / "bert_model.ckpt"), model)
    message = str(error.value)
    assert "\n" not in message
    assert "bert/encoder/layer_1/intermediate/dense/kernel checkpoint [32, 65] vs model [32, 64]" \
        in message
    np.testing.assert_array_equal(model.encoder.embeddings.word_embeddings.numpy(), before)


def test_missing_and_unexpected_variables_are_listed(tiny_config, tmp_path):
    weights = original_weights(tiny_config)
    del weights["bert/pooler/dense/bias"]
    weights["bert/encoder/layer_2/output/dense/bias"] = np.zeros(32, "float32")
    tf1.write(weights, str(tmp_path / "ckpt"))
    with pytest.raises(checkpoints.CheckpointMismatchError,
                       match=r"1 variable missing from the checkpoint "
                             r"\(bert/pooler/dense/bias \[32\]\); "
                             r"1 variable unexpected \(bert/encoder/layer_2/output/dense/bias "
                             r"\[32\]\)"):
        checkpoints.load_init_checkpoint(str(tmp_path / "ckpt"), build_encoder(tiny_config))


def test_partial_head_is_an_error_but_an_absent_head_keeps_its_init(tiny_config, tmp_path):
    weights = original_weights(tiny_config)
    encoder_only = {k: v for k, v in weights.items() if k.startswith("bert/")}
    tf1.write(encoder_only, str(tmp_path / "encoder"))
    model = BertPretrainer(build_encoder(tiny_config))
    head_before = model.masked_lm.output_bias.numpy().copy()
    checkpoints.load_init_checkpoint(str(tmp_path / "encoder"), model)
    np.testing.assert_array_equal(model.masked_lm.output_bias.numpy(), head_before)

    del weights["cls/predictions/output_bias"]
    tf1.write(weights, str(tmp_path / "partial"))
    with pytest.raises(checkpoints.CheckpointMismatchError,
                       match=r"1 variable missing from the checkpoint "
                             r"\(cls/predictions/output_bias \[100\]\)"):
        checkpoints.load_init_checkpoint(str(tmp_path / "partial"),
                                         BertPretrainer(build_encoder(tiny_config)))


@pytest.mark.parametrize("writer", [tf1.write, tf2.write], ids=["tf1", "tf2"])
def test_our_checkpoints_round_trip(tiny_config, tmp_path, writer):
    model = BertPretrainer(build_encoder(tiny_config))
    writer(tf1.weights_of(model), str(tmp_path / "bert_model.ckpt"))
    assert tf2.is_tf2_checkpoint(str(tmp_path / "bert_model.ckpt")) == (writer is tf2.write)
    restored = BertPretrainer(build_encoder(tiny_config))
    checkpoints.load_init_checkpoint(str(tmp_path), restored)
    for a, b in zip(model.weights, restored.weights):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_our_tf1_checkpoint_reads_in_tf1_code(tiny_config, tmp_path):
    """The original restores by name with a Saver; our file must satisfy exactly that."""
    weights = original_weights(tiny_config)
    tf1.write(weights, str(tmp_path / "bert_model.ckpt"))
    graph = tf.Graph()
    with graph.as_default():
        variables = {n: tf.compat.v1.get_variable(n, shape=v.shape) for n, v in weights.items()}
        saver = tf.compat.v1.train.Saver(variables)
        with tf.compat.v1.Session() as session:
            saver.restore(session, str(tmp_path / "bert_model.ckpt"))
            values = session.run(variables)
    for name, value in weights.items():
        np.testing.assert_array_equal(values[name], value)


def test_missing_checkpoint_is_a_one_line_error(tmp_path):
    with pytest.raises(checkpoints.CheckpointError, match=r"no checkpoint there"):
        checkpoints.read_weights(str(tmp_path / "nothing"))
    # A folder: what it lacks, every kind of weights an --init_checkpoint may be.
    with pytest.raises(checkpoints.CheckpointError,
                       match=rf"^{tmp_path}: no checkpoint there \(a folder without a "
                             r"'checkpoint' file, bert_model.ckpt.index, Hugging Face "
                             r"model.safetensors or keras-hub metadata.json\)$"):
        checkpoints.read_weights(str(tmp_path))


def test_an_adapted_encoders_names_are_adapter_berts_and_loras(tiny_config, tmp_path):
    """The shapes written out by hand: adapter-bert's weights1 [H, m], biases1 [1, m],
    weights2 [m, H], biases2 [1, H]; LoRA's A [in, r] and B [r, out] beside each matrix."""
    from official.peft import methods

    h, m, r = tiny_config.hidden_size, 6, 3
    adapted = build_encoder(tiny_config)
    methods.apply(adapted, methods.from_flags(adapter_size=m))
    names = {n: v.shape for n, v in tf1.weights_of(adapted).items() if "adapters" in n}
    for layer in range(tiny_config.num_hidden_layers):
        for place in ("attention/output", "output"):
            p = f"bert/encoder/layer_{layer}/{place}/adapters"
            assert (names.pop(f"{p}/weights1"), names.pop(f"{p}/biases1"),
                    names.pop(f"{p}/weights2"), names.pop(f"{p}/biases2")) == (
                (h, m), (1, m), (m, h), (1, h))
    assert not names

    lora = build_encoder(tiny_config)
    methods.apply(lora, methods.from_flags(lora_rank=r, lora_targets="value|intermediate"))
    names = {n: v.shape for n, v in tf1.weights_of(lora).items() if "lora" in n}
    i = tiny_config.intermediate_size
    assert names == {
        **{f"bert/encoder/layer_{n}/attention/self/value/lora_{x}": s
           for n in range(tiny_config.num_hidden_layers) for x, s in (("A", (h, r)),
                                                                      ("B", (r, h)))},
        **{f"bert/encoder/layer_{n}/intermediate/dense/lora_{x}": s
           for n in range(tiny_config.num_hidden_layers) for x, s in (("A", (h, r)),
                                                                      ("B", (r, i)))}}
    # All or nothing as ever: an adapted model round-trips; a plain one refuses the names.
    twin = build_encoder(tiny_config)
    methods.apply(twin, methods.from_flags(lora_rank=r, lora_targets="value|intermediate"))
    tf1.assign(twin, tf1.weights_of(lora), "lora")
    for a, b in zip(twin.weights, lora.weights):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    with pytest.raises(checkpoints.CheckpointMismatchError, match="unexpected .*lora_A"):
        tf1.assign(build_encoder(tiny_config), tf1.weights_of(lora), "lora")


def test_extra_variables_inside_the_layers_are_said_to_need_their_run(tiny_config, tmp_path):
    """A checkpoint that keeps a method's unfolded variables (adapter-bert's names, inside the
    model's layers) is refused saying how to read it; one of a deeper model is not."""
    weights = original_weights(tiny_config)
    kept = dict(weights, **{"bert/encoder/layer_0/output/adapters/weights1":
                            np.zeros((32, 4), "float32")})
    with pytest.raises(checkpoints.CheckpointMismatchError,
                       match=r"1 variable unexpected \(bert/encoder/layer_0/output/adapters/"
                             r"weights1 \[32, 4\]\): the extra variables sit inside the model's "
                             r"layers, .*--peft_checkpoint=<the run>\)$"):
        tf1.assign(build_encoder(tiny_config), kept, "kept")
    deeper = dict(weights, **{"bert/encoder/layer_9/output/dense/bias": np.zeros(32, "float32")})
    with pytest.raises(checkpoints.CheckpointMismatchError, match=r"unexpected \([^)]*\)$"):
        tf1.assign(build_encoder(tiny_config), deeper, "deeper")
