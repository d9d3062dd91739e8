"""The models an export serves, built from a `BertConfig` and loaded from a checkpoint.

    pretrained_encoder  the encoder of any `--init_checkpoint` (original TF1, this project's TF2,
                        a training output_dir), with its masked-LM head when the checkpoint has
                        one (`cls/predictions/*`): the Hub encoder's `.mlm`
    restore_finetuned   a fine-tuning job's weights, encoder and task head, into its model
                        (BertClassifier, BertTokenClassifier, BertSpanLabeler)

A fine-tuning output_dir is resolved to its `best/` checkpoint when it kept one (the best dev
score, `official.training.output_dir.BEST_DIR`), else to its newest.
"""

from __future__ import annotations

import os

import keras
import tensorflow as tf

from official import checkpoints
from official.checkpoints import tf1, training
from official.checkpoints.errors import CheckpointError
from official.configs import BertConfig
from official.modeling.encoder import BertEncoder, build_encoder
from official.modeling.models import BertPretrainer
from official.training.output_dir import BEST_DIR


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


def finetuned_checkpoint(path: str) -> str:
    """The checkpoint prefix of a fine-tuning output: `path/best/` when there is one, else the
    newest checkpoint of `path` (or `path` itself, a prefix)."""
    best = os.path.join(path, BEST_DIR)
    if os.path.isdir(best) and tf.train.latest_checkpoint(best):
        path = best
    return checkpoints.resolve_checkpoint(path)


def restore_finetuned(model: keras.Model, path: str) -> str:
    """Loads a fine-tuning job's encoder and head (heads/classifier or heads/span) into `model`;
    returns the checkpoint prefix read.

    Raises:
      CheckpointError: no checkpoint at `path`, or one without this model's fine-tuned head
        (a pretrained checkpoint, say) or whose shapes differ (another num_labels or size).
    """
    prefix = finetuned_checkpoint(path)
    if not training.is_training_checkpoint(prefix):
        raise CheckpointError(f"{prefix} is not a fine-tuning checkpoint (no encoder/ and heads/ "
                              "roots): export the output_dir of run_classifier, run_ner or "
                              "run_squad")
    roots = training.model_roots(model)
    training.check_holds(prefix, roots)
    try:
        tf.train.Checkpoint(**roots).read(prefix).expect_partial() \
            .assert_existing_objects_matched()
    except (AssertionError, ValueError, tf.errors.OpError) as e:
        heads = ", ".join(f"heads/{name}" for name in roots["heads"])
        raise CheckpointError(f"{prefix} does not hold this model's encoder and {heads} "
                              f"({str(e).splitlines()[0]})") from None
    return prefix
