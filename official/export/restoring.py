"""The encoder an export serves, built from a `BertConfig` and loaded from any checkpoint.

    pretrained_encoder  the encoder of any `--init_checkpoint` (original TF1, this project's TF2,
                        a training output_dir, a folder format), with its masked-LM head when the
                        checkpoint has one (`cls/predictions/*`): the Hub encoder's `.mlm`

A fine-tuning's output is restored into its task's model by official/peft/artifact.py's
`restore` (a parameter-efficient run on its base, a full fine-tuning as it is), through
official/checkpoints/finetuned.py.
"""

from __future__ import annotations

from official import checkpoints
from official.checkpoints import tf1
from official.configs import BertConfig
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
