"""Training checkpoints (`model.ckpt-N` in a training output_dir), and their weights as original
names.

The training loop saves the whole state, object-based, under these roots:

    encoder     the BertEncoder
    heads       {name: head layer}, as the model declares them in its `checkpoint_items`
                (official/modeling/models.py): masked_lm and next_sentence when pretraining,
                classifier or span when fine-tuning
    optimizer, step, and the input iterator when it can be saved (see official/training/trainer.py)

An encoder adapted by a parameter-efficient method (official/peft) is saved as
`encoder_trained` instead: {original name: variable} of its trainable variables alone (the
method's own, the LayerNorms or biases it trains, the pooler when it trains). Its frozen rest is
the base checkpoint the run's peft_config.json names, loaded from there on every run, so a PEFT
checkpoint is a few percent of the model's size.

`model_roots` refuses a model with a trainable variable under neither root (it would be trained
and never saved), and `check_holds` a checkpoint that lacks one of the model's heads
(tf.train.Checkpoint leaves what it does not find at its initial values without a word, so a
head saved under another name would come back random).

Keeping the encoder a root of its own lets any model read it back, whatever heads it has, so
`--init_checkpoint=<output_dir>` of one job starts the next (fine-tuning from pretraining, further
pretraining from a fine-tuned encoder). The architecture comes from the `bert_config.json` the loop
writes beside its checkpoints.
"""

from __future__ import annotations

import keras
import tensorflow as tf
from tensorflow.core.protobuf import trackable_object_graph_pb2

from official.checkpoints import tf1
from official.checkpoints.errors import CheckpointError, unreadable
from official.configs import BertConfig
from official.modeling.encoder import BertEncoder, build_encoder
from official.modeling.models import BertPretrainer

TRAINED_ENCODER = "encoder_trained"  # the root of an adapted encoder's trained variables
_OBJECT_GRAPH = "_CHECKPOINTABLE_OBJECT_GRAPH"


def model_roots(model: keras.Model) -> dict:
    """The model's part of a training checkpoint: {"encoder": ..., "heads": {...}}, from its
    `checkpoint_items` (a bare BertEncoder has no heads); {"encoder_trained": {...}, "heads":
    {...}} when its encoder is adapted (official/peft).

    Raises:
      ValueError: the model declares no checkpoint_items, or has trainable variables under
        neither its encoder nor a declared head.
    """
    items = _checkpoint_items(model)
    covered = {id(v) for v in items["encoder"].variables}
    covered.update(id(v) for head in items["heads"].values() for v in head.variables)
    missing = [v.path for v in model.trainable_variables if id(v) not in covered]
    if missing:
        raise ValueError(f"{type(model).__name__}: {len(missing)} trainable variables lie under "
                         f"none of its checkpoint_items ({', '.join(missing[:3])}"
                         f"{', ...' if len(missing) > 3 else ''}): add the layer that holds them "
                         "to its heads")
    if items["encoder"].adapted:
        return {TRAINED_ENCODER: trained_encoder_variables(items["encoder"]),
                "heads": items["heads"]}
    return items


def _checkpoint_items(model: keras.Model) -> dict:
    items = ({"encoder": model, "heads": {}} if isinstance(model, BertEncoder)
             else getattr(model, "checkpoint_items", None))
    if items is None:
        raise ValueError(f"{type(model).__name__} declares no checkpoint_items: its encoder and "
                         "heads cannot be saved")
    return items


def trained_encoder_variables(encoder: BertEncoder) -> dict[str, keras.Variable]:
    """{original name: variable} of the encoder's trainable variables (a variable with several
    names, the fused QKV kernel, under its first)."""
    named = {}
    for name, variable in tf1.original_names(encoder).items():
        if variable.trainable and not any(v is variable for v in named.values()):
            named[name] = variable
    return named


def random_states(model: keras.Model) -> list[keras.Variable]:
    """The non-trainable variables of the model's checkpoint items that are not weights: the
    dropout layers' seed generator states (what a resumed run needs to draw the masks an
    uninterrupted one would). Frozen weights are not among them: they come from the base
    checkpoint (or, a distillation's teacher, from its own)."""
    items = _checkpoint_items(model)
    weights = {id(v) for v in tf1.original_names(model).values()}
    layers = [items["encoder"], *items["heads"].values()]
    return [v for layer in layers for v in layer.non_trainable_variables
            if id(v) not in weights]


def saved_heads(prefix: str) -> set[str]:
    """The names of the heads a training checkpoint holds, from its object graph.

    Not from its variable names: a variable is listed under its shortest path from the root,
    which for a head's variables is often the optimiser's (optimizer/_trainable_variables/N).
    """
    graph = _object_graph(prefix)
    roots = {child.local_name: child.node_id for child in graph.nodes[0].children} if graph else {}
    if "heads" not in roots:
        return set()
    return {child.local_name for child in graph.nodes[roots["heads"]].children}


def _object_graph(prefix: str) -> trackable_object_graph_pb2.TrackableObjectGraph | None:
    """An object-based checkpoint's graph of objects (None for a name-based TF1 checkpoint).
    Every question about a training checkpoint reads this first, so its reader's refusal of a
    file (garbage bytes, a truncated shard) is translated here: a CheckpointError naming it."""
    try:
        reader = tf.train.load_checkpoint(prefix)
    except tf.errors.OpError as e:
        raise unreadable(prefix, e) from None
    if not reader.has_tensor(_OBJECT_GRAPH):
        return None
    graph = trackable_object_graph_pb2.TrackableObjectGraph()
    graph.ParseFromString(reader.get_tensor(_OBJECT_GRAPH))
    return graph


def check_holds(prefix: str, roots: dict) -> None:
    """Raises CheckpointError unless the training checkpoint at `prefix` holds every head of
    `roots` (a `model_roots` dict)."""
    lacking = sorted(set(roots["heads"]) - saved_heads(prefix))
    if lacking:
        raise CheckpointError(f"{prefix} holds no {' or '.join(f'heads/{h}' for h in lacking)}: "
                              "those weights would stay at their initial values (a checkpoint "
                              "of another model?)")


def assert_matched(status, prefix: str) -> None:
    """`status.assert_existing_objects_matched()` (a tf.train.Checkpoint restore or read of
    `prefix`), as a CheckpointError naming the checkpoint: a value of the model it lacks, or
    one of another shape, would otherwise stay at its initial value or fail deep in TF."""
    try:
        status.assert_existing_objects_matched()
    except AssertionError as e:
        raise CheckpointError(f"{prefix} does not fit this model ({str(e).splitlines()[0]}): "
                              "a checkpoint of another model or method?") from None


def is_training_checkpoint(prefix: str) -> bool:
    """True for a checkpoint written by the training loop (its encoder is a root object)."""
    return has_root(prefix, "encoder")


def is_peft_checkpoint(prefix: str) -> bool:
    """True for a parameter-efficient run's checkpoint (an `encoder_trained` root)."""
    return has_root(prefix, TRAINED_ENCODER)


def has_root(prefix: str, name: str) -> bool:
    """True when the object-based checkpoint at `prefix` has a root object `name` (read from its
    object graph, not from variable names: see `saved_heads`)."""
    graph = _object_graph(prefix)
    return graph is not None and any(child.local_name == name
                                     for child in graph.nodes[0].children)


def read(prefix: str, config: BertConfig, config_path: str) -> tf1.Weights:
    """The encoder, and the pretraining heads if saved, of a training checkpoint, as original names,
    read through a model of `config` (read from `config_path`, which errors name).

    Raises:
      CheckpointError: the checkpoint does not fit the config.
    """
    encoder = build_encoder(config)
    has_pretraining_heads = "masked_lm" in saved_heads(prefix)
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
