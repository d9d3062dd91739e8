"""What a kind of fine-tuning task is to the export: one row of the table in
official/export/kinds.py.

    TaskKind   its export_type; its own flags of export_saved_model and what their values make
               of the export's options; the serving spec the options say; its task rebuilt
               from a spec; its serving module on the fine-tuned model

A kind is one module (official/export/classifier_kind.py, ner_kind.py, squad_kind.py) holding
its `KIND` row, and one line of registration in `kinds.KINDS`. The row imports no TensorFlow:
an entry point defines its flags and checks their values before TensorFlow loads; its `task`
and `serving` import the task (official/tasks/) and the serving graph (official/export/) when
called. The rows stand in the export's room because they name the serving graphs, which stand
there, and the tasks, which stand below (tests/test_import_rule.py).

Everything else of a task's export is the same for every kind and lives in
official/export/jobs.py: the model its task builds, the fine-tuned (or parameter-efficient) run
restored into it, folding, the serving precision, multitask exports of several runs.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from official.flag_rows import Flag

if TYPE_CHECKING:
    import keras
    import tensorflow as tf

    from official.export.options import ExportOptions
    from official.tasks.base import FinetuningTask
    from official.text.tokenizer import FullTokenizer

# (--task_name, --data_dir) -> (the task's labels, None for a regression; whether its texts come
# in pairs), as the data side (data_prep/) reads them: the library cannot import it, so the entry
# point hands it to `TaskKind.options`.
LabelsOf = Callable[[str, "str | None"], "tuple[Sequence[str] | None, bool]"]


@dataclasses.dataclass(frozen=True)
class TaskKind:
    """One kind of fine-tuning task, as its export builds it.

    Attributes:
      name: its export_type: what its task's `serving_spec()` says (official/tasks/base.py).
      max_seq_length: the default of export_saved_model's --max_seq_length for it (its
        fine-tuning entry point's).
      flags: its own flags of export_saved_model (official/flag_rows.py).
      options: (its flags' values by name, with "max_seq_length"; the data side's labels of a
        task name) -> its fields of `ExportOptions` (checked: one-line ValueErrors).
      spec: options -> what its serving spec says beyond export_type and max_seq_length, from
        the options (and what the run's records say that they do not).
      task: serving spec -> its `FinetuningTask`, whose `build_model` makes the model the run
        trained.
      serving: (the fine-tuned model, its tokenizer, the serving spec, the options) -> the
        module serving raw text.
    """
    name: str
    max_seq_length: int
    flags: tuple[Flag, ...]
    options: Callable[[Mapping[str, Any], LabelsOf], dict]
    spec: Callable[[ExportOptions], dict]
    task: Callable[[dict], FinetuningTask]
    serving: Callable[[keras.Model, FullTokenizer, dict, ExportOptions], tf.Module]
