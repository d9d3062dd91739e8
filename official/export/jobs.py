"""export_saved_model's library half: options -> the model, its serving module, a versioned export.

    ExportOptions   what the entry point's flags say (official/export/options.py)
    export(options) builds and loads the model of `options.export_type`, wraps it in its serving
                    module and saves it as `export_dir/<version>/`; returns that path

    export_type   model (weights from init_checkpoint)          serving module  (EXPORT_TYPES)
    preprocessor  none                                          preprocessing.BertPreprocessor
    encoder       BertEncoder (+ masked-LM head if saved)       encoder.HubEncoder
    sentence_encoder  BertSentenceEncoder (any checkpoint; its      sentence_encoder.
                  pooling from the flags, else the record or        SentenceEncoderExport
                  sentence-transformers folder beside it)
    classifier    ClassificationTask's, fine-tuned              classifier.ClassifierExport
    ner           NerTask's, fine-tuned                         ner.NerExport
    squad         SquadTask's, fine-tuned                       squad.SquadExport
    multitask     several parameter-efficient runs of one base  multitask.MultiTaskExport
                  (each task's own model, the base's weights shared)

A parameter-efficient run (official/peft) exports as any other run: `init_checkpoint` is the
run (its record names its base), or the base with the run as `peft_checkpoint`.

A fine-tuning task's export is built from its serving spec (the task's `serving_spec()`, which a
PEFT run records; else the one the flags say) by its entry in `TASK_SERVING`: the model the
task's `build_model` makes, loaded from the fine-tuning output (best/ when kept), in its serving
module. The tasks themselves know nothing of serving.

The task's labels come with the options (the entry point reads them from data_prep: the
library does not import it).
"""

from __future__ import annotations

import dataclasses
import re
from typing import Callable, Sequence

import keras
import tensorflow as tf

from official import checkpoints
from official.checkpoints import finetuned, sentence_transformers
from official.configs import BertConfig
from official.export import multitask, precision, restoring, saving
from official.export.classifier import ClassifierExport
from official.export.encoder import HubEncoder
from official.export.ner import NerExport
from official.export.options import ExportOptions, check_files
from official.export.preprocessing import BertPreprocessor
from official.export.sentence_encoder import SentenceEncoderExport
from official.export.squad import SquadExport
from official.modeling.encoder import build_encoder
from official.modeling.models import BertSentenceEncoder
from official.peft import artifact, merging, methods
from official.sentence_settings import DEFAULT_SETTINGS
from official.tasks import ner_settings
from official.tasks.base import FinetuningTask
from official.tasks.classification import ClassificationTask
from official.tasks.long_doc_settings import RECORD_FILE, LongDocSettings
from official.tasks.ner import NerTask
from official.tasks.squad import SquadTask
from official.tasks.squad_settings import SquadSettings
from official.text import vocab
from official.text.tokenizer import FullTokenizer


def _config(options: ExportOptions, weights: str | None = None) -> BertConfig:
    """options.bert_config_file, else the bert_config.json beside `weights` (default the run
    exported: peft_checkpoint or init_checkpoint), checked against max_seq_length and the vocab."""
    path = options.bert_config_file
    weights = weights or options.peft_checkpoint or options.init_checkpoint
    if path is None and weights:
        path = checkpoints.beside(weights, checkpoints.CONFIG_FILE)
        if path is None:
            raise ValueError(f"no --bert_config_file given and no {checkpoints.CONFIG_FILE} "
                             f"beside {weights}")
    if path is None:
        raise ValueError(f"export_type={options.export_type} needs --bert_config_file")
    config = BertConfig.from_json_file(path)
    config.check_seq_length(options.max_seq_length, path, flag="max_seq_length")
    vocab.check_fits(options.vocab_file, config.vocab_size, path)
    return config


def _model_config(options: ExportOptions) -> BertConfig:
    """The config of an export with a model; its weights (`init_checkpoint`, or a
    `peft_checkpoint` that names its base) are named first."""
    if not (options.init_checkpoint or options.peft_checkpoint):
        raise ValueError(f"export_type={options.export_type} needs --init_checkpoint")
    return _config(options)


def _preprocessor(options: ExportOptions, tokenizer: FullTokenizer) -> tf.Module:
    return BertPreprocessor(tokenizer, options.max_seq_length)


def _encoder(options: ExportOptions, tokenizer: FullTokenizer) -> tf.Module:
    encoder, pretrainer = restoring.pretrained_encoder(_model_config(options),
                                                       options.init_checkpoint)
    precision.in_serving_dtype(pretrainer or encoder, options.serving_dtype)
    return HubEncoder(encoder, tokenizer, pretrainer)


def _sentence_encoder(options: ExportOptions, tokenizer: FullTokenizer) -> tf.Module:
    """Any checkpoint's encoder pooled into sentence vectors; a Hugging Face folder's own
    config.json is its config."""
    if not options.init_checkpoint:
        raise ValueError("export_type=sentence_encoder needs --init_checkpoint")
    settings = options.sentence.over(sentence_transformers.settings_of(options.init_checkpoint))
    settings = settings.over(DEFAULT_SETTINGS)
    config = checkpoints.read_config_and_weights(options.init_checkpoint)[0]
    if config is None:
        config = _config(dataclasses.replace(options, max_seq_length=settings.max_seq_length))
    else:
        config.check_seq_length(settings.max_seq_length, options.init_checkpoint,
                                flag="max_seq_length")
    encoder, _ = restoring.pretrained_encoder(config, options.init_checkpoint)
    model = BertSentenceEncoder(encoder, settings.pooling, settings.normalize)
    precision.in_serving_dtype(model, options.serving_dtype)
    return SentenceEncoderExport(model, tokenizer, settings.max_seq_length, options.jit_compile)


# ---- the exports of fine-tuning tasks, from their serving specs ----------------------------------

def _long_doc(spec: dict) -> LongDocSettings:
    return LongDocSettings(**spec.get("long_doc", {}))


@dataclasses.dataclass(frozen=True)
class TaskServing:
    """How a fine-tuning task's export is built from its serving spec (`serving_spec()` with its
    max_seq_length: official/tasks/base.py).

    Attributes:
      task: the task of a spec, whose `build_model` makes the model the run trained.
      module: (the fine-tuned model, tokenizer, spec, options) -> the module serving raw text.
    """
    task: Callable[[dict], FinetuningTask]
    module: Callable[[keras.Model, FullTokenizer, dict, "ExportOptions"], tf.Module]


# A fine-tuning export type -> how its task and serving module are built: adding a task's export
# is its module in official/export/ and an entry here.
TASK_SERVING: dict[str, TaskServing] = {
    "classifier": TaskServing(
        task=lambda spec: ClassificationTask(spec.get("task_name"), spec["labels"],
                                             pair=spec.get("pair", False),
                                             long_doc=_long_doc(spec)),
        # Text (pairs) -> probabilities and label, documents read as the run read them;
        # --jit_compile compiles the model's part with XLA.
        module=lambda model, tokenizer, spec, options: ClassifierExport(
            model, tokenizer, spec["labels"], spec["max_seq_length"], spec.get("pair", False),
            options.jit_compile, _long_doc(spec), options.window_batch_size)),
    "ner": TaskServing(
        task=lambda spec: NerTask(spec["labels"], ner_settings.from_spec(spec)),
        # Sentences -> entities with their character offsets.
        module=lambda model, tokenizer, spec, options: NerExport(
            model, tokenizer, spec["labels"], spec["max_seq_length"])),
    "squad": TaskServing(
        task=lambda spec: SquadTask(SquadSettings(**spec["squad"])),
        # Question + context -> the best answer, its score and offsets.
        module=lambda model, tokenizer, spec, options: SquadExport(
            model, tokenizer, dataclasses.replace(SquadSettings(**spec["squad"]),
                                                  max_seq_length=spec["max_seq_length"]))),
}


def _spec(options: ExportOptions) -> dict:
    """The serving spec the flags say, as a fine-tuning task records it (a classifier's reading
    of long documents from the flags, else from the run's long_documents.json)."""
    spec: dict = {"export_type": options.export_type, "max_seq_length": options.max_seq_length}
    if options.export_type == "squad":
        spec["squad"] = dataclasses.asdict(options.squad or SquadSettings())
    elif options.export_type == "ner":
        if not options.labels:
            raise ValueError("export_type=ner needs the tag set (labels)")
        spec["labels"] = list(options.labels)
    else:
        spec.update(labels=None if options.labels is None else list(options.labels),
                    pair=options.pair)
        long_doc = options.long_doc
        if long_doc is None:
            run = finetuned.resolve(options.peft_checkpoint or options.init_checkpoint)
            long_doc = run.record(RECORD_FILE, LongDocSettings)
        if long_doc is not None:
            spec["long_doc"] = dataclasses.asdict(long_doc)
    return spec


def _served(spec: dict, config: BertConfig, run: finetuned.Finetuned, base: str | None,
            tokenizer: FullTokenizer, options: ExportOptions, pool: dict | None = None,
            converted: dict | None = None) -> tf.Module:
    """The serving module of `spec`'s task with the fine-tuned weights of `run` (a
    parameter-efficient run on `base`, or on the base its record names), in
    options.serving_dtype. A method that folds (LoRA, BitFit) is served folded into a plain
    model: the speed of the base; adapters stay in the graph. With `pool` (and `converted`,
    their serving_dtype copies), the frozen weights are shared with the models before it
    (multitask)."""
    serving = TASK_SERVING[spec["export_type"]]
    task = serving.task(spec)
    model = task.build_model(build_encoder(config))
    record = artifact.restore(model, run, base)
    if pool is not None:
        multitask.share_frozen(model, pool)
    elif record is not None and methods.method_of(record.settings).fold is not None:
        model = merging.merged_model(model, task.build_model(build_encoder(config)),
                                     record.settings)
    precision.in_serving_dtype(model, options.serving_dtype, converted)
    return serving.module(model, tokenizer, spec, options)


def _finetuned(options: ExportOptions, tokenizer: FullTokenizer) -> tf.Module:
    """The export of a fine-tuning task: its model with the fine-tuned weights of
    options.init_checkpoint (or of options.peft_checkpoint on that base), in its serving
    module."""
    config = _model_config(options)
    run = finetuned.resolve(options.peft_checkpoint or options.init_checkpoint)
    spec = _spec(options)
    record = artifact.record_of(run)
    if record is not None and record.task.get("export_type") == spec["export_type"]:
        # What the flags do not say of the task comes from its record (the settings its model
        # is built from), so the export rebuilds the model the run trained.
        spec = {**record.task, **spec}
    return _served(spec, config, run,
                   options.init_checkpoint if options.peft_checkpoint else None, tokenizer,
                   options)


def _named_runs(entries: Sequence[str]
                ) -> dict[str, tuple[str, finetuned.Finetuned, artifact.PeftRecord]]:
    """{signature name: (run path, its checkpoint, its record)} of --peft_checkpoints entries
    ("PATH" or "NAME=PATH"; a name defaults to the run's task name, lower-cased, [a-z0-9_]
    only)."""
    runs: dict[str, tuple[str, finetuned.Finetuned, artifact.PeftRecord]] = {}
    for entry in entries:
        name, _, path = entry.rpartition("=")
        run, record = artifact.find_run(path)
        if record is None:
            raise ValueError(f"--peft_checkpoints: {path} is not a parameter-efficient run (no "
                             f"{artifact.PEFT_FILE})")
        if record.task.get("export_type") not in TASK_SERVING or \
                not isinstance(record.task.get("max_seq_length"), int):
            raise ValueError(f"--peft_checkpoints: {path}'s {artifact.PEFT_FILE} says no task "
                             f"an export can rebuild ({record.task}): export it alone, with "
                             "--export_type and the task's flags")
        name = re.sub(r"[^a-z0-9_]", "_", (name or record.task.get("task_name") or "").lower())
        if not name or name in runs:
            raise ValueError(f"--peft_checkpoints: {path} needs a signature name of its own "
                             f"(its task is {record.task.get('task_name')!r}): write NAME={path}")
        first = next(iter(runs.values()), None)
        if first is not None and record.base_fingerprint != first[2].base_fingerprint:
            raise ValueError(f"--peft_checkpoints: {path} and {first[0]} were trained on "
                             f"different bases ({record.base_checkpoint}, "
                             f"{first[2].base_checkpoint}): one SavedModel shares one base")
        runs[name] = (path, run, record)
    return runs


def _multitask(options: ExportOptions, tokenizer: FullTokenizer) -> tf.Module:
    """Several parameter-efficient runs of one base: each run's task rebuilt from its record,
    its model restored on the base (options.init_checkpoint, else the records'), the frozen
    weights shared, one signature per task (official/export/multitask.py)."""
    if not options.peft_checkpoints:
        raise ValueError("export_type=multitask needs --peft_checkpoints")
    pool: dict = {}
    converted: dict = {}
    exports = {}
    for name, (path, run, record) in _named_runs(options.peft_checkpoints).items():
        spec = record.task
        config = _config(dataclasses.replace(options, max_seq_length=spec["max_seq_length"]),
                         path)
        exports[name] = _served(spec, config, run, options.init_checkpoint, tokenizer, options,
                                pool, converted)
    return multitask.MultiTaskExport(exports)


# export_type -> (options, tokenizer) -> its loaded serving module: adding an export is an entry
# here and its name in official/export/options.py.
EXPORT_TYPES: dict[str, Callable[[ExportOptions, FullTokenizer], tf.Module]] = {
    **{kind: _finetuned for kind in TASK_SERVING},
    "multitask": _multitask,
    "encoder": _encoder,
    "sentence_encoder": _sentence_encoder,
    "preprocessor": _preprocessor,
}


def _export_type(options: ExportOptions) -> Callable[[ExportOptions, FullTokenizer], tf.Module]:
    try:
        return EXPORT_TYPES[options.export_type]
    except KeyError:
        raise ValueError(f"export_type must be one of {', '.join(EXPORT_TYPES)}, got "
                         f"{options.export_type!r}") from None


def serving_module(options: ExportOptions, tokenizer: FullTokenizer) -> tf.Module:
    """The loaded model of `options`, wrapped for serving (not saved)."""
    return _export_type(options)(options, tokenizer)


def export(options: ExportOptions) -> str:
    """Builds, loads and saves the export; returns `export_dir/<version>`."""
    build = _export_type(options)
    check_files(options)
    module = build(options, FullTokenizer(options.vocab_file, options.do_lower_case))
    return saving.save(module, options.export_dir, module.signatures())
