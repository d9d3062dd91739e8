"""official/modeling/feature_tagger.py and feature_layers.py: the paper's layer combinations
(Table 7) against numpy on the encoder's own per-layer outputs, padding left out by the BiLSTM,
and the encoder's features taken without dropout while the head trains."""

import keras
import numpy as np
import pytest

from official.configs import BertConfig
from official.modeling import feature_layers
from official.modeling.encoder import build_encoder
from official.modeling.feature_tagger import BertFeatureTagger

NUM_LABELS = 5


@pytest.fixture(scope="module")
def encoder():
    """Five transformer layers: concat_last_4 and the rest all read a proper subset."""
    keras.utils.set_random_seed(0)
    return build_encoder(BertConfig(vocab_size=50, hidden_size=16, num_hidden_layers=5,
                                    num_attention_heads=2, intermediate_size=32,
                                    max_position_embeddings=32, type_vocab_size=2))


def inputs_of(ids, lengths, seq_len):
    ids = np.array([row + [0] * (seq_len - len(row)) for row in ids], np.int32)
    mask = (np.arange(seq_len)[None, :] < np.array(lengths)[:, None]).astype(np.int32)
    return {"input_word_ids": ids * mask, "input_mask": mask,
            "input_type_ids": (np.arange(seq_len)[None, :] >= 3).astype(np.int32) * mask}


INPUTS = inputs_of([[2, 11, 12, 3, 14, 15, 3], [2, 21, 3]], [7, 3], 7)


def hidden_layers(encoder, inputs):
    """[layer 0 .. layer L] as numpy: the embeddings' output and the encoder's Hub outputs."""
    embedded = encoder.embeddings(inputs["input_word_ids"], inputs["input_type_ids"])
    return [np.asarray(embedded)] + [np.asarray(h) for h in encoder(inputs)["encoder_outputs"]]


def softmax(w):
    e = np.exp(w - np.max(w))
    return e / e.sum()


@pytest.mark.parametrize("name, expected", [
    ("embeddings", lambda h, s: h[0]),
    ("last", lambda h, s: h[5]),
    ("second_to_last", lambda h, s: h[4]),
    ("concat_last_4", lambda h, s: np.concatenate(h[2:6], axis=-1)),
    ("weighted_sum_last_4", lambda h, s: 1.5 * sum(s[i] * h[2 + i] for i in range(4))),
    ("weighted_sum_all", lambda h, s: 1.5 * sum(s[i] * h[i] for i in range(6))),
])
def test_each_choice_is_its_layers_combined_as_the_paper_says(encoder, name, expected):
    model = BertFeatureTagger(encoder, NUM_LABELS, name, lstm_units=4)
    hand = None
    if model.scalar_mix is not None:
        weights = np.linspace(-1.0, 1.0, len(model.choice.layers)).astype(np.float32)
        model.scalar_mix.scalar_weights.assign(weights)
        model.scalar_mix.gamma.assign(1.5)
        hand = softmax(weights.astype(np.float64))
    got = np.asarray(model.features(model.encoder_layers(INPUTS)))
    np.testing.assert_allclose(got, expected(hidden_layers(encoder, INPUTS), hand), atol=1e-5)
    assert got.shape == (2, 7, 16 * (4 if name == "concat_last_4" else 1))


def test_a_model_too_shallow_for_the_choice_is_refused():
    assert feature_layers.choose("second_to_last", 2).layers == (1,)
    assert feature_layers.choose("weighted_sum_all", 1).layers == (0, 1)
    with pytest.raises(ValueError, match="concat_last_4 reads the last 4 transformer layers: "
                                         "the model has 3"):
        feature_layers.choose("concat_last_4", 3)
    with pytest.raises(ValueError, match="second_to_last reads the second-to-last"):
        feature_layers.choose("second_to_last", 1)
    with pytest.raises(ValueError, match="'middle' is not one of concat_last_4"):
        feature_layers.choose("middle", 12)


def test_padding_does_not_change_the_real_positions(encoder):
    """The same two sentences padded to 7 and to 12 positions: the BiLSTM's backward direction
    starts at each sentence's last real token, not at the padding."""
    model = BertFeatureTagger(encoder, NUM_LABELS, "weighted_sum_last_4", lstm_units=4)
    longer = inputs_of([[2, 11, 12, 3, 14, 15, 3], [2, 21, 3]], [7, 3], 12)
    short, long = np.asarray(model(INPUTS)), np.asarray(model(longer))
    np.testing.assert_allclose(long[0, :7], short[0], atol=1e-5)
    np.testing.assert_allclose(long[1, :3], short[1, :3], atol=1e-5)
    assert short.shape == (2, 7, NUM_LABELS)


def test_the_features_are_taken_without_dropout_while_the_head_trains(encoder):
    model = BertFeatureTagger(encoder, NUM_LABELS, "concat_last_4", lstm_units=4)
    in_training = model.features(model.encoder_layers(INPUTS, training=True))
    reference = np.concatenate(hidden_layers(encoder, INPUTS)[2:], axis=-1)
    np.testing.assert_allclose(np.asarray(in_training), reference, atol=1e-5)
    # The head's dropout is on: two training calls differ, while inference calls agree.
    assert not np.allclose(model(INPUTS, training=True), model(INPUTS, training=True))
    np.testing.assert_array_equal(model(INPUTS), model(INPUTS))


def test_the_config_rebuilds_the_same_model(encoder):
    model = BertFeatureTagger(encoder, NUM_LABELS, "weighted_sum_all", lstm_units=4)
    again = BertFeatureTagger.from_config(model.get_config())
    assert (again.layer_choice, again.lstm_units, again.num_labels) == \
        ("weighted_sum_all", 4, NUM_LABELS)
    assert sorted(again.checkpoint_heads) == ["bilstm_0", "bilstm_1", "classifier", "scalar_mix"]
    again.set_weights(model.get_weights())
    np.testing.assert_allclose(np.asarray(again(INPUTS)), np.asarray(model(INPUTS)), atol=1e-6)
