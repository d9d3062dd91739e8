"""The importable BERT library: configuration, tokenizer, model, checkpoints.

From Python, the names of official/api.py are the package's own (`official.load_encoder`,
`official.BertTextClassifier`, ...). They load on first use, so `import official` (which every
module of the package runs first) still loads no TensorFlow: the entry points check their flags
before it loads.

A `.keras` file names its classes (`official>BertTextClassifier`), and Keras finds them only once
official/api.py has run (it imports every class such a file can name). When Keras is already
loaded (`import keras, official`, or TensorFlow, which loads Keras, before `official`) it runs
here: TensorFlow is in memory, so it costs its own modules alone, and
`keras.models.load_model(path)` works next. Imported in the other order, `official` leaves it
until first use (`official.BertTextClassifier`, `import official.api`).
"""

import importlib
import sys

_API = ("load_encoder", "load_preprocessor", "TextPreprocessor", "BertTextClassifier",
        "BertTextTokenClassifier", "BertTextSpanLabeler", "BertTextSentenceEncoder", "optimizer",
        "save_checkpoint")


def __getattr__(name: str):
    if name in _API:
        return getattr(importlib.import_module(f"{__name__}.api"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted([*globals(), *_API])


if "keras" in sys.modules:
    importlib.import_module(f"{__name__}.api")
