"""The weight initialiser of every BERT matrix: truncated normal with `initializer_range` stddev."""

import keras


def truncated_normal(stddev: float) -> keras.initializers.Initializer:
    """The original `create_initializer`: N(0, stddev) truncated at two standard deviations."""
    return keras.initializers.TruncatedNormal(stddev=stddev)
