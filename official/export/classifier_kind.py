"""The classifier's row of the export's task kinds (official/export/kinds.py): a run_classifier
output served as text (pairs) -> probabilities and label, or a score (official/export/
classifier.py), documents read as the run read them.

Its labels and whether its texts come in pairs are the data side's of --task_name (data_prep/
glue.py, through the entry point); how the run read long documents is its long_documents.json
(official/tasks/long_doc_settings.py) unless the options say.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Mapping

from official.export.task_kind import LabelsOf, TaskKind
from official.flag_rows import Flag
from official.tasks.long_doc_settings import RECORD_FILE, LongDocSettings

if TYPE_CHECKING:
    import keras
    import tensorflow as tf

    from official.export.options import ExportOptions
    from official.tasks.classification import ClassificationTask
    from official.text.tokenizer import FullTokenizer


def _options(values: Mapping[str, Any], labels_of: LabelsOf) -> dict:
    if not values["task_name"]:
        raise ValueError("--export_type=classifier needs --task_name (its labels)")
    labels, pair = labels_of(values["task_name"], values["data_dir"])
    return {"labels": labels, "pair": pair}


def _spec(options: ExportOptions) -> dict:
    """Labels and pairing from the options; the reading of long documents from them, else from
    the run's long_documents.json (none: truncate, the original's)."""
    spec: dict = {"labels": None if options.labels is None else list(options.labels),
                  "pair": options.pair}
    long_doc = options.long_doc
    if long_doc is None:
        from official.checkpoints import finetuned

        run = finetuned.resolve(options.peft_checkpoint or options.init_checkpoint)
        long_doc = run.record(RECORD_FILE, LongDocSettings)
    if long_doc is not None:
        spec["long_doc"] = dataclasses.asdict(long_doc)
    return spec


def _long_doc(spec: dict) -> LongDocSettings:
    return LongDocSettings(**spec.get("long_doc", {}))


def _task(spec: dict) -> ClassificationTask:
    from official.tasks.classification import ClassificationTask

    return ClassificationTask(spec.get("task_name"), spec["labels"], pair=spec.get("pair", False),
                              long_doc=_long_doc(spec))


def _serving(model: keras.Model, tokenizer: FullTokenizer, spec: dict,
             options: ExportOptions) -> tf.Module:
    """--jit_compile compiles the model's part with XLA; a windows run's encoder reads
    --window_batch_size windows at a time."""
    from official.export.classifier import ClassifierExport

    return ClassifierExport(model, tokenizer, spec["labels"], spec["max_seq_length"],
                            spec.get("pair", False), options.jit_compile, _long_doc(spec),
                            options.window_batch_size)


KIND = TaskKind(
    name="classifier", max_seq_length=128,
    flags=(Flag("task_name", str, None, "classifier: the run_classifier task (its labels)."),
           Flag("data_dir", str, None,
                "classifier with --task_name=tsv: the task's data_dir (its labels.txt).")),
    options=_options, spec=_spec, task=_task, serving=_serving)
