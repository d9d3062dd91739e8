"""NER's row of the export's task kinds (official/export/kinds.py): a run_ner output served as
sentences -> entities with their character offsets (official/export/ner.py); its tags and
whether its tagger mixes layers from its tagger.json (CoNLL-2003's tags when it records none, as
runs of CoNLL-2003 and every run before tags were recorded), or its tags as --ner_labels names
them; a feature-based run's setting from its record."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Mapping

from official.export.task_kind import LabelsOf, TaskKind
from official.flag_rows import Flag

if TYPE_CHECKING:
    import keras
    import tensorflow as tf

    from official.export.options import ExportOptions
    from official.tasks.ner import NerTask
    from official.tasks.ner_settings import TaggerSettings
    from official.text.tokenizer import FullTokenizer


def _options(values: Mapping[str, Any], labels_of: LabelsOf) -> dict:
    return {"labels": values["ner_labels"]}


def recorded_tagger(path: str) -> tuple[TaggerSettings, str]:
    """What the run_ner output at `path` (its best/ when kept) records of its tagger, and the
    record's path: its tags (None: CoNLL-2003's, or a run of another format's before tags were
    recorded) and whether it mixes layers.

    Raises:
      CheckpointError: no checkpoint at `path`.
      ValueError: a tagger.json that is not such a record.
    """
    from official.checkpoints import finetuned
    from official.tasks.ner_settings import TAGGER_FILE, TaggerSettings

    run = finetuned.resolve(path)
    record = os.path.join(run.directory, TAGGER_FILE)
    return run.record(TAGGER_FILE, TaggerSettings) or TaggerSettings(), record


def _spec(options: ExportOptions) -> dict:
    """The tags and whether the tagger mixes layers, from the run's tagger.json; the options'
    tags (--ner_labels) rename its outputs when given (a part-of-speech run's tags serve as they
    are, each word a span of its own: official/export/ner.py).

    Raises:
      ValueError: the options name another number of outputs than the run records.
    """
    tagger, record = recorded_tagger(options.peft_checkpoint or options.init_checkpoint)
    if options.labels and tagger.labels is not None and \
            len(options.labels) != len(tagger.labels):
        raise ValueError(f"--ner_labels names {len(options.labels)} tags; the run's {record} "
                         f"records {len(tagger.labels)}: {','.join(tagger.labels)}")
    labels = list(options.labels) if options.labels else tagger.tags()
    mix = {"mix_layers": True} if tagger.mix_layers else {}
    return {"labels": labels, **mix}


def _task(spec: dict) -> NerTask:
    from official.tasks import ner_settings
    from official.tasks.ner import NerTask

    return NerTask(spec["labels"], ner_settings.from_spec(spec),
                   tagger=ner_settings.TaggerSettings(spec.get("mix_layers", False)))


def _serving(model: keras.Model, tokenizer: FullTokenizer, spec: dict,
             options: ExportOptions) -> tf.Module:
    from official.export.ner import NerExport

    return NerExport(model, tokenizer, spec["labels"], spec["max_seq_length"])


KIND = TaskKind(
    name="ner", max_seq_length=128,
    flags=(Flag("ner_labels", list, None,
                "ner: the tags, in output order (default: those the run's tagger.json "
                "records, else CoNLL-2003's)."),),
    options=_options, spec=_spec, task=_task, serving=_serving)
