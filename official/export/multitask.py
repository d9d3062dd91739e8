"""Several parameter-efficient runs of one base in one SavedModel: the base stored once.

    MultiTaskExport({signature name: a task's export})   one signature per task, each the task's
                                                         own serving_default (same inputs and
                                                         outputs as that task's export alone)
    share_frozen(model, pool)                            points the model's frozen weights at the
                                                         pool's, so every task reads one copy

Each task keeps its own model (official/export/classifier.py, ner.py, squad.py), whose trained
variables (adapters or LoRA matrices, LayerNorms, pooler, head) are its own. Their frozen weights
are the base's, the same values in every task (the runs' records name one base fingerprint), and
`share_frozen` makes them the same variables: the SavedModel saves a variable once however many
functions read it, so its size is the base plus each task's trained share.
"""

from __future__ import annotations

import keras

from official.checkpoints import tf1
from official.export.saving import ServingModule, TaskExport


def share_frozen(model: keras.Model, pool: dict[str, keras.Variable]) -> None:
    """For each frozen (non-trainable) weight of `model` by original name: the first model's
    goes into `pool`; a later model's is made to read the pooled one's storage instead of its
    own. All models must hold the same base.

    A Keras variable on TensorFlow wraps one tf.Variable (`keras.Variable(initializer=v)` wraps
    the tf.Variable v itself); the wrapped variable is what a traced function reads and what a
    SavedModel saves.
    """
    seen = set()
    for name, variable in tf1.original_names(model).items():
        if variable.trainable or id(variable) in seen:
            continue
        seen.add(id(variable))
        if name in pool:
            variable._value = pool[name].value  # noqa: SLF001 (as official/export/precision.py)
        else:
            pool[name] = variable


class MultiTaskExport(ServingModule):
    """One SavedModel serving several tasks (see the module docstring).

    Args:
      tasks: {signature name: the task's export (its model's frozen weights shared by
        `share_frozen`)}.
    """

    def __init__(self, tasks: dict[str, TaskExport]):
        super().__init__()
        self.tasks = tasks
        self.track_variables(*(task.model for task in tasks.values()))

    def signatures(self) -> dict:
        """{task name: that task's serving_default} (a task's other signatures, if any, as
        "<task name>_<signature>")."""
        signatures = {}
        for name, task in self.tasks.items():
            for key, function in task.signatures().items():
                signatures[name if key == "serving_default" else f"{name}_{key}"] = function
        return signatures

