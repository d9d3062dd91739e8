"""`DistillationSettings`: what a distillation's flags say, checked before any data or model work.

Every training entry point takes these flags (`flags`, rows that run_scripts/common_flags.py
defines through the adaptation kinds' table: official/distillation/kind.py); --teacher_checkpoint
makes its run a distillation.

    --teacher_checkpoint       a fine-tuning output_dir of the same task (its best/ when kept) or
                               a checkpoint in one; a parameter-efficient run is read with its
                               base; for a sentence encoder any checkpoint, a Hugging Face or
                               sentence-transformers folder too; for run_pretraining any
                               checkpoint with a masked-LM head
    --student_layers=0,2,4     the student is the teacher's embeddings, these layers (in this
                               order), pooler and head (DistilBERT's initialisation), or
    --bert_config_file         the student of any size, initialised by --init_checkpoint (a
                               pretrained compact BERT, as in Turc et al. 2019) or at random
    --temperature=T            the softmax temperature of the soft targets (default 2)
    --alpha_soft, --alpha_hard the weights of the soft loss (cross-entropy against the teacher's
                               probabilities at T, times T^2; squared error to the teacher's
                               score for regression) and of the task's own loss
    --alpha_hidden             MSE between each student layer and its teacher layer (through a
                               learned projection when the widths differ), real tokens only
    --alpha_attention          KL divergence of the teacher's attention from the student's, per
                               mapped layer, head and real query (TinyBERT); same heads needed
    --alpha_cos                1 - cosine of the student's and the teacher's last layer, per real
                               token (DistilBERT; through the projection when the widths differ)

General (pretraining) distillation takes DistilBERT's names and defaults: --alpha_ce is
alpha_soft (over the masked positions' vocabulary, default 5), --alpha_mlm alpha_hard (the
masked-LM loss alone, default 2).

Student layer i is matched to teacher layer `layer_map[i]`: the listed layers with
--student_layers, otherwise every (L_teacher / L_student)-th layer, ending at the last (TinyBERT's
uniform map).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Mapping

from official.configs import BertConfig
from official.flag_rows import Flag
from official.settings_parsing import int_list

# The flags of the soft and hard weights: a fine-tuning's, and DistilBERT's for pretraining.
_WEIGHT_FLAGS = {False: ("alpha_soft", "alpha_hard"), True: ("alpha_ce", "alpha_mlm")}
_PRETRAINING_DEFAULTS = {"alpha_soft": 5.0, "alpha_hard": 2.0}  # DistilBERT's


@dataclasses.dataclass(frozen=True)
class DistillationSettings:
    """One distillation's losses and student.

    Attributes:
      teacher_checkpoint: the fine-tuned teacher (output_dir, best/ or a checkpoint prefix).
      student_layers: teacher layers that make the student (None: a student of its own config).
      temperature: of the soft targets; the soft loss is scaled by its square, so its gradients
        keep their size as it changes (Hinton et al. 2015).
      alpha_soft, alpha_hard, alpha_hidden, alpha_attention, alpha_cosine: the weight of
        each loss.
      pretraining: (not kept) messages name the soft and hard weights by run_pretraining's
        flags, --alpha_ce and --alpha_mlm.
    """
    teacher_checkpoint: str
    student_layers: tuple[int, ...] | None = None
    temperature: float = 2.0
    alpha_soft: float = 0.5
    alpha_hard: float = 0.5
    alpha_hidden: float = 0.0
    alpha_attention: float = 0.0
    alpha_cosine: float = 0.0
    pretraining: dataclasses.InitVar[bool] = False

    def __post_init__(self, pretraining: bool):
        if not self.teacher_checkpoint:
            raise ValueError("--teacher_checkpoint is needed: the fine-tuned model to distil")
        if not (self.temperature > 0 and math.isfinite(self.temperature)):
            raise ValueError(f"--temperature must be positive, got {self.temperature}")
        named = _flag_names(pretraining)
        weights = {named[name]: getattr(self, name) for name in
                   ("alpha_soft", "alpha_hard", "alpha_hidden", "alpha_attention",
                    "alpha_cosine")}
        negative = [f"--{flag}={value}" for flag, value in weights.items()
                    if not (value >= 0 and math.isfinite(value))]
        if negative:
            raise ValueError(f"{', '.join(negative)}: a loss weight must be 0 or more")
        if not any(weights.values()):
            raise ValueError(f"every loss weight ({', '.join('--' + f for f in weights)}) is 0: "
                             "nothing would train")
        if self.student_layers is not None and not self.student_layers:
            raise ValueError("--student_layers names no layer")
        layers = self.student_layers or ()
        if len(set(layers)) != len(layers):
            raise ValueError(f"--student_layers={_listed(layers)} names a layer twice")

    @classmethod
    def from_flags(cls, teacher_checkpoint: str | None, student_layers: str | None = None,
                   pretraining: bool = False, any_order: bool = False, **values: float | None
                   ) -> "DistillationSettings | None":
        """The settings of the flags' values (None: not given), or None when no distillation is
        asked for (no flag given). `student_layers` as written ("0,2,4"), in increasing order
        unless `any_order` (a reversed student is more likely a slip than a design); `values`
        by field name (alpha_soft, alpha_hard, temperature, ...); `pretraining` names the soft
        and hard weights --alpha_ce and --alpha_mlm in messages and takes DistilBERT's defaults.

        Raises:
          ValueError: one line naming the flag (a distillation flag without
            --teacher_checkpoint too).
        """
        named = _flag_names(pretraining)
        given = {name: value for name, value in values.items() if value is not None}
        if not teacher_checkpoint:
            stray = ["--student_layers"] * (student_layers is not None) + [
                "--" + named.get(name, name) for name in given]
            if stray:
                raise ValueError(f"--teacher_checkpoint is needed: {', '.join(stray)} "
                                 "distil a teacher into this run's model")
            if teacher_checkpoint is None:
                return None
        layers = None if student_layers is None else int_list(student_layers, "--student_layers")
        if layers and not any_order and list(layers) != sorted(layers):
            raise ValueError(f"--student_layers={_listed(layers)} is not in increasing order: "
                             "give --student_layers_any_order if the order is meant")
        defaults = _PRETRAINING_DEFAULTS if pretraining else {}
        return cls(teacher_checkpoint=teacher_checkpoint or "", student_layers=layers,
                   pretraining=pretraining, **{**defaults, **given})

    @classmethod
    def from_flag_values(cls, values: Mapping[str, Any], pretraining: bool = False
                         ) -> "DistillationSettings | None":
        """`from_flags` of the values of `flags(pretraining)`, by flag name."""
        return cls.from_flags(
            values["teacher_checkpoint"], values["student_layers"], pretraining,
            values["student_layers_any_order"],
            **{field: values[flag] for field, flag in _flag_names(pretraining).items()})

    def check_run(self, options: Any, others: Mapping[str, Any]) -> None:
        """Checks, without TensorFlow, that the student trains whole (no other adaptation in
        `others`, {kind: its settings or None}: a PEFT method, named by its `describe()`) and
        that the run's `options` give its size once (`check_student`).

        Raises:
          ValueError: one line.
        """
        for other in others.values():
            if other is not None:
                raise ValueError(f"--teacher_checkpoint and {other.describe()}: a distillation "
                                 "trains its student whole")
        self.check_student(options)

    def check_student(self, options: Any) -> None:
        """Checks that the run's options (FinetuningOptions or PretrainingOptions) give the
        student's size once: without TensorFlow, so an entry point says it before loading it.

        Raises:
          ValueError: --student_layers with --bert_config_file or --init_checkpoint, or neither
            --student_layers nor --bert_config_file.
        """
        if self.student_layers is not None:
            if options.bert_config_file:
                raise ValueError("--bert_config_file and --student_layers both give the "
                                 "student's size: give one")
            if options.init_checkpoint:
                raise ValueError("--init_checkpoint with --student_layers: the student's "
                                 "weights are the teacher's layers")
        elif not options.bert_config_file:
            raise ValueError("a distillation's student needs its size: --bert_config_file (the "
                             "student's config), or --student_layers (the teacher's layers)")

    def student_config(self, teacher: BertConfig) -> BertConfig:
        """The student's config when it is made of teacher layers: the teacher's with fewer.

        Raises:
          ValueError: a layer the teacher lacks; a teacher in ALBERT's layout.
        """
        layers = self.student_layers or ()
        if teacher.albert:
            raise ValueError(f"--student_layers={_listed(layers)}: the teacher has ALBERT's "
                             "layer groups, so its layers have no weights of their own to copy; "
                             "give the student its own --bert_config_file")
        beyond = [i for i in layers if not 0 <= i < teacher.num_hidden_layers]
        if beyond:
            raise ValueError(f"--student_layers={_listed(layers)}: the teacher has layers 0 to "
                             f"{teacher.num_hidden_layers - 1}, not "
                             f"{', '.join(map(str, beyond))}")
        return dataclasses.replace(teacher, num_hidden_layers=len(layers))

    def layer_map(self, student_layers: int, teacher_layers: int) -> list[int]:
        """The teacher layer each student layer learns from (hidden and attention losses)."""
        if self.student_layers is not None:
            return list(self.student_layers)
        if student_layers > teacher_layers:
            raise ValueError(f"the student has {student_layers} layers, more than the teacher's "
                             f"{teacher_layers}: no layer map")
        step = teacher_layers // student_layers
        return [teacher_layers - 1 - step * (student_layers - 1 - i)
                for i in range(student_layers)]


def flags(pretraining: bool) -> tuple[Flag, ...]:
    """The flags of a distillation (the first, --teacher_checkpoint, switches it on) on a
    fine-tuning entry point, or with DistilBERT's names and defaults for the soft and hard
    weights on run_pretraining (`pretraining`)."""
    soft, hard = _WEIGHT_FLAGS[pretraining]
    defaults = _PRETRAINING_DEFAULTS if pretraining else {
        "alpha_soft": DistillationSettings.alpha_soft,
        "alpha_hard": DistillationSettings.alpha_hard}
    return (
        Flag("teacher_checkpoint", str, None,
             "Distil this teacher into the run's model (the student): a fine-tuning output_dir "
             "of the same task (its best/ when kept) or a checkpoint in one; a sentence "
             "encoder's, any checkpoint or Hugging Face folder; run_pretraining's, any "
             "checkpoint with a masked-LM head."),
        Flag("student_layers", str, None,
             "With --teacher_checkpoint: the student is these teacher layers (e.g. 0,2,4), with "
             "the teacher's embeddings, pooler and head; instead of --bert_config_file. In "
             "increasing order unless --student_layers_any_order."),
        Flag("student_layers_any_order", bool, False,
             "--student_layers in the order given even when it is not increasing (a student "
             "whose layer 0 is a later teacher layer than its layer 1, on purpose)."),
        Flag("temperature", float, None, "The softmax temperature of the soft targets "
             f"(default {DistillationSettings.temperature:g})."),
        Flag(soft, float, None,
             "Weight of the soft loss: cross-entropy against the teacher's probabilities at "
             "--temperature, times its square (squared error to its score for regression, mean "
             "squared error to its vectors for a sentence encoder). Default "
             f"{defaults['alpha_soft']:g}."),
        Flag(hard, float, None,
             f"Weight of the task's own loss on the labels. Default {defaults['alpha_hard']:g}."),
        Flag("alpha_hidden", float, None,
             "Weight of the MSE between student layers and their teacher layers (real tokens; a "
             "learned projection when the widths differ). Default 0."),
        Flag("alpha_attention", float, None,
             "Weight of the KL divergence between teacher and student attention of mapped "
             "layers (real tokens; the same number of heads). Default 0."),
        Flag("alpha_cos", float, None,
             "Weight of 1 - the cosine of the student's and teacher's last layers per real "
             "token (DistilBERT; a learned projection when the widths differ). Default 0."))


def _flag_names(pretraining: bool) -> dict[str, str]:
    """{field: the flag that sets it} for the settings of `from_flags`' `values`."""
    soft, hard = _WEIGHT_FLAGS[pretraining]
    return {"temperature": "temperature", "alpha_soft": soft, "alpha_hard": hard,
            "alpha_hidden": "alpha_hidden", "alpha_attention": "alpha_attention",
            "alpha_cosine": "alpha_cos"}


def _listed(layers) -> str:
    return ",".join(map(str, layers))
