"""Imports google-research/bert's original modules (PyPI `bert-tensorflow`) for parity tests.

The original is TF1 code (`tf.gfile.GFile`, `tf.logging`, ...). Importing a module while
`sys.modules["tensorflow"]` is `tensorflow.compat.v1` gives it the TF1 API whether it says
`import tensorflow` or, as the PyPI release 1.0.4 does, `import tensorflow.compat.v1`; the real
module is put back afterwards. (`bert.modeling` still fails: it needs `tensorflow.contrib`.)

Example:
    tokenization = import_original("bert.tokenization")
    reference = tokenization.FullTokenizer("vocab.txt", do_lower_case=True)
"""

import importlib
import sys
import types

from absl import flags
import tensorflow as tf


def import_original(module_name: str) -> types.ModuleType:
    """Imports `module_name` (e.g. "bert.tokenization") of the original under the TF1 API."""
    real_tf = sys.modules["tensorflow"]
    sys.modules["tensorflow"] = tf.compat.v1
    try:
        module = importlib.import_module(module_name)
    finally:
        sys.modules["tensorflow"] = real_tf
    # The original modules read absl flags they define at import (tokenization's
    # `preserve_unused_tokens`); outside an absl app nothing parses them, and absl refuses to
    # read an unparsed flag, so take the defaults, as the original scripts do when run bare.
    if not flags.FLAGS.is_parsed():
        flags.FLAGS.mark_as_parsed()
    return module


def original_parse_spec(max_seq_length: int, max_predictions_per_seq: int) -> dict:
    """The original run_pretraining.py's `name_to_features`, written out by hand: that module
    cannot be imported here (its modeling.py needs tf.contrib), and a reference must not come
    from the code under test."""
    seq, predictions = [max_seq_length], [max_predictions_per_seq]
    return {
        "input_ids": tf.io.FixedLenFeature(seq, tf.int64),
        "input_mask": tf.io.FixedLenFeature(seq, tf.int64),
        "segment_ids": tf.io.FixedLenFeature(seq, tf.int64),
        "masked_lm_positions": tf.io.FixedLenFeature(predictions, tf.int64),
        "masked_lm_ids": tf.io.FixedLenFeature(predictions, tf.int64),
        "masked_lm_weights": tf.io.FixedLenFeature(predictions, tf.float32),
        "next_sentence_labels": tf.io.FixedLenFeature([1], tf.int64),
    }
