"""The paper's left-to-right model (`causal_attention`, official/modeling): no position attends to
a later one, checked on the model by perturbing tokens; its pooled output; the fine-tuning
option that keeps or drops the mask."""

import dataclasses

import keras
import numpy as np
import pytest

from official.configs import BertConfig
from official.modeling.encoder import build_encoder
from official.modeling.models import BertPretrainer
from official.training.options import FinetuningOptions, check_files

CONFIG = BertConfig(vocab_size=60, hidden_size=32, num_hidden_layers=3, num_attention_heads=4,
                    intermediate_size=48, hidden_dropout_prob=0.0,
                    attention_probs_dropout_prob=0.0, type_vocab_size=2,
                    max_position_embeddings=16, causal_attention=True)


@pytest.fixture(scope="module")
def encoder():
    keras.utils.set_random_seed(0)  # the same weights whichever tests ran before
    return build_encoder(CONFIG)


def feed(ids, length=None):
    ids = np.asarray(ids, "int32")
    mask = np.ones_like(ids)
    if length is not None:
        mask[:, length:] = 0
    return {"input_word_ids": ids * mask, "input_mask": mask, "input_type_ids": 0 * ids}


def outputs(encoder, inputs):
    result = encoder(inputs)
    return [np.asarray(x) for x in result["encoder_outputs"]], np.asarray(result["pooled_output"])


@pytest.mark.parametrize("t", [0, 3, 7])
def test_a_changed_token_changes_no_output_before_it_in_any_layer(encoder, t):
    ids = np.random.default_rng(t).integers(1, 60, (2, 8))
    changed = ids.copy()
    changed[:, t] = (changed[:, t] + 7) % 59 + 1
    before, _ = outputs(encoder, feed(ids))
    after, _ = outputs(encoder, feed(changed))
    for layer_before, layer_after in zip(before, after):
        np.testing.assert_array_equal(layer_before[:, :t], layer_after[:, :t])
        # t and each later position move (a single float32 value may round to the same).
        assert np.abs(layer_before[:, t:] - layer_after[:, t:]).max(axis=-1).min() > 0


def test_a_bidirectional_model_lets_a_later_token_change_earlier_outputs(encoder):
    bidirectional = build_encoder(dataclasses.replace(CONFIG, causal_attention=False))
    bidirectional.set_weights(encoder.get_weights())
    ids = np.random.default_rng(0).integers(1, 60, (1, 8))
    changed = ids.copy()
    changed[0, 7] = ids[0, 7] % 59 + 1
    before, _ = outputs(bidirectional, feed(ids))
    after, _ = outputs(bidirectional, feed(changed))
    assert np.abs(before[-1][:, 0] - after[-1][:, 0]).max() > 1e-4


def test_the_pooled_output_reads_the_last_real_token(encoder):
    ids = np.random.default_rng(1).integers(1, 60, (1, 8))
    short, _ = outputs(encoder, feed(ids[:, :5]))
    padded_layers, padded_pooled = outputs(encoder, feed(ids, length=5))
    # Padding after the text changes nothing of it, and the pooled output is the pooler of
    # position 4, the last real token.
    np.testing.assert_allclose(padded_layers[-1][:, :5], short[-1], atol=1e-5)
    pooler = encoder.pooler
    expected = np.tanh(short[-1][:, 4] @ pooler.kernel.numpy() + pooler.bias.numpy())
    np.testing.assert_allclose(padded_pooled, expected, atol=1e-5)
    # A classifier's serving path ([CLS]-only last layer) must not apply to a causal model.
    first = encoder.forward(feed(ids, length=5), last_layer_positions="first")
    np.testing.assert_allclose(first["pooled_output"], padded_pooled, atol=1e-6)


def test_next_token_logits_at_t_do_not_see_token_t_plus_1(encoder):
    model = BertPretrainer(encoder)
    ids = np.random.default_rng(2).integers(1, 60, (1, 8))
    positions = np.arange(7, dtype="int32")[None]
    changed = ids.copy()
    changed[0, 5] = ids[0, 5] % 59 + 1
    before = np.asarray(model(dict(feed(ids), masked_lm_positions=positions))["masked_lm_logits"])
    after = np.asarray(model(dict(feed(changed), masked_lm_positions=positions))[
        "masked_lm_logits"])
    np.testing.assert_array_equal(before[0, :5], after[0, :5])
    assert np.abs(before[0, 5:] - after[0, 5:]).max() > 0


def _options(config_file, tmp_path, objective):
    return FinetuningOptions(bert_config_file=str(config_file), output_dir=str(tmp_path / "out"),
                             max_seq_length=16, do_train=True, objective=objective)


@pytest.mark.parametrize("written, objective, causal", [
    (True, None, True), (False, None, False), (False, "ltr", True), (True, "mlm", False)])
def test_fine_tuning_keeps_or_sets_the_mask_as_objective_says(tmp_path, written, objective,
                                                               causal):
    config_file = tmp_path / "bert_config.json"
    dataclasses.replace(CONFIG, causal_attention=written).to_json_file(str(config_file))
    config = check_files(_options(config_file, tmp_path, objective))
    assert config.causal_attention is causal


def test_a_bad_objective_is_one_line(tmp_path):
    with pytest.raises(ValueError, match="^--objective must be one of mlm, ltr, got 'gpt'$"):
        _options(tmp_path / "bert_config.json", tmp_path, "gpt")
