"""A checkpoint's weights for an extended vocab: every old row kept, each new row the mean of the
rows of the pieces the old vocab cuts its token into.

    plan = plan_extension(old_vocab_file, new_vocab_file, vocab_size, source)   # no TensorFlow
    weights = extend_weights(weights, plan)
    records.write(os.path.join(output_dir, RECORD_FILE), plan.record())

The new vocab (data_prep/extend_vocab.py writes one) must keep every old token at its id, except
`[unusedN]` lines, which it may fill; it may add lines after the last. A new token's row in
`bert/embeddings/word_embeddings` is the mean of the old rows of its old pieces ("##ation" is cut
as a word's continuation), and so is its entry of the masked-LM output bias
`cls/predictions/output_bias` when the checkpoint has that head: Fast Vocabulary Transfer (Gee et
al. 2022). Hugging Face's `resize_token_embeddings` instead draws new rows around the mean of all
old rows, which tells the model nothing about the word; the mean of its own pieces is the vector
the model already reads for it (up to position), so the model starts where the old vocab left it
and the new row only has to sharpen. A token the old vocab cannot cut (an unknown character)
takes [UNK]'s row. Rows of the unused lines a new vocab leaves alone are kept as they were.

The record (`extended_vocab.json`, beside the new checkpoint) names the new ids, which
run_pretraining's --train_only_new_embeddings_steps trains first.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os

import numpy as np

from official import records
from official.text.python_tokenizer import longest_match_pieces
from official.text.vocab import UNKNOWN_TOKEN, load_vocab

RECORD_FILE = "extended_vocab.json"
WORD_EMBEDDINGS = "bert/embeddings/word_embeddings"  # [vocab_size, hidden]
OUTPUT_BIAS = "cls/predictions/output_bias"  # [vocab_size]
_UNUSED_PREFIX, _SUFFIX = "[unused", "##"


@dataclasses.dataclass(frozen=True)
class ExtendedVocab:
    """The record of an extension: the vocab sizes, and each new id with the old ids whose mean
    row it started from."""
    old_vocab_size: int
    vocab_size: int
    new_ids: tuple[int, ...]
    old_pieces: tuple[tuple[int, ...], ...]
    old_vocab_sha256: str
    vocab_sha256: str

    def __post_init__(self):
        if len(self.new_ids) != len(self.old_pieces):
            raise ValueError("new_ids and old_pieces differ in length")
        if any(not 0 <= i < self.vocab_size for i in self.new_ids):
            raise ValueError(f"a new id outside 0..{self.vocab_size - 1}")


def _sha256(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def plan_extension(old_vocab_file: str, new_vocab_file: str, vocab_size: int,
                   source: str) -> ExtendedVocab:
    """What extending the checkpoint `source` (whose config says `vocab_size`, whose vocab is
    `old_vocab_file`) to `new_vocab_file` does.

    Raises:
      ValueError: either vocab unusable (a duplicate line, ...); the old vocab's length is not
        the checkpoint's vocab_size; the new vocab moves or drops an old token; it adds nothing.
    """
    old, new = load_vocab(old_vocab_file), load_vocab(new_vocab_file)
    if len(old) != vocab_size:
        raise ValueError(f"{old_vocab_file} has {len(old)} tokens but {source} has "
                         f"vocab_size={vocab_size}: not this checkpoint's vocab")
    old_tokens, new_tokens = list(old), list(new)
    if len(new_tokens) < len(old_tokens):
        raise ValueError(f"{new_vocab_file}: {len(new_tokens)} tokens, fewer than the "
                         f"{len(old_tokens)} of {old_vocab_file}")
    new_ids = []
    for i, (was, now) in enumerate(zip(old_tokens, new_tokens)):
        if was == now:
            continue
        if not was.startswith(_UNUSED_PREFIX):
            raise ValueError(f"{new_vocab_file}: line {i + 1} is {now!r} where "
                             f"{old_vocab_file} has {was!r}: an extension keeps every old token "
                             f"at its id (only [unusedN] lines may change)")
        new_ids.append(i)
    new_ids += range(len(old_tokens), len(new_tokens))
    if not new_ids:
        raise ValueError(f"{new_vocab_file}: the same tokens as {old_vocab_file}; nothing to "
                         f"extend")
    longest = max(len(t.removeprefix(_SUFFIX)) for t in old)
    pieces = []
    for i in new_ids:
        token = new_tokens[i]
        continued = token.startswith(_SUFFIX) and len(token) > len(_SUFFIX)
        found = longest_match_pieces(token.removeprefix(_SUFFIX) if continued else token, old,
                                     longest, continued=continued)
        pieces.append(tuple(old[p] for p in found) if found else (old[UNKNOWN_TOKEN],))
    return ExtendedVocab(len(old_tokens), len(new_tokens), tuple(new_ids), tuple(pieces),
                         _sha256(old_vocab_file), _sha256(new_vocab_file))


def extend_weights(weights: dict[str, np.ndarray], plan: ExtendedVocab) -> dict[str, np.ndarray]:
    """`weights` (original names) with the word embeddings, and the masked-LM output bias if
    present, grown to the new vocab: old rows unchanged, new rows the mean of their old pieces'.

    Raises:
      ValueError: the word embeddings do not have the plan's old vocab_size rows.
    """
    table = weights[WORD_EMBEDDINGS]
    if table.shape[0] != plan.old_vocab_size:
        raise ValueError(f"{WORD_EMBEDDINGS} has {table.shape[0]} rows, the old vocab "
                         f"{plan.old_vocab_size}")
    extended = dict(weights)
    for name in (WORD_EMBEDDINGS, OUTPUT_BIAS):
        if name in weights:
            extended[name] = _extended_rows(weights[name], plan)
    return extended


def _extended_rows(rows: np.ndarray, plan: ExtendedVocab) -> np.ndarray:
    """[old vocab, ...] -> [new vocab, ...]: old rows kept, new rows the mean of their pieces'
    (each mean taken over the old rows, never over another new row)."""
    grown = np.zeros((plan.vocab_size, *rows.shape[1:]), rows.dtype)
    grown[:plan.old_vocab_size] = rows
    for i, pieces in zip(plan.new_ids, plan.old_pieces):
        grown[i] = rows[list(pieces)].astype(np.float64).mean(axis=0).astype(rows.dtype)
    return grown


def read_record(checkpoint: str, vocab_size: int | None = None,
                config_file: str | None = None) -> ExtendedVocab:
    """The extension record beside the checkpoint `checkpoint` (a prefix or its folder), checked
    against the model's `vocab_size` (from `config_file`) when given.

    Raises:
      ValueError: no record there, one that is not a record, or another vocab_size.
    """
    folder = checkpoint if os.path.isdir(checkpoint) else os.path.dirname(checkpoint)
    path = os.path.join(folder, RECORD_FILE)
    record = records.read(path, ExtendedVocab)
    if record is None:
        raise ValueError(f"{checkpoint}: no {RECORD_FILE} beside it, so no new vocab rows to "
                         f"train first (convert_checkpoint --extend_vocab writes one)")
    if vocab_size is not None and vocab_size != record.vocab_size:
        raise ValueError(f"{config_file} says vocab_size={vocab_size} but {path} extended the "
                         f"vocab to {record.vocab_size}")
    return record
