"""`DistillationTask`: any fine-tuning task, its student taught by a fine-tuned teacher.

It is a `FinetuningTask` (official/tasks/base.py) wrapped around the task being distilled (by
the distillation's adaptation, official/distillation/adaptation.py), so `finetuning.run` trains,
evaluates, keeps best/ and predicts as for any task. What changes is the model
(`DistillationModel`: student beside teacher) and the loss, a weighted sum of

    alpha_hard       the task's own loss on the labels
    alpha_soft       the mean over the task's `soft_targets` of each one's match to the teacher's:
                     soft cross-entropy at temperature T (times T^2) for a distribution, squared
                     error for a regression's score, mean squared error for a vector (a sentence
                     encoder's)
    alpha_hidden     hidden-state MSE per real token and mapped layer
    alpha_attention  attention KL per real query, head and mapped layer
    alpha_cosine     1 - cosine of the last layers per real token (DistilBERT)

each normalised over the whole global batch as the task's loss is. Evaluation, prediction files,
best/ and the export are the task's own, on the student alone: a distillation's output_dir is a
fine-tuning output_dir of the student. Wrapped around the `PretrainingTask` (general
distillation, official/training/pretraining.py) it trains the masked LM alone, as DistilBERT
did, and its output_dir is a pretraining output_dir of the student.
"""

from __future__ import annotations

from typing import Mapping

import keras
import tensorflow as tf

from official.checkpoints.finetuned import Source
from official.distillation import losses
from official.distillation.model import DistillationModel, copy_teacher_layers, load_teacher
from official.distillation.settings import DistillationSettings
from official.modeling.encoder import BertEncoder
from official.tasks.base import FinetuningTask, Records
from official.tasks.pretraining import PretrainingTask

_TOKENS = "distillation_tokens"  # real tokens: the hidden and attention losses' denominator


class DistillationTask:
    """`task` distilled from the teacher `settings.teacher_checkpoint` names.

    Args:
      task: the task being distilled (any fine-tuning task; PretrainingTask for general
        distillation, whose teacher is any checkpoint with a masked-LM head: its next-sentence
        loss is dropped).
      settings: the losses, their weights and the student's make-up.
      teacher: settings.teacher_checkpoint resolved (`finetuned.resolve_source`); None resolves
        it when the model is built.
    """

    def __init__(self, task: FinetuningTask, settings: DistillationSettings,
                 teacher: Source | None = None):
        if isinstance(task, PretrainingTask):
            task = PretrainingTask(next_sentence=False)
        self.task = task
        self.settings = settings
        self.teacher = teacher
        self._layers = self._heads = 0  # the layer map's length and the heads: build_model's

    @property
    def results_file(self) -> str | None:
        return self.task.results_file

    @property
    def best_metric(self) -> str:
        return self.task.best_metric

    @property
    def keep(self) -> tuple[str, ...]:
        return self.task.keep

    def build_model(self, encoder: BertEncoder) -> DistillationModel:
        """The student on `encoder` (of the student's config), the teacher loaded and frozen
        beside it; with --student_layers the student starts as the teacher's layers.

        Raises:
          ValueError: a teacher that does not fit (another task's head, a missing checkpoint),
            a student of another vocabulary or whose outputs are shaped otherwise (a sentence
            encoder of another width), or an attention loss across different head counts.
        """
        settings = self.settings
        student = self.task.build_model(encoder)
        teacher, teacher_config = load_teacher(self.teacher or settings.teacher_checkpoint,
                                               self.task.build_model, encoder.dtype_policy)
        config = encoder.config
        if config.vocab_size != teacher_config.vocab_size:
            raise ValueError(f"the student's vocab_size {config.vocab_size} is not the "
                             f"teacher's {teacher_config.vocab_size}: both read the same "
                             "token ids")
        if settings.alpha_attention and (config.num_attention_heads
                                         != teacher_config.num_attention_heads):
            raise ValueError(f"--alpha_attention matches heads one to one, and the student has "
                             f"{config.num_attention_heads} attention heads, the teacher "
                             f"{teacher_config.num_attention_heads}")
        shapes = [keras.tree.map_structure(lambda t: tuple(t.shape), model.output)
                  for model in (student, teacher)]
        if shapes[0] != shapes[1]:
            raise ValueError(f"the student's outputs {shapes[0]} are not shaped as the "
                             f"teacher's {shapes[1]}: a teacher of another task, or a sentence "
                             "encoder of another hidden_size")
        layer_map = settings.layer_map(config.num_hidden_layers, teacher_config.num_hidden_layers)
        self._layers, self._heads = len(layer_map), config.num_attention_heads
        if settings.student_layers is not None:
            copy_teacher_layers(student, teacher, settings.student_layers)
        return DistillationModel(student, teacher, layer_map, hidden=settings.alpha_hidden > 0,
                                 attention=settings.alpha_attention > 0,
                                 last=settings.alpha_cosine > 0)

    # ---- the loss (the Trainer's Task protocol) ------------------------------------------------

    def normalizers(self, features: Mapping[str, tf.Tensor]) -> dict[str, tf.Tensor]:
        """The task's, and the real tokens the hidden and attention losses average over."""
        return dict(self.task.normalizers(features),
                    **{_TOKENS: tf.reduce_sum(tf.cast(features["input_mask"], tf.float32))})

    def loss_and_stats(self, outputs: Mapping, features: Mapping[str, tf.Tensor],
                       normalizers: Mapping[str, tf.Tensor]) -> tuple[tf.Tensor, dict]:
        """This batch's share of the weighted loss. Stats: the task's sums, and each
        distillation loss's sum with what it is averaged over ("soft_<target>" and
        "soft_<target>_weight"; "hidden", "attention", "cosine" and the real tokens), from
        which `metrics` averages them."""
        s = self.settings
        hard, stats = self.task.loss_and_stats(outputs["student"], features, normalizers)
        stats[_TOKENS] = tf.reduce_sum(tf.cast(features["input_mask"], tf.float32))
        student_targets = self.task.soft_targets(outputs["student"], features)
        teacher_targets = self.task.soft_targets(outputs["teacher"], features)
        soft = tf.constant(0.0)
        for name, target in student_targets.items():
            teacher = teacher_targets[name]
            if target.kind == "score":
                total = losses.squared_error(target.logits, teacher.logits, target.weights)
            elif target.kind == "vector":
                total = losses.mean_squared_error(target.logits, teacher.logits, target.weights)
            else:
                total = losses.soft_cross_entropy(target.logits, teacher.logits, target.weights,
                                                  s.temperature)
            stats[f"soft_{name}"] = total
            stats[f"soft_{name}_weight"] = tf.reduce_sum(target.weights)
            soft += total / tf.maximum(normalizers[target.normalizer], 1.0)
        loss = s.alpha_hard * hard + s.alpha_soft * soft / len(student_targets)
        for kind, weight, loss_fn in (("hidden", s.alpha_hidden, losses.hidden_mse),
                                      ("attention", s.alpha_attention, losses.attention_kl)):
            if weight:
                total = loss_fn([outputs[f"student_{kind}_{i}"] for i in range(self._layers)],
                                [outputs[f"teacher_{kind}_{i}"] for i in range(self._layers)],
                                features["input_mask"])
                stats[kind] = total
                loss += weight * total / tf.maximum(
                    normalizers[_TOKENS] * self._per_token_terms(kind), 1.0)
        if s.alpha_cosine:
            total = losses.cosine_distance(outputs["student_last"], outputs["teacher_last"],
                                           features["input_mask"])
            stats["cosine"] = total
            loss += s.alpha_cosine * total / tf.maximum(normalizers[_TOKENS], 1.0)
        return loss, stats

    def _per_token_terms(self, kind: str) -> int:
        """The terms one real token adds to a loss: one per mapped layer (and head); one for
        the last layers' cosine."""
        if kind == "cosine":
            return 1
        return self._layers * (self._heads if kind == "attention" else 1)

    def metrics(self, stats: Mapping[str, float]) -> dict[str, float]:
        """The task's training metrics, and each distillation loss as a mean."""
        result = self.task.metrics(stats)
        for key, value in stats.items():
            if key.startswith("soft_") and not key.endswith("_weight"):
                result[key] = float(value) / max(float(stats[f"{key}_weight"]), 1e-12)
            elif key in ("hidden", "attention", "cosine"):
                result[f"{key}_loss"] = float(value) / max(
                    float(stats[_TOKENS]) * self._per_token_terms(key), 1e-12)
        return result

    # ---- everything else is the task's, on the student ----------------------------------------

    def evaluate(self, outputs: Mapping, records: Records) -> dict[str, float]:
        return self.task.evaluate(outputs, records)

    def write_predictions(self, outputs: Mapping, records: Records,
                          output_dir: str | None) -> dict[str, float]:
        return self.task.write_predictions(outputs, records, output_dir)

    def serving_spec(self) -> dict:
        return self.task.serving_spec()

    def files(self) -> dict[str, str | None]:
        """The task's own records (a classifier's long_documents.json): the student reads
        documents as the task does."""
        return self.task.files()
