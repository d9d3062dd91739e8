"""Command-line entry points (`python -m run_scripts.NAME`): absl flags in, library calls out.

TensorFlow is imported here first, with its C++ start-up notes held back unless --verbosity=1
asks for them (official/console.py): every entry point imports this package before its module.
"""

import sys

from official import console

console.import_tensorflow_quietly(sys.argv)
