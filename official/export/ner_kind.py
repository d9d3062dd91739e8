"""NER's row of the export's task kinds (official/export/kinds.py): a run_ner output served as
sentences -> entities with their character offsets (official/export/ner.py); its tags from
--ner_labels (CoNLL-2003's by default), a feature-based run's setting from its record, a tagger
that mixes layers from its tagger.json."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

from official.export.task_kind import LabelsOf, TaskKind
from official.flag_rows import Flag
from official.tasks.ner_metrics import CONLL2003_LABELS

if TYPE_CHECKING:
    import keras
    import tensorflow as tf

    from official.export.options import ExportOptions
    from official.tasks.ner import NerTask
    from official.text.tokenizer import FullTokenizer


def _options(values: Mapping[str, Any], labels_of: LabelsOf) -> dict:
    return {"labels": values["ner_labels"]}


def _spec(options: ExportOptions) -> dict:
    """The tags from the options; a tagger that mixes layers from the run's tagger.json."""
    if not options.labels:
        raise ValueError("export_type=ner needs the tag set (labels)")
    from official.checkpoints import finetuned
    from official.tasks.ner_settings import TAGGER_FILE, TaggerSettings

    run = finetuned.resolve(options.peft_checkpoint or options.init_checkpoint)
    tagger = run.record(TAGGER_FILE, TaggerSettings)
    mix = {"mix_layers": True} if tagger is not None and tagger.mix_layers else {}
    return {"labels": list(options.labels), **mix}


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
    flags=(Flag("ner_labels", list, list(CONLL2003_LABELS), "ner: the tags, in output order."),),
    options=_options, spec=_spec, task=_task, serving=_serving)
