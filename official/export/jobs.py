"""export_saved_model's library half: options -> the model, its serving module, a versioned export.

    ExportOptions   what the entry point's flags say
    export(options) builds and loads the model of `options.export_type`, wraps it in its serving
                    module and saves it as `export_dir/<version>/`; returns that path

    export_type   model (weights from init_checkpoint)          serving module  (EXPORT_TYPES)
    preprocessor  none                                          preprocessing.BertPreprocessor
    encoder       BertEncoder (+ masked-LM head if saved)       encoder.HubEncoder
    classifier    ClassificationTask's, fine-tuned              classifier.ClassifierExport
    ner           NerTask's, fine-tuned                         ner.NerExport
    squad         SquadTask's, fine-tuned                       squad.SquadExport

A fine-tuning task's export is its own: the model its `build_model` makes, loaded from the
fine-tuning output (best/ when kept), in the module its `serving_module` makes.

The task's labels come with the options (the entry point reads them from data_prep: the
library does not import it).
"""

from __future__ import annotations

import dataclasses
import os
from typing import Callable, Sequence

import tensorflow as tf

from official.checkpoints.training import CONFIG_FILE
from official.configs import BertConfig
from official.export import restoring, saving
from official.export.encoder import HubEncoder
from official.export.preprocessing import BertPreprocessor
from official.modeling.encoder import build_encoder
from official.output_paths import check_output_dir
from official.tasks.base import FinetuningTask
from official.tasks.classification import ClassificationTask
from official.tasks.ner import NerTask
from official.tasks.squad import SquadTask
from official.tasks.squad_settings import SquadSettings
from official.text import vocab
from official.text.tokenizer import FullTokenizer


@dataclasses.dataclass(frozen=True)
class ExportOptions:
    """One export.

    Attributes:
      export_type: a key of EXPORT_TYPES.
      export_dir: where versions go (`export_dir/<version>/`).
      vocab_file, do_lower_case: the model's tokenizer.
      max_seq_length: the fine-tuning's (the preprocessor's default seq_length).
      bert_config_file: the architecture; None to read the bert_config.json beside a training
        output's checkpoint (`init_checkpoint`). Unused by the preprocessor.
      init_checkpoint: the weights: any checkpoint for the encoder; a fine-tuning output_dir
        (its best/ when kept) or checkpoint for classifier, ner and squad.
      labels: classifier: the task's labels, None for regression; ner: the tag set.
      pair: classifier: the task takes text pairs (text_a and text_b).
      squad: run_squad's feature and decoding settings (max_seq_length is taken from above).
      jit_compile: compile the model part of the classifier's graph with XLA.
    """
    export_type: str
    export_dir: str
    vocab_file: str
    do_lower_case: bool = True
    max_seq_length: int = 128
    bert_config_file: str | None = None
    init_checkpoint: str | None = None
    labels: Sequence[str] | None = None
    pair: bool = False
    squad: SquadSettings | None = None
    jit_compile: bool = False


def _config(options: ExportOptions) -> BertConfig:
    path = options.bert_config_file
    if path is None and options.init_checkpoint:
        directory = options.init_checkpoint if os.path.isdir(options.init_checkpoint) \
            else os.path.dirname(options.init_checkpoint)
        path = os.path.join(directory, CONFIG_FILE)
        if not os.path.exists(path):
            raise ValueError(f"no --bert_config_file given and no {CONFIG_FILE} beside "
                             f"{options.init_checkpoint}")
    if path is None:
        raise ValueError(f"export_type={options.export_type} needs --bert_config_file")
    config = BertConfig.from_json_file(path)
    if options.max_seq_length > config.max_position_embeddings:
        raise ValueError(f"max_seq_length={options.max_seq_length} is more than the "
                         f"max_position_embeddings={config.max_position_embeddings} of {path}")
    vocab.check_fits(options.vocab_file, config.vocab_size, path)
    return config


def _model_config(options: ExportOptions) -> BertConfig:
    """The config of an export with a model; its weights (`init_checkpoint`) are named first."""
    if not options.init_checkpoint:
        raise ValueError(f"export_type={options.export_type} needs --init_checkpoint")
    return _config(options)


def _preprocessor(options: ExportOptions, tokenizer: FullTokenizer) -> tf.Module:
    return BertPreprocessor(tokenizer, options.max_seq_length)


def _encoder(options: ExportOptions, tokenizer: FullTokenizer) -> tf.Module:
    encoder, pretrainer = restoring.pretrained_encoder(_model_config(options),
                                                       options.init_checkpoint)
    return HubEncoder(encoder, tokenizer, pretrainer)


def _ner_task(options: ExportOptions) -> NerTask:
    if not options.labels:
        raise ValueError("export_type=ner needs the tag set (labels)")
    return NerTask(options.labels)


def _finetuned(task_of: Callable[[ExportOptions], FinetuningTask]
               ) -> Callable[[ExportOptions, FullTokenizer], tf.Module]:
    """The export of a fine-tuning task: its model (`task.build_model`) with the fine-tuned
    weights of options.init_checkpoint, in its serving module (`task.serving_module`)."""
    def build(options: ExportOptions, tokenizer: FullTokenizer) -> tf.Module:
        config = _model_config(options)
        task = task_of(options)
        model = task.build_model(build_encoder(config))
        restoring.restore_finetuned(model, options.init_checkpoint)
        return task.serving_module(model, tokenizer, options)
    return build


# export_type -> (options, tokenizer) -> its loaded serving module: adding an export is an entry.
EXPORT_TYPES: dict[str, Callable[[ExportOptions, FullTokenizer], tf.Module]] = {
    "classifier": _finetuned(lambda options: ClassificationTask(None, options.labels)),
    "squad": _finetuned(lambda options: SquadTask(options.squad or SquadSettings())),
    "ner": _finetuned(_ner_task),
    "encoder": _encoder,
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
    check_output_dir(options.export_dir, "export_dir")
    module = build(options, FullTokenizer(options.vocab_file, options.do_lower_case))
    return saving.save(module, options.export_dir, module.signatures())
