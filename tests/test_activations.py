"""Tests for official.modeling.activations: every config name has its function. (The two GELUs'
values are checked against numpy in tests/test_encoder.py.)"""

import pytest

from official.configs import ACTIVATIONS
from official.modeling import activations


@pytest.mark.parametrize("name", ACTIVATIONS)
def test_every_config_activation_has_a_function(name):
    assert callable(activations.get(name))


def test_an_unknown_name_lists_the_known_ones():
    with pytest.raises(ValueError, match="known: " + ", ".join(ACTIVATIONS)):
        activations.get("gelu_new")
