"""The models an export serves, built from a `BertConfig` and loaded from a checkpoint.

    pretrained_encoder  the encoder of any `--init_checkpoint` (original TF1, this project's TF2,
                        a training output_dir), with its masked-LM head when the checkpoint has
                        one (`cls/predictions/*`): the Hub encoder's `.mlm`
    restore_finetuned   a fine-tuning job's weights, encoder and task head, into its model
                        (BertClassifier, BertTokenClassifier, BertSpanLabeler); for a
                        parameter-efficient run, its base and method first (official/peft)

A fine-tuning output_dir is resolved to its `best/` checkpoint when it kept one (the best dev
score), else to its newest (`official.training.output_dir.finetuned_checkpoint`).
"""

from __future__ import annotations

import keras
import tensorflow as tf

from official import checkpoints
from official.checkpoints import tf1, training
from official.checkpoints.errors import CheckpointError
from official.configs import BertConfig
from official.modeling.encoder import BertEncoder, build_encoder
from official.modeling.models import BertPretrainer
from official.peft import artifact


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


def restore_finetuned(model: keras.Model, path: str, base: str | None = None) -> str:
    """Loads a fine-tuning job's encoder and head (heads/classifier or heads/span) into the
    fresh `model`. For a parameter-efficient run (its peft_config.json beside the checkpoint),
    first its base (`base`, else the one its record names, which must be the run's) and its
    method, then what it trained. Returns the checkpoint prefix read.

    Raises:
      CheckpointError: no checkpoint at `path`, or one without this model's fine-tuned head
        (a pretrained checkpoint, say) or whose shapes differ (another num_labels or size); a
        `base` for a full fine-tuning, or a base that is not the PEFT run's.
    """
    prefix, record = artifact.find_run(path)
    if record is not None:
        artifact.load_base(model, record, base, path)
    elif base is not None:
        raise CheckpointError(f"{path} holds no parameter-efficient run ({artifact.PEFT_FILE}): "
                              "a full fine-tuning needs no base")
    elif not training.is_training_checkpoint(prefix):
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
