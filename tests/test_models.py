import numpy as np
import pytest
import tensorflow as tf

from official.modeling import models
from official.modeling.encoder import build_encoder


@pytest.fixture
def encoder(tiny_config):
    return build_encoder(tiny_config)


@pytest.mark.parametrize("batch, seq_len", [(1, 5), (3, 12)])
def test_encoder_outputs(encoder, make_inputs, batch, seq_len):
    outputs = encoder(make_inputs(batch, seq_len))
    assert outputs["sequence_output"].shape == (batch, seq_len, 32)
    assert outputs["pooled_output"].shape == (batch, 32)
    assert len(outputs["encoder_outputs"]) == 2
    for layer_output in outputs["encoder_outputs"]:
        assert layer_output.shape == (batch, seq_len, 32) and layer_output.dtype == "float32"
    assert outputs["sequence_output"].dtype == outputs["pooled_output"].dtype == "float32"
    np.testing.assert_array_equal(outputs["encoder_outputs"][-1], outputs["sequence_output"])


@pytest.mark.parametrize("batch, seq_len, predictions", [(1, 5, 1), (3, 12, 4)])
def test_pretrainer_outputs(encoder, make_inputs, batch, seq_len, predictions):
    inputs = make_inputs(batch, seq_len)
    inputs["masked_lm_positions"] = np.zeros((batch, predictions), "int32")

    outputs = models.BertPretrainer(encoder)(inputs)

    assert set(outputs) == {"masked_lm_logits", "next_sentence_logits"}
    assert outputs["masked_lm_logits"].shape == (batch, predictions, 100)
    assert outputs["next_sentence_logits"].shape == (batch, 2)
    assert outputs["masked_lm_logits"].dtype == outputs["next_sentence_logits"].dtype == "float32"


@pytest.mark.parametrize("num_labels", [1, 3])
def test_classifier_outputs(encoder, make_inputs, num_labels):
    logits = models.BertClassifier(encoder, num_labels=num_labels)(make_inputs(4, 7))
    assert logits.shape == (4, num_labels) and logits.dtype == "float32"


MODEL_BUILDERS = {
    "pretrainer": models.BertPretrainer,
    "classifier": lambda encoder: models.BertClassifier(encoder, num_labels=3),
    "span_labeler": models.BertSpanLabeler,
    "token_classifier": lambda encoder: models.BertTokenClassifier(encoder, num_labels=5),
}


@pytest.mark.parametrize("name", MODEL_BUILDERS)
def test_head_outputs_of_a_full_forward_pass(encoder, make_inputs, name):
    """What a distillation calls on the student's own layers: its heads applied to a forward
    pass that keeps every layer at every position give the model's outputs (the classifier's
    graph runs its last layer at [CLS] alone)."""
    model = MODEL_BUILDERS[name](encoder)
    inputs = make_inputs(3, 9)
    if name == "pretrainer":
        inputs["masked_lm_positions"] = np.array([[1, 3], [0, 2], [4, 8]], "int32")
    encoded = encoder.forward({k: tf.constant(v) for k, v in inputs.items()},
                              per_layer_outputs=True, attention_probs=True, training=False)

    tf.nest.map_structure(lambda a, b: np.testing.assert_allclose(a, b, atol=1e-6),
                          model.head_outputs(encoded, inputs), model(inputs))


def test_span_labeler_outputs(encoder, make_inputs):
    outputs = models.BertSpanLabeler(encoder)(make_inputs(3, 9))
    assert set(outputs) == {"start_logits", "end_logits"}
    for logits in outputs.values():
        assert logits.shape == (3, 9) and logits.dtype == "float32"


def test_token_classifier_outputs(encoder, make_inputs):
    logits = models.BertTokenClassifier(encoder, num_labels=5)(make_inputs(3, 9))
    assert logits.shape == (3, 9, 5) and logits.dtype == "float32"


def test_models_share_the_encoder(encoder, make_inputs):
    built = [models.BertPretrainer(encoder), models.BertClassifier(encoder, 2),
             models.BertSpanLabeler(encoder), models.BertTokenClassifier(encoder, 4)]
    encoder_weights = {id(w) for w in encoder.weights}
    for model in built:
        assert model.encoder is encoder
        assert encoder_weights <= {id(w) for w in model.weights}

    # Training one model's encoder is training them all: a change shows in every model.
    classifier = built[1]
    inputs = make_inputs(2, 6)
    before = np.asarray(classifier(inputs))
    encoder.pooler.bias.assign(encoder.pooler.bias + 1.0)
    assert np.abs(np.asarray(classifier(inputs)) - before).max() > 1e-3


# The heads, each against numpy on the encoder's outputs.

def dense(x, layer):
    return np.asarray(x) @ layer.kernel.numpy() + layer.bias.numpy()


def test_classifier_is_a_dense_layer_on_the_pooled_output(encoder, make_inputs):
    model = models.BertClassifier(encoder, num_labels=3)
    inputs = make_inputs(2, 6)
    pooled = encoder(inputs)["pooled_output"]
    np.testing.assert_allclose(model(inputs), dense(pooled, model.classifier.dense), atol=1e-5)


def test_a_token_classifier_that_mixes_layers_reads_their_softmax_weighted_sum(encoder,
                                                                              make_inputs):
    """ELMo's scalar mix of every transformer layer, in numpy: gamma * sum_l softmax(w)_l h_l,
    under the dense tagger; the mix is a head of the checkpoint."""
    model = models.BertTokenClassifier(encoder, num_labels=4, mix_layers=True)
    model.scalar_mix.scalar_weights.assign([0.3, -0.7])
    model.scalar_mix.gamma.assign(1.5)
    inputs = make_inputs(2, 7)
    layers = [np.asarray(h) for h in encoder(inputs)["encoder_outputs"]]
    weights = np.exp([0.3, -0.7]) / np.exp([0.3, -0.7]).sum()
    mixed = 1.5 * (weights[0] * layers[0] + weights[1] * layers[1])
    np.testing.assert_allclose(model(inputs), dense(mixed, model.classifier.dense), atol=1e-5)
    assert set(model.checkpoint_heads) == {"scalar_mix", "classifier"}
    rebuilt = models.BertTokenClassifier.from_config(model.get_config())
    assert rebuilt.mix_layers and rebuilt.scalar_mix is not None


def test_next_sentence_head_reads_the_pooled_output(encoder, make_inputs):
    model = models.BertPretrainer(encoder)
    inputs = make_inputs(2, 6)
    pooled = encoder(inputs)["pooled_output"]
    inputs["masked_lm_positions"] = np.zeros((2, 1), "int32")
    np.testing.assert_allclose(model(inputs)["next_sentence_logits"],
                               dense(pooled, model.next_sentence.dense), atol=1e-5)


def test_span_labeler_start_is_column_0_end_is_column_1(encoder, make_inputs):
    """As run_squad: one [hidden, 2] projection, unstacked into start and end."""
    model = models.BertSpanLabeler(encoder)
    inputs = make_inputs(2, 6)
    logits = dense(encoder(inputs)["sequence_output"], model.span.dense)
    outputs = model(inputs)
    np.testing.assert_allclose(outputs["start_logits"], logits[..., 0], atol=1e-5)
    np.testing.assert_allclose(outputs["end_logits"], logits[..., 1], atol=1e-5)


def test_token_classifier_is_a_dense_layer_on_every_token(encoder, make_inputs):
    model = models.BertTokenClassifier(encoder, num_labels=4)
    inputs = make_inputs(2, 6)
    sequence = encoder(inputs)["sequence_output"]
    np.testing.assert_allclose(model(inputs), dense(sequence, model.classifier.dense), atol=1e-5)


def test_classifiers_apply_dropout_in_training(tiny_config, make_inputs):
    """run_classifier drops out the pooled output with hidden_dropout_prob before the dense."""
    model = models.BertClassifier(build_encoder(tiny_config), num_labels=3)
    assert model.classifier.dropout_rate == tiny_config.hidden_dropout_prob
    inputs = make_inputs(2, 6)
    np.testing.assert_array_equal(model(inputs, training=False), model(inputs, training=False))
    assert np.abs(np.asarray(model(inputs, training=True))
                  - np.asarray(model(inputs, training=False))).max() > 1e-4
