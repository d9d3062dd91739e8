"""Checkpoints: one module per format, all meeting in the original TF1 variable names.

    reading    the config and weights of any checkpoint, read one way (the names below)
    tf1        the original names <-> our Keras model; name-based checkpoints (original format)
    tf2        this project's object-based checkpoint of those names
    training   the training loop's checkpoints (model, optimizer, step), read as those names
    hf         Hugging Face BERT directories (config.json, model.safetensors, vocab.txt)
    keras_hub  keras-hub BertBackbone presets
    converter  any of them -> any other, through a model that validates every variable
    finetuned  a training output resolved: which checkpoint (best/ when kept), what lies beside

Entry points call `load_init_checkpoint` for their `--init_checkpoint` flag, which takes a
checkpoint or, as convert_checkpoint's --input does, a Hugging Face folder or keras-hub preset:
`reading.FOLDER_FORMATS`.

This face holds no logic: it names `reading`'s readers and the errors, all of which load without
TensorFlow (an entry point's checks use `beside` before it loads).
"""

from official.checkpoints.errors import CheckpointError, CheckpointMismatchError
from official.checkpoints.reading import (
    CONFIG_FILE,
    FORMAT_NAMES,
    VOCAB_FILE,
    beside,
    config_beside,
    config_of,
    folder_format,
    load_init_checkpoint,
    read,
    read_weights,
    resolve_checkpoint,
    weights_for,
)

__all__ = ["CONFIG_FILE", "CheckpointError", "CheckpointMismatchError", "FORMAT_NAMES",
           "VOCAB_FILE", "beside", "config_beside", "config_of", "folder_format",
           "load_init_checkpoint", "read", "read_weights", "resolve_checkpoint", "weights_for"]
