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
    a task kind   its task's model, fine-tuned                  its row's (official/export/
                  (classifier, ner, squad)                      kinds.py)
    multitask     several parameter-efficient runs of one base  multitask.MultiTaskExport
                  (each task's own model, the base's weights shared)

A parameter-efficient run (official/peft) exports as any other run: `init_checkpoint` is the
run (its record names its base), or the base with the run as `peft_checkpoint`.

A fine-tuning task's export is built from its serving spec (the task's `serving_spec()`, which a
PEFT run records; else the one the options say) by its kind's row (official/export/kinds.py):
the model the task's `build_model` makes, loaded from the fine-tuning output (best/ when kept),
in its serving module. The tasks themselves know nothing of serving, and nothing here names a
task.

The task's labels come with the options (the entry point reads them from data_prep: the
library does not import it).
"""

from __future__ import annotations

import dataclasses
import re
from typing import Callable, Sequence

import tensorflow as tf

from official import checkpoints
from official.checkpoints import finetuned, sentence_transformers
from official.configs import BertConfig
from official.export import multitask, precision, restoring, saving
from official.export.encoder import HubEncoder
from official.export.kinds import KINDS
from official.export.options import ExportOptions, check_files
from official.export.preprocessing import BertPreprocessor
from official.export.sentence_encoder import SentenceEncoderExport
from official.modeling.encoder import build_encoder
from official.modeling.models import BertSentenceEncoder
from official.peft import artifact, merging, methods
from official.sentence_settings import DEFAULT_SETTINGS
from official.text import vocab
from official.text.tokenizer import FullTokenizer


def _config(options: ExportOptions, weights: str | None = None) -> BertConfig:
    """The config of the weights (default the run exported: peft_checkpoint or init_checkpoint)
    by the one rule (`checkpoints.config_of`: options.bert_config_file, else a folder's own,
    else the bert_config.json beside them), checked against max_seq_length and the vocab."""
    weights = weights or options.peft_checkpoint or options.init_checkpoint
    if options.bert_config_file is None and not weights:
        raise ValueError(f"export_type={options.export_type} needs --bert_config_file")
    path, config = checkpoints.config_of(weights, options.bert_config_file)
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
    """Any checkpoint's encoder pooled into sentence vectors (a Hugging Face folder's own
    config.json is its config, as any folder format's)."""
    if not options.init_checkpoint:
        raise ValueError("export_type=sentence_encoder needs --init_checkpoint")
    settings = options.sentence.over(sentence_transformers.settings_of(options.init_checkpoint))
    settings = settings.over(DEFAULT_SETTINGS)
    config = _config(dataclasses.replace(options, max_seq_length=settings.max_seq_length))
    encoder, _ = restoring.pretrained_encoder(config, options.init_checkpoint)
    model = BertSentenceEncoder(encoder, settings.pooling, settings.normalize)
    precision.in_serving_dtype(model, options.serving_dtype)
    return SentenceEncoderExport(model, tokenizer, settings.max_seq_length, options.jit_compile)


# ---- the exports of fine-tuning tasks, from their serving specs ----------------------------------

def _spec(options: ExportOptions) -> dict:
    """The serving spec the options say, as a fine-tuning task records it (its kind's part:
    official/export/kinds.py)."""
    return {"export_type": options.export_type, "max_seq_length": options.max_seq_length,
            **KINDS[options.export_type].spec(options)}


def _served(spec: dict, config: BertConfig, run: finetuned.Finetuned, base: str | None,
            tokenizer: FullTokenizer, options: ExportOptions, pool: dict | None = None,
            converted: dict | None = None) -> tf.Module:
    """The serving module of `spec`'s task with the fine-tuned weights of `run` (a
    parameter-efficient run on `base`, or on the base its record names), in
    options.serving_dtype. A method that folds (LoRA, BitFit) is served folded into a plain
    model: the speed of the base; adapters stay in the graph. With `pool` (and `converted`,
    their serving_dtype copies), the frozen weights are shared with the models before it
    (multitask)."""
    kind = KINDS[spec["export_type"]]
    task = kind.task(spec)
    model = task.build_model(build_encoder(config))
    record = artifact.restore(model, run, base)
    if pool is not None:
        multitask.share_frozen(model, pool)
    elif record is not None and methods.method_of(record.settings).fold is not None:
        model = merging.merged_model(model, task.build_model(build_encoder(config)),
                                     record.settings)
    precision.in_serving_dtype(model, options.serving_dtype, converted)
    return kind.serving(model, tokenizer, spec, options)


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
        if record.task.get("export_type") not in KINDS or \
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
    **{kind: _finetuned for kind in KINDS},
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
