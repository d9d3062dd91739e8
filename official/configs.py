"""`BertConfig`: the original `bert_config.json`, read, checked and written back.

The field names and defaults are those of google-research/bert's `modeling.BertConfig`, so a
`bert_config.json` shipped with any released checkpoint loads unchanged, and one written here loads
in the original code.

Two extensions, each absent from the JSON unless used (a BERT config is written as before):
ALBERT's own fields (`embedding_size`, `num_hidden_groups`, `inner_group_num`, under
google-research/albert's names so its `albert_config.json` reads as it is), and
`causal_attention`, the paper's left-to-right ablation ("LTR & No NSP"), kept in the config so
that fine-tuning and exports of such a model keep its mask.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
from typing import Any

from absl import logging

from official.atomic_files import open_atomically

# Activation names a config may carry: the one list of them. "gelu" is the *original's* GELU, the
# tanh approximation (google-research/bert modeling.gelu); "gelu_exact" is the erf form that
# Hugging Face calls "gelu". Each name has its function in official/modeling/activations.py and
# its Hugging Face names in official/checkpoints/hf.py (tests check both cover this list); it is
# kept here, apart from the functions, so that reading a config does not import Keras.
ACTIVATIONS = ("gelu", "gelu_exact", "relu", "tanh", "swish", "linear")


class ConfigError(ValueError):
    """A bert_config.json (or a dict meant to be one) is unusable; the message names what and
    where."""


@dataclasses.dataclass(frozen=True)
class BertConfig:
    """Hyperparameters of a BERT encoder (the original `bert_config.json`).

    Attributes:
      vocab_size: Number of WordPiece ids (rows of the word-embedding table).
      hidden_size: Width H of every layer's output.
      num_hidden_layers: Number of Transformer blocks L.
      num_attention_heads: Heads per self-attention; must divide hidden_size.
      intermediate_size: Width of the feed-forward inner layer (4H in every released model).
      hidden_act: Feed-forward activation, one of `ACTIVATIONS` ("gelu" = tanh approximation).
      hidden_dropout_prob: Dropout after embeddings, attention output and feed-forward output.
      attention_probs_dropout_prob: Dropout on the attention probabilities.
      max_position_embeddings: Rows of the position table: the longest sequence the model reads.
      type_vocab_size: Number of segment ids (2 in every released model: sentence A and B).
      initializer_range: Stddev of the truncated-normal initialiser of all weight matrices.
      embedding_size: ALBERT's factorised embeddings: the tables are E wide and a [E, hidden]
        projection follows them (only when E != hidden, as ALBERT). None: E = hidden_size.
      num_hidden_groups: ALBERT's cross-layer sharing: the layers are split into this many
        consecutive groups, and the layers of a group share one set of weights (1: every layer
        the same). None: no sharing, BERT's one group per layer.
      inner_group_num: ALBERT's blocks per group: a layer applies its group's blocks in turn.
      causal_attention: no position attends to a later one (a left-to-right model), and the
        pooled output reads the last real token, the only one that saw the whole text.
    """

    vocab_size: int
    hidden_size: int = 768
    num_hidden_layers: int = 12
    num_attention_heads: int = 12
    intermediate_size: int = 3072
    hidden_act: str = "gelu"
    hidden_dropout_prob: float = 0.1
    attention_probs_dropout_prob: float = 0.1
    max_position_embeddings: int = 512
    type_vocab_size: int = 16
    initializer_range: float = 0.02
    embedding_size: int | None = None
    num_hidden_groups: int | None = None
    inner_group_num: int = 1
    causal_attention: bool = False

    def __post_init__(self):
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            expected = _FIELD_TYPES[field.name]
            if value is None and field.name in _OPTIONAL_FIELDS:
                continue
            # bool is an int subclass in Python; a config saying `"hidden_size": true` is wrong.
            if (isinstance(value, bool) != (expected is bool)) or not isinstance(value, expected):
                raise ConfigError(
                    f"{field.name} must be {_type_name(expected)}, got {value!r}")
            if expected is int and value <= 0:
                raise ConfigError(f"{field.name} must be positive, got {value}")
        if self.hidden_groups > self.num_hidden_layers:
            raise ConfigError(f"num_hidden_groups ({self.num_hidden_groups}) is more than "
                              f"num_hidden_layers ({self.num_hidden_layers})")
        if self.hidden_size % self.num_attention_heads:
            raise ConfigError(
                f"num_attention_heads ({self.num_attention_heads}) does not divide "
                f"hidden_size ({self.hidden_size})")
        if self.hidden_act not in ACTIVATIONS:
            raise ConfigError(
                f"hidden_act {self.hidden_act!r} is not one of {', '.join(ACTIVATIONS)}")
        for name in ("hidden_dropout_prob", "attention_probs_dropout_prob"):
            if not 0.0 <= getattr(self, name) < 1.0:
                raise ConfigError(f"{name} must be in [0, 1), got {getattr(self, name)}")

    def differences(self, other: "BertConfig") -> list[str]:
        """"name (mine vs other's)" for every field where `other` differs, in field order."""
        return [f"{f.name} ({getattr(self, f.name)!r} vs {getattr(other, f.name)!r})"
                for f in dataclasses.fields(self)
                if getattr(self, f.name) != getattr(other, f.name)]

    def check_seq_length(self, max_seq_length: int, source: str,
                         flag: str = "--max_seq_length") -> None:
        """Raises ConfigError unless a row of `max_seq_length` tokens fits this model: at least 3
        ([CLS], a token, [SEP]) and at most max_position_embeddings; `source` (the config's file)
        and `flag` are named."""
        if max_seq_length > self.max_position_embeddings:
            raise ConfigError(f"{flag}={max_seq_length} is more than the max_position_embeddings="
                              f"{self.max_position_embeddings} of {source}")
        if max_seq_length < 3:
            raise ConfigError(f"{flag}={max_seq_length}: a row needs at least 3 positions "
                              "([CLS], a token, [SEP])")

    @property
    def head_size(self) -> int:
        """Width of one attention head, hidden_size / num_attention_heads."""
        return self.hidden_size // self.num_attention_heads

    @property
    def embedding_width(self) -> int:
        """Width E of the embedding tables: embedding_size, or hidden_size when unset."""
        return self.hidden_size if self.embedding_size is None else self.embedding_size

    @property
    def hidden_groups(self) -> int:
        """Groups of layers with their own weights: num_hidden_layers when nothing is shared."""
        return self.num_hidden_layers if self.num_hidden_groups is None else self.num_hidden_groups

    @property
    def albert(self) -> bool:
        """True for a config with ALBERT's fields: its checkpoints use ALBERT's TF1 layout."""
        return self.embedding_size is not None or self.num_hidden_groups is not None \
            or self.inner_group_num != 1

    def extensions(self) -> list[str]:
        """What of this config plain BERT lacks, in words ([] for a BERT config): formats with
        BERT's layout alone (Hugging Face's BertModel, keras-hub's BertBackbone) refuse these."""
        found = []
        if self.albert:
            found.append(f"ALBERT's layout (embedding_size={self.embedding_size}, "
                         f"num_hidden_groups={self.num_hidden_groups}, "
                         f"inner_group_num={self.inner_group_num})")
        if self.causal_attention:
            found.append("a causal attention mask (causal_attention)")
        return found

    def group_of_layer(self, layer: int) -> int:
        """The group whose weights layer `layer` (0-based) runs: ALBERT's
        int(layer / num_hidden_layers * num_hidden_groups)."""
        return int(layer / self.num_hidden_layers * self.hidden_groups)

    @classmethod
    def from_dict(cls, values: dict[str, Any], source: str = "config") -> "BertConfig":
        """Builds a config from a dict, warning about keys the original does not define and
        about fields it leaves to the original's defaults.

        Released configs carry extras (multilingual BERT's `directionality`, `pooler_fc_size`, ...)
        that change nothing in the model; they are tolerated and named in a warning. An unknown
        key that is a misspelling of a field the dict lacks ("num_hidden_layer") is an error: the
        field would silently take its default, and the model would not fit its checkpoint.
        """
        if not isinstance(values, dict):
            raise ConfigError(f"{source}: expected a JSON object, got {type(values).__name__}")
        known = [f.name for f in dataclasses.fields(cls)]
        for name, inactive in _ALBERT_INACTIVE.items():
            if values.get(name, inactive) != inactive:
                raise ConfigError(f"{source}: {name}={values[name]!r}: ALBERT's experimental "
                                  f"structures are not built here (only {name}={inactive})")
        unknown = sorted(set(values) - set(known) - set(_ALBERT_INACTIVE))
        absent = [name for name in known
                  if name not in values and name not in _EXTENSION_DEFAULTS]
        for key in unknown:
            close = difflib.get_close_matches(key, absent, n=1, cutoff=0.8)
            if close:
                raise ConfigError(f"{source}: unknown key {key} (did you mean {close[0]}?)")
        if unknown:
            logging.warning("%s: ignoring keys the BERT config does not use: %s",
                            source, ", ".join(unknown))
        if "vocab_size" not in values:
            raise ConfigError(f"{source}: missing required key 'vocab_size'")
        if absent:
            defaults = {f.name: f.default for f in dataclasses.fields(cls)}
            logging.warning("%s: missing, so the original's defaults are used: %s", source,
                            ", ".join(f"{name}={defaults[name]!r}" for name in absent))
        kwargs = {k: v for k, v in values.items() if k in known}
        # JSON writes 0.1 as a float but a hand-written config may say `"initializer_range": 1`.
        for name, expected in _FIELD_TYPES.items():
            if expected is float and isinstance(kwargs.get(name), int) and not isinstance(
                    kwargs.get(name), bool):
                kwargs[name] = float(kwargs[name])
        try:
            return cls(**kwargs)
        except ConfigError as e:
            raise ConfigError(f"{source}: {e}") from None

    @classmethod
    def from_json_file(cls, path: str) -> "BertConfig":
        """Reads an original `bert_config.json`."""
        try:
            with open(path, encoding="utf-8") as f:
                values = json.load(f)
        except FileNotFoundError:
            raise ConfigError(f"{path}: no such file") from None
        except json.JSONDecodeError as e:
            raise ConfigError(f"{path}: line {e.lineno}: invalid JSON ({e.msg})") from None
        return cls.from_dict(values, source=path)

    def to_dict(self) -> dict[str, Any]:
        """The JSON's fields; the extensions only when used, so a BERT config is the original's."""
        return {name: value for name, value in dataclasses.asdict(self).items()
                if name not in _EXTENSION_DEFAULTS or value != _EXTENSION_DEFAULTS[name]}

    def to_json_string(self) -> str:
        return json.dumps(self.to_dict(), indent=2, sort_keys=True) + "\n"

    def to_json_file(self, path: str) -> None:
        """Writes the config atomically (a temp file in the same folder, then a rename)."""
        with open_atomically(path) as f:
            f.write(self.to_json_string())


_FIELD_TYPES = {
    "vocab_size": int, "hidden_size": int, "num_hidden_layers": int,
    "num_attention_heads": int, "intermediate_size": int, "hidden_act": str,
    "hidden_dropout_prob": float, "attention_probs_dropout_prob": float,
    "max_position_embeddings": int, "type_vocab_size": int, "initializer_range": float,
    "embedding_size": int, "num_hidden_groups": int, "inner_group_num": int,
    "causal_attention": bool,
}
_OPTIONAL_FIELDS = ("embedding_size", "num_hidden_groups")
# The extensions' "unused" values, left out of the JSON.
_EXTENSION_DEFAULTS = {"embedding_size": None, "num_hidden_groups": None, "inner_group_num": 1,
                       "causal_attention": False}
# ALBERT's experimental fields, in its released configs; only their "off" values build ALBERT.
_ALBERT_INACTIVE = {"net_structure_type": 0, "gap_size": 0, "num_memory_blocks": 0,
                    "down_scale_factor": 1}


def _type_name(t: type) -> str:
    return {int: "an integer", float: "a number", str: "a string", bool: "true or false"}[t]


# The 24 compact models of "Well-Read Students Learn Better" (Turc et al., 2019), released with
# google-research/bert, plus BERT-Large: L layers, H hidden, H/64 heads, 4H feed-forward.
_NAMED_SIZES = {"tiny": (2, 128), "mini": (4, 256), "small": (4, 512), "medium": (8, 512),
                "base": (12, 768), "large": (24, 1024)}


def _preset(layers: int, hidden: int, vocab_size: int) -> BertConfig:
    return BertConfig(vocab_size=vocab_size, hidden_size=hidden, num_hidden_layers=layers,
                      num_attention_heads=hidden // 64, intermediate_size=4 * hidden,
                      type_vocab_size=2)


def preset_names() -> list[str]:
    """Names accepted by `preset`: tiny..large and every `L{layers}_H{hidden}` size released."""
    grid = [f"L{layers}_H{hidden}" for layers in (2, 4, 6, 8, 10, 12)
            for hidden in (128, 256, 512, 768)]
    return list(_NAMED_SIZES) + grid + ["L24_H1024"]


def preset(name: str, vocab_size: int = 30522) -> BertConfig:
    """A released BERT size by name ("base", "tiny", "L6_H512", ...) with the given vocab."""
    if name in _NAMED_SIZES:
        return _preset(*_NAMED_SIZES[name], vocab_size)
    if name not in preset_names():
        raise ConfigError(f"unknown preset {name!r}; known: {', '.join(preset_names())}")
    layers, hidden = (int(part[1:]) for part in name.split("_"))
    return _preset(layers, hidden, vocab_size)
