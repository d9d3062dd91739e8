"""Training checkpoints (`model.ckpt-N` in a training output_dir), and their weights as original names.

The training loop saves the whole state, object-based, under these roots:

    encoder     the BertEncoder
    heads       {attribute name: head layer}: masked_lm and next_sentence when pretraining,
                classifier or span when fine-tuning
    optimizer, step, and the input iterator when it can be saved (see official/training/trainer.py)

Keeping the encoder a root of its own lets any model read it back, whatever heads it has, so
`--init_checkpoint=<output_dir>` of one job starts the next (fine-tuning from pretraining, further
pretraining from a fine-tuned encoder). The architecture comes from the `bert_config.json` the loop
writes beside its checkpoints.
"""

from __future__ import annotations

import os

import keras
import tensorflow as tf

from official.checkpoints import tf1
from official.checkpoints.errors import CheckpointError
from official.configs import BertConfig
from official.modeling.encoder import build_encoder
from official.modeling.models import BertPretrainer

CONFIG_FILE = "bert_config.json"
HEAD_NAMES = ("masked_lm", "next_sentence", "classifier", "span")
_ENCODER_ROOT = "encoder/"


def model_roots(model: keras.Model) -> dict:
    """The model's part of a training checkpoint: {"encoder": ..., "heads": {...}}."""
    heads = {name: getattr(model, name) for name in HEAD_NAMES
             if getattr(model, name, None) is not None}
    return {"encoder": model.encoder, "heads": heads}


def is_training_checkpoint(prefix: str) -> bool:
    """True for a checkpoint written by the training loop (its encoder is a root object)."""
    return any(name.startswith(_ENCODER_ROOT) for name, _ in tf.train.list_variables(prefix))


def read(prefix: str) -> tf1.Weights:
    """The encoder, and the pretraining heads if saved, of a training checkpoint, as original names.

    Raises:
      CheckpointError: no bert_config.json beside the checkpoint, or the checkpoint does not fit it.
    """
    config_path = os.path.join(os.path.dirname(prefix), CONFIG_FILE)
    if not os.path.exists(config_path):
        raise CheckpointError(f"{prefix}: a training checkpoint needs the {CONFIG_FILE} written "
                              f"beside it, and {config_path} does not exist")
    encoder = build_encoder(BertConfig.from_json_file(config_path))
    names = {name for name, _ in tf.train.list_variables(prefix)}
    has_pretraining_heads = any(n.startswith("heads/masked_lm/") for n in names)
    model = BertPretrainer(encoder) if has_pretraining_heads else encoder
    heads = ({"masked_lm": model.masked_lm, "next_sentence": model.next_sentence}
             if has_pretraining_heads else {})
    status = tf.train.Checkpoint(encoder=encoder, heads=heads).read(prefix)
    try:
        status.expect_partial().assert_existing_objects_matched()
    except AssertionError as e:
        raise CheckpointError(f"{prefix} does not fit {config_path} "
                              f"({str(e).splitlines()[0]})") from None
    return tf1.weights_of(model)
