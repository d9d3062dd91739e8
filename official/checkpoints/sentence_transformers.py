"""How a sentence-transformers model folder pools: its `SentenceSettings`
(official/sentence_settings.py), read from its files or from the record a conversion leaves, so its
vectors are computed as sentence-transformers computes them.

A sentence-transformers folder (all-MiniLM-L6-v2's) is a Hugging Face BERT folder plus:

    modules.json               the pipeline: Transformer, Pooling (its folder), Normalize (if any)
    1_Pooling/config.json      pooling_mode_mean_tokens / _cls_token / _max_tokens: true for one
    sentence_bert_config.json  max_seq_length (256 for all-MiniLM-L6-v2)

`convert_checkpoint` of such a folder writes `sentence_encoder.json` (RECORD_FILE) beside the
converted weights; `export_saved_model --export_type=sentence_encoder` reads either, and its
flags override both.
"""

from __future__ import annotations

import os

from official import records
from official.checkpoints.errors import CheckpointError
from official.sentence_settings import SentenceSettings

RECORD_FILE = "sentence_encoder.json"
MODULES_FILE = "modules.json"
SETTINGS_FILE = "sentence_bert_config.json"
# sentence-transformers' Pooling flags this project computes (official/modeling/sentence_pooling).
_POOLING_MODES = {"pooling_mode_mean_tokens": "mean", "pooling_mode_cls_token": "cls",
                  "pooling_mode_max_tokens": "max"}


def _json(path: str) -> object:
    try:
        return records.read_json(path)
    except ValueError as e:
        raise CheckpointError(str(e)) from None


def read_folder(directory: str) -> SentenceSettings | None:
    """A sentence-transformers folder's settings; None when `directory` is not one (no
    modules.json).

    Raises:
      CheckpointError: a pooling this project does not compute (mean_sqrt_len, weighted, several
        modes at once), or a file that is not the JSON it should be, naming the file.
    """
    modules_path = os.path.join(directory, MODULES_FILE)
    if not os.path.isfile(modules_path):
        return None
    modules = _json(modules_path)
    if not isinstance(modules, list):
        raise CheckpointError(f"{modules_path}: expected a JSON list of modules")
    types = {str(m.get("type", "")).rsplit(".", 1)[-1]: m for m in modules if isinstance(m, dict)}
    pooling = None
    if "Pooling" in types:
        config_path = os.path.join(directory, types["Pooling"].get("path", ""), "config.json")
        values = _json(config_path)
        on = sorted(key for key, value in values.items()
                    if key.startswith("pooling_mode") and value is True)
        if len(on) != 1 or on[0] not in _POOLING_MODES:
            raise CheckpointError(f"{config_path}: pooling {', '.join(on) or 'none'}; this "
                                  f"project computes one of {', '.join(_POOLING_MODES)}")
        pooling = _POOLING_MODES[on[0]]
    max_seq_length = None
    settings_path = os.path.join(directory, SETTINGS_FILE)
    if os.path.isfile(settings_path):
        max_seq_length = _json(settings_path).get("max_seq_length")
    return SentenceSettings(pooling, "Normalize" in types, max_seq_length)


def read_record(directory: str) -> SentenceSettings | None:
    """The `sentence_encoder.json` a conversion or a run wrote in `directory`; None if none.

    Raises:
      CheckpointError: the file is not such a record (naming the file and the field).
    """
    try:
        return records.read(os.path.join(directory, RECORD_FILE), SentenceSettings)
    except ValueError as e:
        raise CheckpointError(str(e)) from None


def write_record(directory: str, settings: SentenceSettings) -> str:
    path = os.path.join(directory, RECORD_FILE)
    records.write(path, settings)
    return path


def settings_of(path: str) -> SentenceSettings | None:
    """What the weights at `path` (a folder, or a checkpoint prefix in one) say: the record a
    conversion left, else a sentence-transformers folder's own files."""
    directory = path if os.path.isdir(path) else os.path.dirname(path)
    return read_record(directory) or read_folder(directory)
