"""The importable BERT library: configuration, tokenizer, model, checkpoints.

From Python, the names of official/api.py are the package's own (`official.load_encoder`,
`official.BertTextClassifier`, ...). They load on first use, so `import official` (which every
module of the package runs first) still loads no TensorFlow: the entry points check their flags
before it loads.
"""

import importlib

_API = ("load_encoder", "load_preprocessor", "TextPreprocessor", "BertTextClassifier",
        "BertTextTokenClassifier", "BertTextSpanLabeler", "BertTextSentenceEncoder", "optimizer",
        "save_checkpoint")


def __getattr__(name: str):
    if name in _API:
        return getattr(importlib.import_module(f"{__name__}.api"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted([*globals(), *_API])
