"""The encoder an export serves, built from a `BertConfig` and loaded from any checkpoint; and an
encoder export read back into one.

    pretrained_encoder  the encoder of any `--init_checkpoint` (original TF1, this project's TF2,
                        a training output_dir, a folder format), with its masked-LM head when the
                        checkpoint has one (`cls/predictions/*`): the Hub encoder's `.mlm`
    load_export         an export's newest version (or a version) loaded, a failure one line:
                        what readers of serving exports (retrieval, robustness) start from
    exported_encoder    an `--export_type=encoder` SavedModel (official/export/encoder.py) as a
                        `BertEncoder` of the config it was made from, with its vocab and casing:
                        its variables carry the encoder's own paths, so each is assigned to the
                        variable of that path, shapes checked (a SavedModel keeps no config: the
                        attention heads cannot be read off the weights)

A fine-tuning's output is restored into its task's model by official/peft/artifact.py's
`restore` (a parameter-efficient run on its base, a full fine-tuning as it is), through
official/checkpoints/finetuned.py.
"""

from __future__ import annotations

import os

import tensorflow as tf

from official import checkpoints
from official.checkpoints import tf1
from official.checkpoints.errors import CheckpointError
from official.configs import BertConfig
from official.export.versions import newest_version
from official.modeling.encoder import BertEncoder, build_encoder
from official.modeling.models import BertPretrainer


def pretrained_encoder(config: BertConfig,
                       init_checkpoint: str) -> tuple[BertEncoder, BertPretrainer | None]:
    """The encoder of `init_checkpoint`, and a `BertPretrainer` around it when the checkpoint
    has the masked-LM head (None otherwise). The next-sentence head, if any, is loaded too but
    not exported (Hub's API has no place for it)."""
    weights = checkpoints.weights_for(init_checkpoint, config)
    encoder = build_encoder(config)
    has_mlm = any(name.startswith(tf1.MASKED_LM_PREFIX) for name in weights)
    pretrainer = BertPretrainer(encoder) if has_mlm else None
    tf1.assign(pretrainer or encoder, weights, source=init_checkpoint)
    return encoder, pretrainer


def load_export(export_dir: str) -> tuple[str, object]:
    """(the version's absolute path, the loaded SavedModel) of `export_dir`.

    Raises:
      ValueError: no such folder, no SavedModel there, or one TensorFlow cannot load (one line
        naming the version, with TensorFlow's first line).
    """
    path = os.path.abspath(newest_version(export_dir))
    try:
        return path, tf.saved_model.load(path)
    except Exception as e:  # noqa: BLE001 -- TensorFlow's errors are of many kinds
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        raise ValueError(f"{path}: cannot load the SavedModel ({first})") from None


def exported_encoder(export_dir: str, config: BertConfig) -> tuple[BertEncoder, str, bool]:
    """(encoder, vocab file, do_lower_case) of the encoder export at `export_dir` (its newest
    version, or a version itself), the encoder built from `config`.

    Raises:
      CheckpointError: not an encoder export, or its weights do not fit `config` (one line
        naming the variable).
    """
    path = newest_version(export_dir)
    loaded = tf.saved_model.load(path)
    if not (hasattr(loaded, "do_lower_case") and hasattr(loaded, "vocab_file")):
        raise CheckpointError(f"{path}: not an encoder export (export_saved_model "
                              "--export_type=encoder): no vocab asset and do_lower_case")
    vocab_file = loaded.vocab_file.asset_path.numpy().decode("utf-8")
    encoder = build_encoder(config)
    # The weights (dropout's seed states are not, and their paths count seed generators).
    ours = {v.path: v for v in encoder.variables if "float" in str(v.dtype)}
    found = {v.name.removesuffix(":0"): v for v in loaded.variables}
    for name, variable in ours.items():
        if name not in found:
            raise CheckpointError(f"{path}: holds no {name}: not an export of this config")
        if tuple(found[name].shape) != tuple(variable.shape):
            raise CheckpointError(f"{path}: {name} has shape {list(found[name].shape)}, the "
                                  f"config's is {list(variable.shape)}")
        variable.assign(found[name])
    return encoder, vocab_file, bool(loaded.do_lower_case.numpy())
