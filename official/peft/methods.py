"""Applying a parameter-efficient method to a model: what is inserted and what trains.

    apply(model, settings)        inserts adapters or LoRA into the model's encoder, then leaves
                                  trainable only what the method trains:
        adapters   the adapters (2 per layer), every LayerNorm (adapter-bert's choice: the
                   adapters change each layer's output distribution, and the LayerNorms follow
                   it), the pooler if settings.train_pooler, the task head
        lora       the LoRA matrices, the pooler if settings.train_pooler, the task head
                   (the pooler only under a head that reads it: never a span or token head's)
    lora_targets(encoder, regex)  the projection matrices a --lora_targets expression names

Everything else of the encoder is frozen (trainable = False): the optimiser builds no slots for
it, weight decay never touches it, the training checkpoints do not hold it
(official/checkpoints/training.py) and it stays bit-identical to the base checkpoint. The task head
is never frozen: it is new.
"""

from __future__ import annotations

import re

import keras

from official.checkpoints import tf1
from official.modeling.encoder import BertEncoder
from official.peft.settings import ADAPTERS, PeftSettings

# Original-name parts of what trains besides the inserted variables: adapters train every
# LayerNorm; either method may train the pooler.
_LAYER_NORM = "/LayerNorm/"
_POOLER = "bert/pooler/"


def encoder_of(model: keras.Model) -> BertEncoder:
    return model if isinstance(model, BertEncoder) else model.encoder


def lora_targets(encoder: BertEncoder, targets: str) -> dict[str, tuple[keras.layers.Dense,
                                                                         int | None]]:
    """{original matrix name: (its layer, its QKV block or None)} of every projection whose
    original kernel name (`<matrix>/kernel`) the regular expression `targets` finds.

    Raises:
      ValueError: it finds none (the message shows the names it is matched against).
    """
    pattern = re.compile(targets)
    found = {name: place for name, place in tf1.projections(encoder).items()
             if pattern.search(f"{name}/kernel")}
    if not found:
        raise ValueError(f"--lora_targets={targets!r} finds none of the encoder's projection "
                         f"matrices (names like bert/encoder/layer_0/attention/self/query/kernel, "
                         f".../attention/output/dense/kernel, .../intermediate/dense/kernel, "
                         f".../output/dense/kernel, bert/pooler/dense/kernel)")
    return found


def apply(model: keras.Model, settings: PeftSettings) -> None:
    """Inserts the method into `model`'s encoder (fresh: the model's outputs stay those of the
    base weights) and freezes what the method does not train.

    Raises:
      ValueError: the encoder is adapted already, --lora_targets finds no projection, or it
        names the pooler while --peft_train_pooler trains it whole.
    """
    encoder = encoder_of(model)
    pooler = settings.train_pooler and getattr(model, "reads_pooler", True)
    if encoder.adapted:
        raise ValueError(f"{encoder.name} already has adapters or LoRA")
    if settings.method == ADAPTERS:
        for block in encoder.transformer_layers:
            block.add_adapters(settings.adapter_size)
    else:
        targets = lora_targets(encoder, settings.lora_targets)
        if pooler and any(name.startswith(_POOLER) for name in targets):
            raise ValueError(f"--lora_targets={settings.lora_targets!r} names the pooler, which "
                             "--peft_train_pooler trains whole: drop one")
        layers: dict[int, tuple[keras.layers.Dense, list[int | None]]] = {}
        for layer, part in targets.values():
            layers.setdefault(id(layer), (layer, []))[1].append(part)
        for layer, parts in layers.values():
            fused = parts[0] is not None  # blocks of the QKV kernel, or a whole kernel
            layer.add_lora(settings.lora_rank, settings.lora_alpha, parts if fused else [0],
                           num_blocks=len(tf1.QKV_NAMES) if fused else 1)
    _freeze_all_but_trained(encoder, settings, pooler)


def _trains(name: str, settings: PeftSettings, pooler: bool) -> bool:
    """Whether the encoder variable of original name `name` trains under `settings` (the
    pooler's when `pooler`)."""
    if "/adapters/" in name or "/lora_" in name:
        return True
    if name.startswith(_POOLER):
        return pooler
    return settings.method == ADAPTERS and _LAYER_NORM in name


def _freeze_all_but_trained(encoder: BertEncoder, settings: PeftSettings, pooler: bool) -> None:
    trained = {id(variable) for name, variable in tf1.original_names(encoder).items()
               if _trains(name, settings, pooler)}
    for variable in encoder.variables:
        if variable.trainable and id(variable) not in trained:
            variable.trainable = False
