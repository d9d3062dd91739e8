"""Runs Google's original create_pretraining_data (PyPI bert-tensorflow) with its own flags.

    python -m bench.original_create_pretraining_data --input_file=... --output_file=... ...

The reference the benchmark measures against; it runs under tensorflow.compat.v1, imported the
way the tests import it (tests/reference_bert.py).
"""

from absl import app

from tests.reference_bert import import_original

if __name__ == "__main__":
    app.run(import_original("bert.create_pretraining_data").main)
