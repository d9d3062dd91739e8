"""A sentence's log-likelihood under a language-model head, for many sentences at once.

    sequences = encode(model.tokenizer, texts)         [CLS] t_1 ... t_n [SEP] ids per text
    sentence_log_likelihoods(model, sequences, batch_size) -> float64 [len(sequences)]
        pseudo-log-likelihood for a masked LM, the chain rule's sum for a left-to-right one
        (model.left_to_right, from the checkpoint's config)
    pseudo_log_likelihoods(model, sequences, batch_size, scored=None)
    left_to_right_log_likelihoods(model, sequences, batch_size)

`model` is a masked_lm.MaskedLanguageModel (its `target_log_probs` and `tokenizer`); the scores
are natural logarithms summed over the sentence's word pieces t_1 .. t_n, never [CLS] or [SEP].

Pseudo-log-likelihood (Salazar, Liang, Nguyen & Kirchhoff 2020, "Masked Language Model
Scoring", eq. 2): every piece is masked in turn, the rest of the sentence as it is, and the log
of the probability the head gives the true piece at the [MASK] is summed:

    PLL(t_1..t_n) = sum_i log P(t_i | [CLS] t_1 .. t_{i-1} [MASK] t_{i+1} .. t_n [SEP])

n copies of a sentence, one forward pass each (the copies are the rows batched below). `scored`
chooses which positions are masked (CrowS-Pairs scores only the tokens two sentences share);
by default every piece.

Left to right (a run_pretraining --objective=ltr model, causal attention): one forward pass
over [CLS] t_1 .. t_n gives every next-token prediction at once, and

    log P(t_1..t_n) = sum_i log P(t_i | [CLS] t_1 .. t_{i-1})

[CLS] stands in for a start-of-text token: the left-to-right model was trained with [CLS]
predicting a segment's first piece. [SEP] is not scored: in the training records it ends a
stretch of up to max_seq_length pieces, not a sentence, so its probability says nothing about
where a sentence may end (and the masked scoring leaves it out too).

Batching: rows are ordered by their sequence's length before they are cut into batches of
`batch_size`, so a batch pads each row to at most its longest neighbour (BLiMP's sentences run
from 4 to 30-odd pieces), and a sequence that occurs several times is scored once. The order
changes float32 rounding only.
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

Progress = Callable[[int, int], None]  # (rows done, rows in all)


def encode(tokenizer, texts: Sequence[str]) -> list[list[int]]:
    """[CLS] pieces [SEP] ids of each text (the project's FullTokenizer)."""
    cls_id, sep_id = tokenizer.convert_tokens_to_ids(["[CLS]", "[SEP]"])
    return [[cls_id, *ids.tolist(), sep_id] for ids in tokenizer.tokenize_batch_ids(list(texts))]


def _table(sequences: Sequence[Sequence[int]]) -> tuple[np.ndarray, np.ndarray]:
    """(int32 [sequences, longest] 0-padded ids, int64 [sequences] lengths)."""
    lengths = np.array([len(s) for s in sequences], np.int64)
    table = np.zeros((len(sequences), int(lengths.max(initial=0))), np.int32)
    for row, sequence in enumerate(sequences):
        table[row, :len(sequence)] = sequence
    return table, lengths


def _unique(sequences: Sequence[Sequence[int]]) -> tuple[list[tuple[int, ...]], np.ndarray]:
    """(the distinct sequences, the index of each sequence among them)."""
    found: dict[tuple[int, ...], int] = {}
    index = np.array([found.setdefault(tuple(s), len(found)) for s in sequences], np.int64)
    return list(found), index


def _batches(order: np.ndarray, batch_size: int):
    for start in range(0, len(order), batch_size):
        yield order[start:start + batch_size]


def pseudo_log_likelihoods(model, sequences: Sequence[Sequence[int]], batch_size: int,
                           scored: Sequence[Sequence[int]] | None = None,
                           progress: Progress | None = None) -> np.ndarray:
    """float64 [len(sequences)]: each sequence's PLL over `scored[i]` (positions in it; default
    1 .. len - 2, every piece between [CLS] and [SEP]).

    Raises:
      ValueError: a scored position outside its sequence.
    """
    if scored is None:
        distinct, index = _unique(sequences)
        table, lengths = _table(distinct)
        return _masked_totals(model, table, lengths, [range(1, n - 1) for n in lengths],
                              batch_size, progress)[index]
    table, lengths = _table(sequences)
    return _masked_totals(model, table, lengths, scored, batch_size, progress)


def _masked_totals(model, table: np.ndarray, lengths: np.ndarray,
                   scored: Sequence[Sequence[int]], batch_size: int,
                   progress: Progress | None) -> np.ndarray:
    """Each table row's sum over its `scored` positions of log P(true piece | row with that
    position masked): one model row per (table row, position)."""
    (mask_id,) = model.tokenizer.convert_tokens_to_ids(["[MASK]"])
    owner = np.repeat(np.arange(len(table)), [len(p) for p in scored])
    position = np.fromiter((p for positions in scored for p in positions), np.int64,
                           count=len(owner))
    if len(position) and (position.min() < 0 or (position >= lengths[owner]).any()):
        raise ValueError("a scored position lies outside its sequence")
    totals = np.zeros(len(table), np.float64)
    order = np.argsort(lengths[owner], kind="stable")
    for done, batch in enumerate(_batches(order, batch_size), start=1):
        rows, at = owner[batch], position[batch]
        width, picked = int(lengths[rows].max()), np.arange(len(rows))
        ids = table[rows, :width].copy()
        mask = (np.arange(width)[None, :] < lengths[rows][:, None]).astype(np.int32)
        targets = ids[picked, at]
        ids[picked, at] = mask_id
        log_probs = model.target_log_probs(ids, mask, at[:, None], targets[:, None])[:, 0]
        np.add.at(totals, rows, log_probs.astype(np.float64))
        if progress:
            progress(min(done * batch_size, len(order)), len(order))
    return totals


def left_to_right_log_likelihoods(model, sequences: Sequence[Sequence[int]], batch_size: int,
                                  progress: Progress | None = None) -> np.ndarray:
    """float64 [len(sequences)]: each sequence's log-probability, piece by piece from the left."""
    distinct, index = _unique(sequences)
    table, lengths = _table(distinct)
    pieces = np.maximum(lengths - 2, 0)  # t_1 .. t_n between [CLS] and [SEP]
    totals = np.zeros(len(table), np.float64)
    order = np.argsort(lengths, kind="stable")
    for done, rows in enumerate(_batches(order, batch_size), start=1):
        width, count = int(lengths[rows].max()), max(int(pieces[rows].max()), 1)
        ids = table[rows, :width]
        mask = (np.arange(width)[None, :] < lengths[rows][:, None]).astype(np.int32)
        positions = np.broadcast_to(np.arange(count, dtype=np.int32), (len(rows), count))
        targets = table[rows, 1:count + 1]  # position i predicts piece i + 1
        log_probs = model.target_log_probs(ids, mask, positions, targets).astype(np.float64)
        scored = np.arange(count)[None, :] < pieces[rows][:, None]
        totals[rows] = (log_probs * scored).sum(axis=1)
        if progress:
            progress(min(done * batch_size, len(order)), len(order))
    return totals[index]


def sentence_log_likelihoods(model, sequences: Sequence[Sequence[int]], batch_size: int,
                             progress: Progress | None = None) -> np.ndarray:
    """float64 [len(sequences)]: the left-to-right log-likelihood for a model whose head
    predicts the next token, the pseudo-log-likelihood for a masked LM."""
    if model.left_to_right:
        return left_to_right_log_likelihoods(model, sequences, batch_size, progress)
    return pseudo_log_likelihoods(model, sequences, batch_size, progress=progress)
