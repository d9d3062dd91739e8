"""official/modeling/sentence_pooling.py against numpy: sentence-transformers' pooling rules,
padding left out, and unit length."""

import numpy as np
import pytest

from official.modeling.sentence_pooling import pool_tokens


@pytest.mark.parametrize("normalize", [False, True])
def test_pooling_against_numpy(normalize):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(3, 5, 4)).astype(np.float32)
    mask = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1], [1, 1, 0, 0, 0]], np.int32)
    # Padding holds large values a wrong rule would pick up.
    x[mask == 0] = 50.0
    expected = {
        "mean": np.stack([x[i, mask[i] > 0].mean(0) for i in range(3)]),
        "cls": x[:, 0],
        "max": np.stack([x[i, mask[i] > 0].max(0) for i in range(3)]),
    }
    for pooling, vectors in expected.items():
        if normalize:
            vectors = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
        np.testing.assert_allclose(pool_tokens(x, mask, pooling, normalize).numpy(), vectors,
                                   rtol=1e-6, atol=1e-6, err_msg=pooling)


def test_unknown_pooling():
    with pytest.raises(ValueError, match="pooling must be one of mean, cls, max"):
        pool_tokens(np.zeros((1, 2, 3), np.float32), np.ones((1, 2)), "sum")
