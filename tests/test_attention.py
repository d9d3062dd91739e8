import keras
import numpy as np
import pytest

from official.modeling.attention import SelfAttention
from tests.test_encoder import attention_reference, randomize, weights_of


def random_attention(dropout_rate=0.0, dtype=None):
    attention = SelfAttention(num_heads=4, dropout_rate=dropout_rate, dtype=dtype)
    attention.build((None, None, 32))
    randomize(attention)
    return attention


@pytest.fixture
def x_and_mask(make_inputs):
    x = np.random.default_rng(7).normal(size=(3, 7, 32)).astype(np.float32)
    mask = make_inputs(3, 7)["input_mask"]
    assert mask.min() == 0  # some keys are padding
    return x, mask


def test_attention_matches_numpy(x_and_mask):
    """Output and probabilities against softmax(q k^T / sqrt(head_size)) with padding keys at
    -inf; the probabilities are float32 [batch, heads, query, key]."""
    x, mask = x_and_mask
    attention = random_attention()
    want_output, want_probs = attention_reference(x.astype(np.float64), mask,
                                                  weights_of(attention), 4)

    output, probs = attention(x, mask, return_attention_probs=True)

    np.testing.assert_allclose(output, want_output, atol=1e-5)
    assert probs.shape == (3, 4, 7, 7) and probs.dtype == "float32"
    np.testing.assert_allclose(probs, want_probs, atol=1e-6)
    np.testing.assert_allclose(np.sum(probs, axis=-1), 1.0, atol=1e-6)
    # The -10000 adder makes padding keys' weight exactly 0, as -inf would.
    assert np.all(np.asarray(probs)[np.broadcast_to(mask[:, None, None, :] == 0, probs.shape)]
                  == 0.0)
    np.testing.assert_array_equal(output, attention(x, mask))


def test_first_query_only_probs_are_row_0(x_and_mask):
    x, mask = x_and_mask
    attention = random_attention()
    _, every = attention(x, mask, return_attention_probs=True)
    output, first = attention(x, mask, first_query_only=True, return_attention_probs=True)
    assert output.shape == (3, 1, 32) and first.shape == (3, 4, 1, 7)
    np.testing.assert_allclose(first, np.asarray(every)[:, :, :1], atol=1e-6)


def test_probs_are_the_softmax_before_dropout(x_and_mask):
    """Training drops out the weights the values are summed with, not the returned ones."""
    x, mask = x_and_mask
    attention = random_attention(dropout_rate=0.5)
    output, probs = attention(x, mask, training=True, return_attention_probs=True)
    inference_output, inference_probs = attention(x, mask, return_attention_probs=True)
    np.testing.assert_array_equal(probs, inference_probs)
    assert np.abs(np.asarray(output) - np.asarray(inference_output)).max() > 1e-3


def test_probs_are_float32_under_a_mixed_policy(x_and_mask):
    x, mask = x_and_mask
    attention = random_attention(dtype="mixed_bfloat16")
    output, probs = attention(x, mask, return_attention_probs=True)
    assert output.dtype == "bfloat16" and probs.dtype == "float32"


def test_probs_in_a_functional_model(x_and_mask):
    x, mask = x_and_mask
    attention = random_attention()
    symbolic_x = keras.Input((None, 32))
    symbolic_mask = keras.Input((None,), dtype="int32")
    output, probs = attention(symbolic_x, symbolic_mask, return_attention_probs=True)
    assert probs.shape == (None, 4, None, None) and probs.dtype == "float32"
    model = keras.Model([symbolic_x, symbolic_mask], [output, probs])
    for got, want in zip(model([x, mask]), attention(x, mask, return_attention_probs=True),
                         strict=True):
        np.testing.assert_array_equal(got, want)
