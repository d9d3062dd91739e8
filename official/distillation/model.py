"""The teacher, the student, and the one model that trains the student beside the teacher.

    teacher_config(path) -> (file, config)
                        the bert_config.json beside a fine-tuning's checkpoint
    load_teacher(path, build_model, dtype) -> (model, config)
                        a fine-tuned model as its output_dir holds it (best/ when kept; a
                        parameter-efficient run on its base), frozen, with its dropout off
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
import os
from typing import Callable, Sequence

import keras

from official import checkpoints
from official.checkpoints import tf1
from official.checkpoints.errors import CheckpointError
from official.checkpoints.training import CONFIG_FILE
from official.configs import BertConfig
from official.export.restoring import restore_finetuned
from official.modeling import initializers
from official.modeling.encoder import BertEncoder, build_encoder
from official.peft import artifact


def teacher_config(path: str, pretrained: bool = False) -> tuple[str, BertConfig]:
    """(the file, the config) of the fine-tuned model at `path` (an output_dir, its best/, or
    a checkpoint prefix in one) or, `pretrained`, of a pretraining checkpoint (the original's
    release, run_pretraining's output_dir): the bert_config.json beside its checkpoint.

    Raises:
      CheckpointError: no checkpoint there, or no bert_config.json beside it.
    """
    prefix = (checkpoints.resolve_checkpoint(path) if pretrained
              else artifact.find_run(path)[0])
    config_path = os.path.join(os.path.dirname(prefix), CONFIG_FILE)
    if not os.path.isfile(config_path):
        raise CheckpointError(f"{prefix}: the teacher's {CONFIG_FILE} is not beside it "
                              f"({config_path})")
    return config_path, BertConfig.from_json_file(config_path)


def load_teacher(path: str, build_model: Callable[[BertEncoder], keras.Model], dtype=None,
                 pretrained: bool = False) -> tuple[keras.Model, BertConfig]:
    """The model at `path` (see `teacher_config`), built by `build_model` (the task's), its
    weights loaded, dropout off and frozen; and its config. `pretrained`: a `BertPretrainer`
    (general distillation), read from any pretraining checkpoint with a masked-LM head.

    Raises:
      CheckpointError: what `teacher_config` raises; a checkpoint without this task's head.
    """
    _, config = teacher_config(path, pretrained)
    inference = dataclasses.replace(config, hidden_dropout_prob=0.0,
                                    attention_probs_dropout_prob=0.0)
    teacher = build_model(build_encoder(inference, dtype=dtype))
    if pretrained:
        weights = checkpoints.weights_for(path, config)
        if not any(name.startswith(tf1.MASKED_LM_PREFIX) for name in weights):
            raise CheckpointError(f"{path} has no masked-LM head ({tf1.MASKED_LM_PREFIX}*): a "
                                  "pretraining distillation's teacher gives its predictions")
        tf1.assign(teacher, weights, source=path)
    else:
        restore_finetuned(teacher, path)
    teacher.trainable = False
    return teacher, config


def copy_teacher_layers(student: keras.Model, teacher: keras.Model,
                        layers: Sequence[int]) -> None:
    """Sets the student's embeddings, layer i (from the teacher's layers[i]), pooler and heads
    to the teacher's weights.

    Raises:
      ValueError: a teacher with adapters or LoRA (its layers are not plain BERT layers: merge
        it first, convert_checkpoint --peft_checkpoint).
    """
    if teacher.encoder.adapted:
        raise ValueError("--student_layers copies the teacher's layers, and this teacher is a "
                         "parameter-efficient run: merge it into a checkpoint first "
                         "(convert_checkpoint --peft_checkpoint) and fine-tune from that, or "
                         "give the student its own --student_bert_config_file")
    pairs = [(student.encoder.embeddings, teacher.encoder.embeddings),
             (student.encoder.pooler, teacher.encoder.pooler)]
    pairs += [(student.encoder.transformer_layers[i], teacher.encoder.transformer_layers[j])
              for i, j in enumerate(layers)]
    pairs += [(head, teacher.checkpoint_heads[name])
              for name, head in student.checkpoint_heads.items()]
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
        heads = dict(self.student.checkpoint_heads)
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
    "last": its last layer}."""
    inputs = _inputs_like(model)
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
