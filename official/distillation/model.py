"""The teacher, the student, and the one model that trains the student beside the teacher.

    load_teacher(teacher, build_model, dtype) -> (model, config)
                        the teacher as the task's model, frozen, with its dropout off: a
                        fine-tuned model (a parameter-efficient run on its base); any
                        checkpoint's encoder for a model without heads (a sentence encoder);
                        any checkpoint with a masked-LM head for a pretrainer
    copy_teacher_layers(student, teacher, layers)
                        the student made of the teacher: embeddings, the listed layers, pooler
                        and task heads copied bit for bit (DistilBERT's initialisation)
    DistillationModel   inputs -> the student's and the teacher's outputs, and, for the hidden
                        and attention losses, their mapped layers; trains the student (and a
                        projection to the teacher's width), evaluates and predicts with the
                        student alone (`inference_model`)

The teacher is built with its dropout rates at 0: the Trainer calls its model with
training=True, and a functional model passes that to every layer, so a teacher without dropout
is how it computes exactly what it computes in inference. Its variables are frozen (no gradient,
no optimiser slots) and never saved in the student's checkpoints: a run reloads the teacher.
"""

from __future__ import annotations

import dataclasses
from typing import Callable, Sequence

import keras

from official import checkpoints
from official.checkpoints import finetuned, tf1, training
from official.checkpoints.errors import CheckpointError
from official.configs import BertConfig
from official.modeling import initializers
from official.modeling.encoder import BertEncoder, build_encoder
from official.modeling.models import BertPretrainer
from official.peft import artifact


def load_teacher(teacher: str | finetuned.Source,
                 build_model: Callable[[BertEncoder], keras.Model],
                 dtype=None) -> tuple[keras.Model, BertConfig]:
    """The teacher (resolved once by `finetuned.resolve_source`, or its path: a fine-tuning
    output_dir, best/ when kept; a checkpoint; a folder with its own config) as the model
    `build_model`
    (the task's) makes of its config, its weights loaded, dropout off and frozen; and its
    config. A `BertPretrainer` (general distillation) reads any checkpoint with a masked-LM
    head; a model without heads (a sentence encoder) any checkpoint's encoder; any other model a
    fine-tuning output of its task.

    Raises:
      CheckpointError: a checkpoint without this task's head, or without a masked-LM head for a
        pretrainer.
    """
    if isinstance(teacher, str):
        teacher = finetuned.resolve_source(teacher)
    inference = dataclasses.replace(teacher.config, hidden_dropout_prob=0.0,
                                    attention_probs_dropout_prob=0.0)
    model = build_model(build_encoder(inference, dtype=dtype))
    checkpoint = teacher.checkpoint
    trained_here = checkpoint is not None and (
        checkpoint.is_partial or training.is_training_checkpoint(checkpoint.prefix))
    if isinstance(model, BertPretrainer):
        weights = checkpoints.weights_for(teacher.weights, teacher.config)
        if not any(name.startswith(tf1.MASKED_LM_PREFIX) for name in weights):
            raise CheckpointError(f"{teacher.path} has no masked-LM head "
                                  f"({tf1.MASKED_LM_PREFIX}*): a pretraining distillation's "
                                  "teacher gives its predictions")
        tf1.assign(model, weights, source=teacher.path)
    elif model.checkpoint_items["heads"] or trained_here:
        artifact.restore(model, checkpoint or finetuned.resolve(teacher.path))
    else:
        checkpoints.load_init_checkpoint(teacher.weights, model)
    model.trainable = False
    return model, teacher.config


def copy_teacher_layers(student: keras.Model, teacher: keras.Model,
                        layers: Sequence[int]) -> None:
    """Sets the student's embeddings, layer i (from the teacher's layers[i]), pooler and heads
    to the teacher's weights.

    Raises:
      ValueError: a teacher whose layers are not plain BERT layers (a parameter-efficient run
        with adapters or LoRA: merge it first, convert_checkpoint --peft_checkpoint).
    """
    plain = student.encoder.transformer_layers[0]
    if any(len(layer.weights) != len(plain.weights)
           for layer in teacher.encoder.transformer_layers):
        raise ValueError(f"--student_layers copies the teacher's layers, and this teacher's "
                         f"have variables a BERT layer has not ({teacher.encoder.adapted_by}): "
                         "merge it into a checkpoint first (convert_checkpoint "
                         "--peft_checkpoint) and fine-tune from that, or give the student its "
                         "own --bert_config_file")
    pairs = [(student.encoder.embeddings, teacher.encoder.embeddings),
             (student.encoder.pooler, teacher.encoder.pooler)]
    pairs += [(student.encoder.transformer_layers[i], teacher.encoder.transformer_layers[j])
              for i, j in enumerate(layers)]
    heads = teacher.checkpoint_items["heads"]
    pairs += [(head, heads[name]) for name, head in student.checkpoint_items["heads"].items()]
    for target, source in pairs:
        for to, value in zip(target.weights, source.weights, strict=True):
            to.assign(value)


class DistillationModel(keras.Model):
    """The student trained beside the teacher, as one functional model the Trainer runs.

    Args:
      student: the task's model on the student encoder (what is trained and kept).
      teacher: the task's model on the teacher encoder, frozen (`load_teacher`).
      layer_map: the teacher layer of each student layer, for `hidden` and `attention`.
      hidden: also output the mapped layers' outputs, the student's projected to the teacher's
        width by a learned `hidden_projection` (Dense, no activation; TinyBERT's W_h) when the
        widths differ.
      attention: also output the mapped layers' attention probabilities.
      last: also output both last layers (projected as the hidden states), for the cosine loss.

    Outputs {"student": the student's outputs, "teacher": the teacher's, and with `hidden`
    "student_hidden_<i>" / "teacher_hidden_<i>" [batch, seq_len, teacher hidden], with
    `attention` "student_attention_<i>" / "teacher_attention_<i>" float32 [batch, heads,
    seq_len, seq_len], for each student layer i; with `last` "student_last" / "teacher_last"
    [batch, seq_len, teacher hidden]}.
    """

    def __init__(self, student: keras.Model, teacher: keras.Model, layer_map: Sequence[int],
                 hidden: bool = False, attention: bool = False, last: bool = False, **kwargs):
        self.student, self.teacher = student, teacher
        self.encoder = student.encoder  # the encoder whose original names checkpoints read
        self.layer_map = list(layer_map)
        student_width = student.encoder.config.hidden_size
        teacher_width = teacher.encoder.config.hidden_size
        self.hidden_projection = None
        if (hidden or last) and student_width != teacher_width:
            self.hidden_projection = keras.layers.Dense(
                teacher_width, dtype=student.encoder.dtype_policy,
                kernel_initializer=initializers.truncated_normal(
                    student.encoder.config.initializer_range), name="hidden_projection")
        inputs = _inputs_like(student)
        # Each side is a model of its own inside this one: the two encoders' layers have the
        # same names, which one functional graph cannot hold.
        views = {role: _view(model, self.layer_map if role == "teacher" else
                             range(len(self.layer_map)), hidden, attention, last, f"{role}_view")
                 for role, model in (("student", student), ("teacher", teacher))}
        outputs = {}
        for role, view in views.items():
            seen = view(inputs)
            outputs[role] = seen["outputs"]
            project = (self.hidden_projection if role == "student" and self.hidden_projection
                       else lambda h: h)
            for i in range(len(self.layer_map)):
                if hidden:
                    outputs[f"{role}_hidden_{i}"] = project(seen[f"hidden_{i}"])
                if attention:
                    outputs[f"{role}_attention_{i}"] = seen[f"attention_{i}"]
            if last:
                outputs[f"{role}_last"] = project(seen["last"])
        super().__init__(inputs=inputs, outputs=outputs, **kwargs)

    @property
    def inference_model(self) -> keras.Model:
        """The student: what is evaluated, predicts, and is kept in best/ and exported."""
        return self.student

    @property
    def checkpoint_items(self) -> dict:
        """The student's encoder and heads, and the projection a resumed run needs; never the
        teacher."""
        heads = dict(self.student.checkpoint_items["heads"])
        if self.hidden_projection is not None:
            heads["hidden_projection"] = self.hidden_projection
        return {"encoder": self.student.encoder, "heads": heads}


def _inputs_like(model: keras.Model) -> dict:
    """Fresh symbolic inputs of `model`'s names, shapes and dtypes."""
    return {name: keras.Input(shape=tensor.shape[1:], dtype=tensor.dtype, name=name)
            for name, tensor in model.input.items()}


def _view(model: keras.Model, layers: Sequence[int], hidden: bool, attention: bool,
          last: bool, name: str) -> keras.Model:
    """A functional model on `model`'s layers: {"outputs": its outputs, "hidden_<i>": the
    output of its layer layers[i], "attention_<i>": that layer's attention probabilities,
    "last": its last layer}. A model not built as `encoder.forward` then heads (a sentence
    encoder's pairs) is called whole: its outputs alone."""
    inputs = _inputs_like(model)
    if not hasattr(model, "head_outputs"):
        if hidden or attention or last:
            raise ValueError(f"--alpha_hidden, --alpha_attention and --alpha_cos read the "
                             f"encoder's layers under a task head; {type(model).__name__} is "
                             "distilled by its outputs (--alpha_soft)")
        return keras.Model(inputs, {"outputs": model(inputs)}, name=name)
    encoded = model.encoder.forward(
        inputs, per_layer_outputs=hidden, attention_probs=attention,
        last_layer_positions="all" if hidden or attention or last
        else model.last_layer_positions)
    outputs = {"outputs": model.head_outputs(encoded, inputs)}
    if last:
        outputs["last"] = encoded["sequence_output"]
    for i, layer in enumerate(layers):
        if hidden:
            outputs[f"hidden_{i}"] = encoded["encoder_outputs"][layer]
        if attention:
            outputs[f"attention_{i}"] = encoded["attention_probs"][layer]
    return keras.Model(inputs, outputs, name=name)
