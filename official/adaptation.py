"""The one seam every way of adapting BERT plugs into: what a method does to a training run, and
what a kind of method is.

A kind of adaptation (the parameter-efficient methods, official/peft; distillation,
official/distillation) is a row, `AdaptationKind`, of the table in official/adaptation_kinds.py
(its package holds the row, the table one line): its flags as `Flag` rows, its settings read
from their values with every check made (no TensorFlow, so an entry point answers before loading
it), and a `resolve(settings, options, task)` that reconciles them with the task and with what
the output_dir already holds (a rerun with other settings is refused there, before any work).
run_scripts/common_flags.py loops over the table and names no kind. `resolve` returns the run's
options (a method may fill one: a PEFT run's base, a student's config file) and an `Adaptation`,
whose hooks the generic runs (official/training/finetuning.py and pretraining.py) call without
naming any method:

    config(config, source)
                    the model's config and where it comes from (a distillation's student made
                    of teacher layers)
    task(task)      the task trained: a distillation wraps it (student beside teacher, its loss)
    adapt(model)    after --init_checkpoint is loaded, before the optimiser is built: insert
                    layers, freeze what does not train (PEFT)
    files()         {file name: text} written beside the checkpoints and copied into best/: the
                    record later runs, exports and merges read (None: a file of this method
                    that this run does not write, removed if an earlier run left it)

A task's own records (its `files()`, official/tasks/base.py) go the same way. The output_dir
(official/training/output_dir.py) writes and removes the names it is given, and knows none.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Callable, Mapping

from official.flag_rows import Flag

if TYPE_CHECKING:
    import keras

    from official.configs import BertConfig


class Adaptation:
    """A method resolved for one run; each hook leaves the run as it is unless the method
    overrides it."""

    def config(self, config: BertConfig | None, source: str | None
               ) -> tuple[BertConfig | None, str | None]:
        """The config the model is built from and where it comes from (a file, named in
        messages), given options.bert_config_file's (None, None when no file is given)."""
        return config, source

    def task(self, task: Any) -> Any:
        """The task the run trains, evaluates and predicts with, given the entry point's."""
        return task

    def adapt(self, model: keras.Model) -> None:
        """Changes the model in the strategy's scope, after --init_checkpoint is loaded and
        before any optimiser exists (so it sees only what is left trainable), on every run: a
        run that only predicts builds the same variables its checkpoint holds."""

    def files(self) -> dict[str, str | None]:
        """{file name: text, or None for "not written by this run"}; read once `adapt` has
        run."""
        return {}


class Leftover(Adaptation):
    """A method's record that a run stopped before its first checkpoint left (no checkpoint
    stands beside it): the run removes it, so nothing later takes it for a record of the
    checkpoints it writes."""

    def __init__(self, name: str):
        self._name = name

    def files(self) -> dict[str, str | None]:
        return {self._name: None}


@dataclasses.dataclass(frozen=True)
class AdaptationKind:
    """One kind of adaptation, a row of official/adaptation_kinds.py's table.

    Attributes:
      name: its key in a run's settings and in its table ("distillation", "peft").
      flags: its flags on the fine-tuning entry points (official/flag_rows.py); a default of
        None means "not given": the settings pick the default, and a flag given without the one
        that switches its method on is an error.
      pretraining_flags: its flags on run_pretraining; None when a pretraining run does not
        take it (a PEFT method adapts a pretrained encoder).
      settings: its settings from its flags' values ({flag name: value}) and whether the run
        pretrains, every flag checked (one line naming the flag); None when its flags ask for
        nothing.
      resolve: `resolve(settings, options, task)` -> (options, Adaptation | None), called on
        every run that takes the kind, its settings None too (an output_dir's record may hold
        it); it may load TensorFlow, so a row's function imports its method when called.
      check: its settings (not None) against the run's options and the other kinds' settings
        ({name: settings or None}), without TensorFlow (a student's size given once; a
        distillation with nothing beside it); None: nothing to check.
      checkpoints: the checkpoints its settings (not None) read (a teacher), each checked to be
        there without TensorFlow, after every other check of the entry point; None: none.
    """
    name: str
    flags: tuple[Flag, ...]
    pretraining_flags: tuple[Flag, ...] | None
    settings: Callable[[Mapping[str, Any], bool], Any]
    resolve: Callable[[Any, Any, Any], tuple[Any, Adaptation | None]]
    check: Callable[[Any, Any, Mapping[str, Any]], None] | None = None
    checkpoints: Callable[[Any], tuple[str, ...]] | None = None

    def flags_of(self, pretraining: bool) -> tuple[Flag, ...] | None:
        """Its flags on run_pretraining (`pretraining`) or on a fine-tuning entry point; None
        when that run does not take it."""
        return self.pretraining_flags if pretraining else self.flags
