"""Activation functions by the names a `BertConfig.hidden_act` may hold (`configs.ACTIVATIONS`).

The two GELUs are kept apart on purpose. google-research/bert's `gelu` is the tanh approximation
    0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
and every original checkpoint was trained with it; Hugging Face's "gelu" is the exact
    0.5 x (1 + erf(x / sqrt(2)))
A converter maps names so that the model computes the function its weights were trained with.
"""

from typing import Callable

import keras


def gelu_tanh(x):
    """The original BERT GELU (tanh approximation)."""
    return keras.activations.gelu(x, approximate=True)


def gelu_exact(x):
    """GELU with the Gaussian CDF computed by erf (Hugging Face's "gelu")."""
    return keras.activations.gelu(x, approximate=False)


# One function per name of configs.ACTIVATIONS.
_BY_NAME = {
    "gelu": gelu_tanh,
    "gelu_exact": gelu_exact,
    "relu": keras.activations.relu,
    "tanh": keras.activations.tanh,
    "swish": keras.activations.silu,
    "linear": keras.activations.linear,
}


def get(name: str) -> Callable:
    """Returns the activation for a `BertConfig.hidden_act` name."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise ValueError(f"unknown activation {name!r}; known: {', '.join(_BY_NAME)}") from None
