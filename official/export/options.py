"""What export_saved_model's flags say (`ExportOptions`), checked with no TensorFlow, so a bad flag
or a missing file is refused before it loads (official/export/jobs.py builds the export).

    EXPORT_TYPES        the export types (official/export/jobs.py builds each)
    SERVING_DTYPES      the precisions an export with a model computes in
                        (official/export/precision.py)
    FINETUNED_TYPES     those of a fine-tuning task, restored from its output_dir: the task
                        kinds of official/export/kinds.py
    ExportOptions       one export; its combinations checked when made
    check_files(options)
                        export_dir writable, the vocab, the weights there, the config (the flag's
                        or the bert_config.json beside the weights) against max_seq_length and
                        the vocab; a sentence encoder's max_seq_length against the config
                        (a Hugging Face folder's own too), blamed on what says it: the flag, the
                        file beside the weights (sentence_encoder.json, sentence_bert_config.json)
                        or the default
"""

from __future__ import annotations

import dataclasses
import os
from typing import Sequence

from official import checkpoints
from official.checkpoints import sentence_transformers
from official.configs import BertConfig
from official.export.kinds import KINDS
from official.output_paths import check_output_dir
from official.sentence_settings import DEFAULT_SETTINGS, SentenceSettings
from official.tasks.long_doc_settings import LongDocSettings
from official.tasks.squad_settings import SquadSettings
from official.text import vocab
from official.training.options import check_checkpoint_path

FINETUNED_TYPES = tuple(KINDS)
EXPORT_TYPES = (*FINETUNED_TYPES, "multitask", "encoder", "sentence_encoder", "preprocessor")
SERVING_DTYPES = ("float32", "bfloat16")
# Asked for, measured, not built: TensorFlow's CPU kernels multiply int8 matrices slower than
# float32 ones (bench/serving_precision.py --int8_probe).
_NOT_BUILT = {"int8": "TensorFlow's CPU int8 matrix products are slower than float32's "
                      "(bench/serving_precision.py --int8_probe): use bfloat16"}


@dataclasses.dataclass(frozen=True)
class ExportOptions:
    """One export.

    Attributes:
      export_type: one of EXPORT_TYPES.
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
      peft_checkpoint: classifier, ner, squad: a parameter-efficient run to export, whose base
        is init_checkpoint (init_checkpoint may also be the run itself: it names its base).
      peft_checkpoints: multitask: parameter-efficient runs of one base ("PATH" or
        "NAME=PATH"; the signature name defaults to the run's task name).
      long_doc: classifier: how the run read long documents; None to read the run's
        long_documents.json (none: truncate, the original's).
      window_batch_size: classifier of a windows run: the windows the encoder runs at a time.
      sentence: sentence_encoder: pooling, normalize and max_seq_length as the flags say (None
        fields: from the weights' record or sentence-transformers folder, else mean, not
        normalized, 128).
      serving_dtype: what the model computes in, one of SERVING_DTYPES (inputs and outputs
        are the same either way); the preprocessor has no model.
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
    peft_checkpoint: str | None = None
    peft_checkpoints: Sequence[str] = ()
    long_doc: LongDocSettings | None = None
    window_batch_size: int = 32
    sentence: SentenceSettings = SentenceSettings()
    serving_dtype: str = "float32"

    def __post_init__(self):
        if self.export_type not in EXPORT_TYPES:
            raise ValueError(f"export_type must be one of {', '.join(EXPORT_TYPES)}, got "
                             f"{self.export_type!r}")
        if self.peft_checkpoints and self.export_type != "multitask":
            raise ValueError(f"--peft_checkpoints is for export_type=multitask, not "
                             f"{self.export_type} (one run: --peft_checkpoint)")
        if self.peft_checkpoint and self.export_type not in FINETUNED_TYPES:
            raise ValueError(f"--peft_checkpoint is for export_type "
                             f"{', '.join(FINETUNED_TYPES)}, not {self.export_type}")
        if self.serving_dtype in _NOT_BUILT:
            raise ValueError(f"--serving_dtype={self.serving_dtype} is not built: "
                             f"{_NOT_BUILT[self.serving_dtype]}")
        if self.serving_dtype not in SERVING_DTYPES:
            raise ValueError(f"--serving_dtype must be one of {', '.join(SERVING_DTYPES)}, got "
                             f"{self.serving_dtype!r}")
        if self.serving_dtype != "float32" and self.export_type == "preprocessor":
            raise ValueError(f"--serving_dtype={self.serving_dtype}: export_type=preprocessor "
                             "has no model to compute in it")


def check_files(options: ExportOptions) -> None:
    """What the options' files can be checked for before TensorFlow loads.

    Raises:
      ValueError: an export_dir that cannot be written, a vocab that is not one, weights that
        are not there, a config that does not fit max_seq_length or the vocab, a
        sentence_encoder.json (or sentence-transformers folder) that says no pooling of ours
        or a max_seq_length the config does not fit.
    """
    check_output_dir(options.export_dir, "export_dir")
    vocab.load_vocab(options.vocab_file)
    sentence = None
    if options.export_type == "sentence_encoder" and options.init_checkpoint:
        # What the weights' record or folder says, checked field by field as it is read.
        sentence = options.sentence.over(sentence_transformers.settings_of(options.init_checkpoint))
    for path in (options.init_checkpoint, options.peft_checkpoint,
                 *(entry.rpartition("=")[2] for entry in options.peft_checkpoints)):
        check_checkpoint_path(path)
    weights = options.peft_checkpoint or options.init_checkpoint
    path = options.bert_config_file or (
        checkpoints.beside(weights, checkpoints.CONFIG_FILE) if weights else None)
    if path is not None and options.export_type not in ("multitask", "preprocessor"):
        config = BertConfig.from_json_file(path)
        if sentence is not None:  # its length may come from the weights
            _check_sentence_length(options, sentence, config, path)
        elif options.export_type != "sentence_encoder":
            config.check_seq_length(options.max_seq_length, path, flag="max_seq_length")
        vocab.check_fits(options.vocab_file, config.vocab_size, path)
    elif sentence is not None:
        from official.checkpoints import hf  # safetensors: loaded only for a sentence encoder
        if hf.is_folder(options.init_checkpoint):  # a Hugging Face folder has its own config
            _check_sentence_length(options, sentence, hf.read_config(options.init_checkpoint),
                                   os.path.join(options.init_checkpoint, hf.CONFIG_FILE))


def _check_sentence_length(options: ExportOptions, sentence: SentenceSettings,
                           config: BertConfig, config_file: str) -> None:
    """Raises ConfigError when the sentence encoder's max_seq_length (`sentence`'s, else the
    default) does not fit `config`, naming what said it: the flag, the file beside the weights
    and its key (sentence_encoder.json, sentence_bert_config.json), or the default."""
    if options.sentence.max_seq_length is not None:
        said = "--max_seq_length"
    elif sentence.max_seq_length is not None:
        said = f"{_length_file(options.init_checkpoint)}: max_seq_length"
    else:
        said = "the default --max_seq_length"
    config.check_seq_length(sentence.over(DEFAULT_SETTINGS).max_seq_length, config_file,
                            flag=said)


def _length_file(weights: str) -> str:
    """The file beside `weights` whose max_seq_length `sentence_transformers.settings_of` read:
    the record a conversion or run left, which it reads first, else the sentence-transformers
    folder's own settings."""
    folder = weights if os.path.isdir(weights) else os.path.dirname(weights)
    name = (sentence_transformers.RECORD_FILE if sentence_transformers.read_record(folder)
            else sentence_transformers.SETTINGS_FILE)
    return os.path.join(folder, name)
