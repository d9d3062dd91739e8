"""Hugging Face BERT directories: `config.json`, `model.safetensors`, `vocab.txt` and
`tokenizer_config.json`.

Read with the `safetensors` numpy API (no torch). Hugging Face names differ from the original's by
spelling only, except that its linear weights are stored [out, in] (transposed here) and that a
`BertModel` has no `bert.` prefix while `BertForPreTraining` has one. `cls.seq_relationship.weight`
is [out, in] in both worlds, so it is not transposed.

Activation names are translated so the model computes what the weights were trained with:
Hugging Face's "gelu" is the exact erf GELU (our "gelu_exact"); its "gelu_new" is the tanh one,
the original's "gelu".

transformers' `BertTokenizer(Fast).from_pretrained` reads vocab.txt and tokenizer_config.json;
without the vocab it builds a tokenizer of a few words that reads every other as [UNK]. So a
folder written with a vocab carries both, and a conversion refuses to write one without
(official/checkpoints/converter.py's check_vocab).
"""

from __future__ import annotations

import json
import os
import re
import shutil
from typing import TYPE_CHECKING

import numpy as np
import safetensors.numpy
from absl import logging

from official.checkpoints.errors import CheckpointError
from official.configs import BertConfig, ConfigError

if TYPE_CHECKING:  # tf1 loads TensorFlow; `read_config` serves checks made before it loads
    from official.checkpoints import tf1

CONFIG_FILE, WEIGHTS_FILE, VOCAB_FILE = "config.json", "model.safetensors", "vocab.txt"
TOKENIZER_FILE = "tokenizer_config.json"

# Each of our activation names (official/configs.py's ACTIVATIONS) -> Hugging Face's names for the
# same function: the first is written, all are read. One table for both directions.
_HF_ACTIVATIONS = {
    "gelu": ("gelu_new", "gelu_pytorch_tanh", "gelu_fast"),  # the tanh approximation
    "gelu_exact": ("gelu",),  # erf
    "relu": ("relu",),
    "tanh": ("tanh",),
    "swish": ("silu", "swish"),
    "linear": ("linear",),
}
_ACT_FROM_HF = {hf_name: ours for ours, hf_names in _HF_ACTIVATIONS.items()
                for hf_name in hf_names}
_BERT_PARTS = ("embeddings.", "encoder.", "pooler.", "cls.predictions.", "cls.seq_relationship.")
# Buffers and tied copies that are not weights of their own.
_NOT_WEIGHTS = ("embeddings.position_ids", "cls.predictions.decoder.weight",
                "cls.predictions.decoder.bias")
_SPECIAL = {"cls/predictions/output_bias": "cls.predictions.bias",
            "cls/seq_relationship/output_weights": "cls.seq_relationship.weight",
            "cls/seq_relationship/output_bias": "cls.seq_relationship.bias"}


def to_hf_name(name: str) -> tuple[str, bool]:
    """Original name -> (Hugging Face name without `bert.` prefix, value is transposed)."""
    if name in _SPECIAL:
        return _SPECIAL[name], False
    path, leaf = name.removeprefix("bert/").rsplit("/", 1)
    path = re.sub(r"layer_(\d+)", r"layer.\1", path).replace("/", ".")
    if leaf.endswith("_embeddings"):
        return f"{path}.{leaf}.weight", False
    hf_leaf = {"kernel": "weight", "gamma": "weight", "beta": "bias", "bias": "bias"}[leaf]
    return f"{path}.{hf_leaf}", leaf == "kernel"


def from_hf_name(hf_name: str) -> tuple[str, bool]:
    """Hugging Face name (without `bert.` prefix) -> (original name, value is transposed)."""
    for name, theirs in _SPECIAL.items():
        if hf_name == theirs:
            return name, False
    path, leaf = hf_name.rsplit(".", 1)
    path = re.sub(r"layer\.(\d+)", r"layer_\1", path).replace(".", "/")
    if not path.startswith("cls/"):
        path = "bert/" + path
    if path.endswith("_embeddings"):
        return path, False
    if path.endswith("LayerNorm"):
        return f"{path}/{'gamma' if leaf in ('weight', 'gamma') else 'beta'}", False
    return f"{path}/{'kernel' if leaf == 'weight' else leaf}", leaf == "weight"


def config_from_hf(values: dict, source: str) -> BertConfig:
    """A `BertConfig` from a Hugging Face `config.json` dict (activation name translated)."""
    if values.get("model_type", "bert") != "bert":
        raise ConfigError(f"{source}: model_type is {values['model_type']!r}, not 'bert'")
    if values.get("position_embedding_type", "absolute") != "absolute":
        raise ConfigError(f"{source}: only absolute position embeddings are BERT's")
    eps = values.get("layer_norm_eps", 1e-12)
    if eps != 1e-12:
        raise ConfigError(f"{source}: layer_norm_eps {eps} is not BERT's 1e-12")
    act = values.get("hidden_act", "gelu")
    if act not in _ACT_FROM_HF:
        raise ConfigError(f"{source}: hidden_act {act!r} has no equivalent here")
    fields = {k: values[k] for k in BertConfig.__dataclass_fields__ if k in values}
    return BertConfig.from_dict(dict(fields, hidden_act=_ACT_FROM_HF[act]), source)


def config_to_hf(config: BertConfig, architecture: str) -> dict:
    """A Hugging Face `config.json` dict for `config`."""
    if config.extensions():
        raise ConfigError(f"Hugging Face's BERT format holds BERT alone, not "
                          f"{' and '.join(config.extensions())}: write tf1 or tf2")
    return dict(config.to_dict(), hidden_act=_HF_ACTIVATIONS[config.hidden_act][0],
                model_type="bert", architectures=[architecture], layer_norm_eps=1e-12,
                pad_token_id=0, position_embedding_type="absolute")


def is_folder(path: str) -> bool:
    """True for a folder with a Hugging Face BERT directory's config and weights files."""
    return all(os.path.isfile(os.path.join(path, name)) for name in (CONFIG_FILE, WEIGHTS_FILE))


def _existing(directory: str, name: str) -> str:
    path = os.path.join(directory, name)
    if not os.path.isfile(path):
        raise CheckpointError(f"{path}: no such file (a Hugging Face BERT directory has "
                              f"{CONFIG_FILE} and {WEIGHTS_FILE})")
    return path


def read_config(directory: str) -> BertConfig:
    """A Hugging Face BERT directory's config.json as a `BertConfig` (no weights read)."""
    config_path = _existing(directory, CONFIG_FILE)
    try:
        with open(config_path, encoding="utf-8") as f:
            values = json.load(f)
    except json.JSONDecodeError as e:
        raise ConfigError(f"{config_path}: line {e.lineno}: invalid JSON ({e.msg})") from None
    return config_from_hf(values, config_path)


def read(directory: str) -> tuple[BertConfig, tf1.Weights, str | None]:
    """Reads a Hugging Face BERT directory: (config, original-named weights, vocab path or None).

    Weights of other heads (`classifier.*`, `qa_outputs.*`) are skipped with a warning.
    """
    config = read_config(directory)
    weights_path = _existing(directory, WEIGHTS_FILE)
    try:
        tensors = safetensors.numpy.load_file(weights_path)
    except Exception as e:  # safetensors raises its own untyped errors on a corrupt header.
        raise CheckpointError(f"{weights_path}: unreadable safetensors file ({e})") from None

    weights, skipped = {}, []
    for hf_name, value in tensors.items():
        bare = hf_name.removeprefix("bert.")
        if bare in _NOT_WEIGHTS:
            continue
        if not bare.startswith(_BERT_PARTS):
            skipped.append(hf_name)
            continue
        name, transposed = from_hf_name(bare)
        weights[name] = np.asarray(value.T if transposed else value, dtype=np.float32)
    if skipped:
        logging.warning("%s: skipping weights that are not BERT's: %s", weights_path,
                        ", ".join(sorted(skipped)))
    vocab = os.path.join(directory, VOCAB_FILE)
    return config, weights, vocab if os.path.isfile(vocab) else None


def write(directory: str, config: BertConfig, weights: tf1.Weights) -> None:
    """Writes `config.json` and `model.safetensors` as `BertForPreTraining` (when the weights
    include both pretraining heads, names prefixed `bert.`) or `BertModel` (encoder only)."""
    has_heads = any(name.startswith("cls/") for name in weights)
    prefix = "bert." if has_heads else ""
    tensors = {}
    for name, value in weights.items():
        hf_name, transposed = to_hf_name(name)
        if not hf_name.startswith("cls."):
            hf_name = prefix + hf_name
        tensors[hf_name] = np.ascontiguousarray(value.T if transposed else value)
    architecture = "BertForPreTraining" if has_heads else "BertModel"
    safetensors.numpy.save_file(tensors, os.path.join(directory, WEIGHTS_FILE),
                                metadata={"format": "pt"})
    with open(os.path.join(directory, CONFIG_FILE), "w", encoding="utf-8") as f:
        json.dump(config_to_hf(config, architecture), f, indent=2, sort_keys=True)


def tokenizer_config(config: BertConfig, do_lower_case: bool) -> dict:
    """transformers' `tokenizer_config.json` for the vocab.txt beside it, tokenizing as the
    original's FullTokenizer does: lower-cased or not, accents stripped when lower-cased
    (`strip_accents` None follows `do_lower_case`, as the original's), CJK characters split,
    the original's special tokens; rows of at most the model's positions."""
    return {"tokenizer_class": "BertTokenizer", "do_lower_case": do_lower_case,
            "strip_accents": None, "tokenize_chinese_chars": True, "unk_token": "[UNK]",
            "sep_token": "[SEP]", "pad_token": "[PAD]", "cls_token": "[CLS]",
            "mask_token": "[MASK]", "model_max_length": config.max_position_embeddings}


def write_tokenizer(directory: str, config: BertConfig, vocab_file: str,
                    do_lower_case: bool) -> None:
    """Writes `vocab.txt` (a copy of `vocab_file`) and `tokenizer_config.json`."""
    shutil.copyfile(vocab_file, os.path.join(directory, VOCAB_FILE))
    with open(os.path.join(directory, TOKENIZER_FILE), "w", encoding="utf-8") as f:
        json.dump(tokenizer_config(config, do_lower_case), f, indent=2, sort_keys=True)
