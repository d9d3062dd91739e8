"""Imports google-research/bert's original modules (PyPI `bert-tensorflow`) for parity tests.

The original is TF1 code (`tf.gfile.GFile`, `tf.logging`, ...). Importing a module while
`sys.modules["tensorflow"]` is `tensorflow.compat.v1` gives it the TF1 API whether it says
`import tensorflow` or, as the PyPI release 1.0.4 does, `import tensorflow.compat.v1`; the real
module is put back afterwards. (`bert.modeling` still fails: it needs `tensorflow.contrib`.)

Example:
    tokenization = import_original("bert.tokenization")
    reference = tokenization.FullTokenizer("vocab.txt", do_lower_case=True)
"""

import ast
import functools
import importlib
import os
import sys
import types

import tensorflow as tf
from absl import flags


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


def original_name_to_features(max_seq_length: int, max_predictions_per_seq: int) -> dict:
    """`name_to_features` of the original's run_pretraining.py, evaluated from its source (the
    module itself cannot be imported: its bert.modeling needs tf.contrib)."""
    path = os.path.join(os.path.dirname(import_original("bert").__file__), "run_pretraining.py")
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    value = next(node.value for node in ast.walk(tree) if isinstance(node, ast.Assign)
                 and getattr(node.targets[0], "id", None) == "name_to_features")
    return eval(compile(ast.Expression(value), path, "eval"),  # noqa: S307 - the original's code
                {"tf": tf.compat.v1, "max_seq_length": max_seq_length,
                 "max_predictions_per_seq": max_predictions_per_seq})


def import_original_script(module_name: str) -> types.ModuleType:
    """One of the original's entry-point modules ("bert.run_squad", "bert.run_classifier") for
    its data functions: under the TF1 API, with a stub `bert.modeling` (which needs tf.contrib)
    and its absl flags defined on a private FlagValues, since bert.create_pretraining_data,
    imported by other tests, defines some of the same names (--vocab_file, ...) on the global
    one. Set a flag the functions read as `module.FLAGS.name = value`."""
    import_original("bert.tokenization")  # absl's global FLAGS marked parsed, for tokenization
    import_original("bert.optimization")
    private_flags = flags.FlagValues()
    flags_module = types.ModuleType("flags")
    for name in dir(flags):
        if name.startswith("DEFINE"):
            setattr(flags_module, name,
                    functools.partial(getattr(flags, name), flag_values=private_flags))
    flags_module.FLAGS = private_flags

    class TF1(types.ModuleType):  # tf.compat.v1, except its `flags`
        def __getattr__(self, name):
            return getattr(tf.compat.v1, name)

    tf1 = TF1("tensorflow")
    tf1.flags = flags_module
    tf1.compat = types.SimpleNamespace(v1=tf1)  # `import tensorflow.compat.v1 as tf`
    saved = {name: sys.modules.get(name) for name in ("tensorflow", "bert.modeling")}
    sys.modules["tensorflow"] = tf1
    sys.modules["bert.modeling"] = types.ModuleType("bert.modeling")
    try:
        module = importlib.import_module(module_name)
    finally:
        for name, value in saved.items():
            if value is None:
                del sys.modules[name]
            else:
                sys.modules[name] = value
    private_flags.mark_as_parsed()
    return module
