"""The parameter-efficient methods, one row each, and what applying one does to a model.

    METHODS                     name -> PeftMethod (official/peft/method.py): adding a method is
                                its module and one line here
    from_flags(**values)        the method the flags' values ask for, checked; None for full
                                fine-tuning
    from_dict(values, source)   a record's settings (peft_config.json)
    method_of(settings)         the row of a method's settings
    apply(model, settings)      inserts the method into the model's encoder, then leaves
                                trainable only what it trains

| method   | inserted                            | trains (besides the head)         | folds |
|----------|-------------------------------------|-----------------------------------|-------|
| adapters | two bottleneck adapters per layer   | adapters, every LayerNorm         | no    |
| lora     | A, B beside each targeted matrix    | the LoRA matrices                 | yes   |
| bitfit   | nothing                             | every bias and LayerNorm beta     | yes   |
| ia3      | vectors scaling keys, values and    | the vectors                       | yes   |
|          | the feed-forward activation         |                                   |       |
| frozen   | nothing                             | nothing (the feature-based and    | yes   |
|          |                                     | linear-probe baseline)            |       |

With `train_pooler` the pooler trains whole too, under a head that reads it; a head that never
reads the pooler (span, token) leaves every pooler variable frozen. Everything else of the
encoder is frozen (trainable = False): the optimiser builds no slots for it, weight decay never
touches it, the training checkpoints do not hold it (official/checkpoints/training.py) and it
stays bit-identical to the base checkpoint. The task head is never frozen: it is new.

The table and the settings load without TensorFlow (an entry point checks the flags before it
loads it); `apply`, which changes a model, imports what it needs when called.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from official import records
from official.peft import adapters, bitfit, frozen, ia3, lora
from official.peft.method import PeftMethod, PeftSettings

if TYPE_CHECKING:
    import keras

METHODS: dict[str, PeftMethod] = {m.name: m for m in (adapters.METHOD, lora.METHOD,
                                                       bitfit.METHOD, ia3.METHOD, frozen.METHOD)}
_POOLER = "bert/pooler/"
POOLER_FLAG = "peft_train_pooler"  # the flag of PeftSettings.train_pooler, shared by all


def from_flags(train_pooler: bool | None = None, **values: Any) -> PeftSettings | None:
    """The settings of the method whose flags `values` gives (by flag name; None or a flag's
    default: not given); None for full fine-tuning. A method's flag without its switch, two
    methods, or --peft_train_pooler without a method are errors, not ignored.

    Raises:
      ValueError: one line naming the flag.
    """
    unknown = set(values) - {flag.name for m in METHODS.values() for flag in m.flags}
    if unknown:
        raise TypeError(f"not a flag of a parameter-efficient method: {', '.join(unknown)}")
    chosen = [m for m in METHODS.values() if values.get(m.flags[0].name)]
    if len(chosen) > 1:
        raise ValueError(f"--{chosen[0].flags[0].name} and --{chosen[1].flags[0].name} are two "
                         "methods: give one")
    for method in METHODS.values():
        if method in chosen:
            continue
        for flag in method.flags[1:]:
            if values.get(flag.name) is not None:
                raise ValueError(f"--{flag.name} is a {method.title} setting: "
                                 f"it needs --{method.flags[0].name}")
    if not chosen:
        if train_pooler is not None:
            raise ValueError(f"--{POOLER_FLAG} needs a parameter-efficient method "
                             f"({', '.join('--' + m.flags[0].name for m in METHODS.values())})")
        return None
    method = chosen[0]
    return method.settings.from_flags(
        **{flag.name: values.get(flag.name, flag.default) for flag in method.flags},
        train_pooler=method.settings.train_pooler if train_pooler is None else train_pooler)


def method_of(settings: PeftSettings) -> PeftMethod:
    return METHODS[settings.method]


def from_dict(values: dict, source: str = "the record") -> PeftSettings:
    """The settings a record's `to_dict()` holds, every field checked (official/records.py).

    Raises:
      ValueError: an unknown method, or a field unknown, missing or of the wrong type.
    """
    values = dict(values)
    name = values.pop("method", None)
    if name not in METHODS:
        raise ValueError(f"{source}: method {name!r} is not one of {', '.join(METHODS)}")
    return records.from_dict(METHODS[name].settings, values, source)


def apply(model: keras.Model, settings: PeftSettings) -> None:
    """Inserts the method into `model`'s encoder (fresh: the model's outputs stay those of the
    base weights) and freezes what the method does not train.

    Raises:
      ValueError: the encoder has a method already, or the method's own checks (a
        --lora_targets that finds no projection, or names the pooler that trains whole).
    """
    from official.checkpoints import tf1
    from official.modeling.encoder import encoder_of

    encoder = encoder_of(model)
    if encoder.adapted:
        raise ValueError(f"{encoder.name} already has a parameter-efficient method "
                         f"({encoder.adapted_by}): one applies")
    reads_pooler = getattr(model, "reads_pooler", True)
    effective = dataclasses.replace(settings, train_pooler=settings.train_pooler and reads_pooler)
    method = method_of(settings)
    method.insert(encoder, effective)
    trained = set()
    for name, variable in tf1.original_names(encoder).items():
        pooler = name.startswith(_POOLER)
        if (method.trains(name, effective) and (reads_pooler or not pooler)) or \
                (pooler and effective.train_pooler):
            trained.add(id(variable))
    for variable in encoder.variables:
        if variable.trainable and id(variable) not in trained:
            variable.trainable = False
    encoder.adapted_by = settings.method
