"""The one seam every way of adapting BERT plugs into: what a method does to a training run.

A method (official/peft: adapters, LoRA, BitFit; official/distillation) has settings, built from
its flags by the settings' own `from_flags` with every check made, and a `resolve(settings,
options, task)` that reconciles them with the task and with what the output_dir already holds
(a rerun with other settings is refused there, before any work). It returns the run's options
(a method may fill one: a PEFT run's base, a student's config file) and an `Adaptation`, whose
hooks the generic runs (official/training/finetuning.py and pretraining.py) call without naming
any method:

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

from typing import TYPE_CHECKING, Any

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
