"""SQuAD's row of the export's task kinds (official/export/kinds.py): a run_squad output served
as question + context -> the best answer, its score and offsets (official/export/squad.py),
with run_squad's feature and decoding settings (official/tasks/squad_settings.py), which must be
those of the run."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Mapping

from official.export.task_kind import LabelsOf, TaskKind
from official.tasks import squad_settings
from official.tasks.squad_settings import SquadSettings

if TYPE_CHECKING:
    import keras
    import tensorflow as tf

    from official.export.options import ExportOptions
    from official.tasks.squad import SquadTask
    from official.text.tokenizer import FullTokenizer

# Every setting but max_seq_length, which is the export's own flag: run_squad's, so that the
# export decodes as the run did.
_FLAGS = squad_settings.FLAGS


def _options(values: Mapping[str, Any], labels_of: LabelsOf) -> dict:
    return {"squad": SquadSettings(**{name: values[name]
                                      for name in ("max_seq_length", *(f.name for f in _FLAGS))})}


def _spec(options: ExportOptions) -> dict:
    return {"squad": dataclasses.asdict(options.squad or SquadSettings())}


def _task(spec: dict) -> SquadTask:
    from official.tasks.squad import SquadTask

    return SquadTask(SquadSettings(**spec["squad"]))


def _serving(model: keras.Model, tokenizer: FullTokenizer, spec: dict,
             options: ExportOptions) -> tf.Module:
    from official.export.squad import SquadExport

    return SquadExport(model, tokenizer, dataclasses.replace(
        SquadSettings(**spec["squad"]), max_seq_length=spec["max_seq_length"]))


KIND = TaskKind(name="squad", max_seq_length=384, flags=_FLAGS, options=_options, spec=_spec,
                task=_task, serving=_serving)
