"""Converts BERT weights between formats through our model, which validates every variable.

    read(format, path)  ->  Bundle(config, weights, vocab_file)
    write(format, bundle, output_dir)

Formats: "tf1" (the original's name-based checkpoint), "tf2" (this project's, see tf2.py, and the
training checkpoints of run_pretraining, see training.py),
"hf" (Hugging Face directory), "keras_hub" (keras-hub preset). Writing loads the weights into a
model first (all encoder variables present with the right shapes, or an error listing them) and
writes only what the source had: a converter never invents a head.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import tempfile

import keras

from official import checkpoints
from official.checkpoints import hf, keras_hub, tf1, tf2, training
from official.checkpoints.errors import CheckpointError
from official.configs import BertConfig
from official.modeling.encoder import build_encoder
from official.modeling.models import BertPretrainer

FORMATS = ("tf1", "tf2", "hf", "keras_hub")
CONFIG_FILE, VOCAB_FILE, CHECKPOINT_NAME = "bert_config.json", "vocab.txt", "bert_model.ckpt"


@dataclasses.dataclass
class Bundle:
    """What a model directory holds: the config, original-named weights, and the vocab if any."""
    config: BertConfig
    weights: tf1.Weights
    vocab_file: str | None = None


def _beside(path: str, filename: str) -> str | None:
    """`filename` in the directory `path` or in the directory of checkpoint prefix `path`."""
    directory = path if os.path.isdir(path) else os.path.dirname(path)
    candidate = os.path.join(directory, filename)
    return candidate if os.path.isfile(candidate) else None


def read(input_format: str, path: str, bert_config_file: str | None = None,
         vocab_file: str | None = None) -> Bundle:
    """Reads weights of any format. For checkpoints (tf1, tf2) the config and vocab default to
    `bert_config.json` and `vocab.txt` beside them, as in the original releases."""
    if input_format in ("hf", "keras_hub"):
        module = hf if input_format == "hf" else keras_hub
        config, weights, found_vocab = module.read(path)
        return Bundle(config, weights, vocab_file or found_vocab)
    if input_format not in FORMATS:
        raise ValueError(f"unknown format {input_format!r}; known: {', '.join(FORMATS)}")
    prefix = checkpoints.resolve_checkpoint(path)  # a missing checkpoint is named first
    bert_config_file = bert_config_file or _beside(path, CONFIG_FILE)
    if not bert_config_file:
        raise CheckpointError(f"{path}: no {CONFIG_FILE} beside the checkpoint; "
                              "pass --bert_config_file")
    weights = checkpoints.read_weights(path)
    # A training checkpoint (run_pretraining's output_dir) is this project's too.
    found = tf2.is_tf2_checkpoint(prefix) or training.is_training_checkpoint(prefix)
    if found != (input_format == "tf2"):
        raise CheckpointError(f"{path}: a {'tf2' if found else 'tf1'} checkpoint, "
                              f"not {input_format}")
    return Bundle(BertConfig.from_json_file(bert_config_file), weights,
                  vocab_file or _beside(path, VOCAB_FILE))


def build_model(bundle: Bundle, source: str) -> keras.Model:
    """The encoder (with pretraining heads when the weights have any) holding `bundle.weights`."""
    encoder = build_encoder(bundle.config)
    has_heads = any(name.startswith("cls/") for name in bundle.weights)
    model = BertPretrainer(encoder) if has_heads else encoder
    tf1.assign(model, bundle.weights, source)
    return model


def write(output_format: str, bundle: Bundle, output_dir: str, source: str = "input",
          do_lower_case: bool = True) -> list[str]:
    """Validates `bundle` through a model and writes it to `output_dir` in `output_format`.

    The files are made in a temporary folder beside `output_dir` and moved in when complete (the
    checkpoint index last), so an interrupted run leaves no half-written model. Returns the paths.
    """
    if output_format not in FORMATS:
        raise ValueError(f"unknown format {output_format!r}; known: {', '.join(FORMATS)}")
    model = build_model(bundle, source)
    weights = {k: v for k, v in tf1.weights_of(model).items() if k in bundle.weights}
    os.makedirs(output_dir, exist_ok=True)
    staging = tempfile.mkdtemp(prefix=".convert-", dir=output_dir)
    try:
        if output_format in ("tf1", "tf2"):
            prefix = os.path.join(staging, CHECKPOINT_NAME)
            (tf1.write if output_format == "tf1" else tf2.write)(weights, prefix)
            bundle.config.to_json_file(os.path.join(staging, CONFIG_FILE))
        elif output_format == "hf":
            hf.write(staging, bundle.config, weights)
        else:
            keras_hub.write(staging, bundle.config, weights, bundle.vocab_file, do_lower_case)
        if bundle.vocab_file and output_format != "keras_hub":
            shutil.copyfile(bundle.vocab_file, os.path.join(staging, VOCAB_FILE))
        return _move_into(staging, output_dir)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _move_into(staging: str, output_dir: str) -> list[str]:
    # Readers look for a checkpoint's .index; it goes last so it never names missing data.
    names = sorted(os.listdir(staging), key=lambda n: (n.endswith(".index"), n))
    written = []
    for name in names:
        target = os.path.join(output_dir, name)
        if os.path.isdir(target):
            shutil.rmtree(target)
        os.replace(os.path.join(staging, name), target)
        written.append(target)
    return written


def convert(input_format: str, input_path: str, output_dir: str, output_format: str = "tf2",
            bert_config_file: str | None = None, vocab_file: str | None = None,
            do_lower_case: bool = True) -> list[str]:
    """Reads `input_path` in `input_format` and writes it to `output_dir` in `output_format`."""
    bundle = read(input_format, input_path, bert_config_file, vocab_file)
    return write(output_format, bundle, output_dir, source=input_path,
                 do_lower_case=do_lower_case)
