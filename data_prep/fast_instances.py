"""Pretraining instances for a chunk of tokenised documents, built with numpy (the fast mode).

The algorithm and its distributions are the original's (see data_prep/original_instances.py for
the reference, call by call); only the bookkeeping differs, so that the expensive parts run on
whole arrays instead of one token at a time:

1. Pairing walks each document's sentence *lengths* in Python (a few steps per instance) and
   records every segment as a [start, end) range of one flat token array: no token is copied.
2. Truncation is arithmetic: the original trims the longer segment one token at a time, from the
   front or the back by a fair coin. The final lengths follow from the lengths alone, and the
   number of front trims of a segment is Binomial(trims, 1/2), drawn in one call.
3. Masking draws one random key per token for all instances at once; a row's masked positions
   are its num_to_predict smallest keys among the candidates (a uniformly random subset, as the
   original's shuffle gives), then [MASK], kept or a random vocab id in the shares of
   options.masking_mix (the original's 80/10/10 by default).

Randomness comes from one `np.random.Generator` per chunk, seeded by the caller from
(random_seed, shard, chunk), so output does not depend on how many processes run.
"""

from __future__ import annotations

import dataclasses
import random

import numpy as np

from data_prep.pretraining_options import PretrainingDataOptions
from official.pretraining_records import replacement_thresholds


@dataclasses.dataclass
class TokenizedChunk:
    """Documents as one flat id array: sentence s is ids[sentence_starts[s]:sentence_starts[s+1]],
    document d holds sentences doc_starts[d] .. doc_starts[d+1]-1. Empty sentences are absent."""
    ids: np.ndarray              # int32 [tokens]
    sentence_starts: np.ndarray  # int64 [sentences + 1]
    doc_starts: np.ndarray       # int64 [documents + 1]

    @property
    def num_documents(self) -> int:
        return len(self.doc_starts) - 1


@dataclasses.dataclass(frozen=True)
class SpecialIds:
    """Vocab ids the instances need; `continues_word[id]` is True for "##" pieces."""
    cls: int
    sep: int
    mask: int
    vocab_size: int
    continues_word: np.ndarray  # bool [vocab_size]


@dataclasses.dataclass
class InstanceBatch:
    """Padded instances, the arrays of the TFRecord features (int32 and uint8, not the files'
    int64: a chunk's instances take tens of MB)."""
    input_ids: np.ndarray            # int32 [n, max_seq_length]
    input_mask: np.ndarray           # uint8 [n, max_seq_length]
    segment_ids: np.ndarray          # uint8 [n, max_seq_length]
    masked_lm_positions: np.ndarray  # [n, max_predictions_per_seq]
    masked_lm_ids: np.ndarray        # [n, max_predictions_per_seq]
    masked_lm_weights: np.ndarray    # float32 [n, max_predictions_per_seq]
    next_sentence_labels: np.ndarray  # [n]
    replaced_with_mask: int = 0      # how the predictions were corrupted (for the summary)
    kept: int = 0
    replaced_with_random: int = 0


class _ScalarDraws(random.Random):
    """Python's generator with a leaner `randint`: the same numbers (CPython's randint(a, b) is
    a + _randbelow(b - a + 1), after argument checks this code does not need), at about half
    the cost of a call that runs a few times per instance."""

    def randint(self, a: int, b: int) -> int:
        if b < a:
            raise ValueError(f"empty range for randint({a}, {b})")
        return a + self._randbelow(b - a + 1)


def _segment_pairs(chunk: TokenizedChunk, options: PretrainingDataOptions,
                   rng: random.Random) -> np.ndarray:
    """Runs the original's sentence pairing over every document, `dupe_factor` times.

    Returns int64 [n, 5]: token ranges a_start, a_end, b_start, b_end (b empty for
    objective "none") and the second-sentence label.
    """
    starts = chunk.sentence_starts.tolist()
    lengths = np.diff(chunk.sentence_starts).tolist()
    doc_starts = chunk.doc_starts.tolist()
    num_docs = chunk.num_documents
    special = 2 if options.objective == "none" else 3  # [CLS] A [SEP] (B [SEP])
    max_num_tokens = options.max_seq_length - special
    pairs = []
    for _ in range(options.dupe_factor):
        for doc in range(num_docs):
            first, last = doc_starts[doc], doc_starts[doc + 1]
            # Mostly fill the sequence (padding is wasted compute); sometimes aim shorter, so
            # pretraining also sees the short inputs of fine-tuning.
            target = max_num_tokens
            if rng.random() < options.short_seq_prob:
                target = rng.randint(2, max_num_tokens)
            chunk_first, length, i = first, 0, first
            while i < last:
                length += lengths[i]
                if i == last - 1 or length >= target:
                    num_sentences = i + 1 - chunk_first
                    if options.objective == "none":
                        pairs.append((starts[chunk_first], starts[i + 1], 0, 0, 0))
                    else:
                        # A gets the first a_end sentences of the chunk: split at sentence ends so
                        # the second-sentence task is about sentences, not arbitrary cut points.
                        a_end = 1 if num_sentences < 2 else rng.randint(1, num_sentences - 1)
                        a = (starts[chunk_first], starts[chunk_first + a_end])
                        if options.objective == "sop":
                            i, pair = _sentence_order_pair(chunk_first, a_end, i, a, starts, rng)
                            if pair is not None:
                                pairs.append(pair)
                        else:
                            i, pair = _next_sentence_pair(
                                doc, chunk_first, a_end, i, a, target, starts, doc_starts, rng)
                            pairs.append(pair)
                    chunk_first, length = i + 1, 0
                i += 1
    return np.array(pairs, dtype=np.int64).reshape(-1, 5)


def _next_sentence_pair(doc, chunk_first, a_end, i, a, target, starts, doc_starts, rng):
    """BERT's NSP: B follows A (label 0) or, half the time, is a random document's text (1)."""
    num_sentences = i + 1 - chunk_first
    if num_sentences == 1 or rng.random() < 0.5:
        target_b = target - (a[1] - a[0])
        # A different document, tried ten times as the original does (one-document chunks keep
        # their own).
        for _ in range(10):
            other = rng.randint(0, len(doc_starts) - 2)
            if other != doc:
                break
        first, last = doc_starts[other], doc_starts[other + 1]
        b_first = rng.randint(first, last - 1)
        b_last = b_first
        while b_last < last and starts[b_last + 1] - starts[b_first] < target_b:
            b_last += 1
        b_last = min(b_last, last - 1)
        # The unused sentences of this chunk go back to be paired again.
        return chunk_first + a_end - 1, (a[0], a[1], starts[b_first], starts[b_last + 1], 1)
    return i, (a[0], a[1], a[1], starts[i + 1], 0)


def _sentence_order_pair(chunk_first, a_end, i, a, starts, rng):
    """ALBERT's SOP: two consecutive spans of one document, swapped half the time (label 1).

    A one-sentence chunk is split inside the sentence at a random token (skipped if it has one
    token), so both spans always come from the same place in the same document.
    """
    if i == chunk_first:
        begin, end = starts[i], starts[i + 1]
        if end - begin < 2:
            return i, None
        a = (begin, begin + rng.randint(1, end - begin - 1))
        b = (a[1], end)
    else:
        b = (a[1], starts[i + 1])
    if rng.random() < 0.5:
        return i, (b[0], b[1], a[0], a[1], 1)
    return i, (a[0], a[1], b[0], b[1], 0)


def _truncate(pairs: np.ndarray, max_num_tokens: int, rng: np.random.Generator) -> np.ndarray:
    """The original's truncate_seq_pair for all pairs at once (see the module docstring)."""
    la, lb = pairs[:, 1] - pairs[:, 0], pairs[:, 3] - pairs[:, 2]
    excess = np.maximum(la + lb - max_num_tokens, 0)
    gap = np.abs(la - lb)
    # Trimming the longer until equal, then alternately b, a, b, ... (ties trim b first).
    first = np.minimum(excess, gap)
    rest = excess - first
    trim_a = np.where(la > lb, first, 0) + rest // 2
    trim_b = np.where(la > lb, 0, first) + rest - rest // 2
    front_a, front_b = rng.binomial(trim_a, 0.5), rng.binomial(trim_b, 0.5)
    out = pairs.copy()
    out[:, 0] += front_a
    out[:, 1] -= trim_a - front_a
    out[:, 2] += front_b
    out[:, 3] -= trim_b - front_b
    return out


def _assemble(ids: np.ndarray, pairs: np.ndarray, options: PretrainingDataOptions,
              special: SpecialIds) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """[CLS] A [SEP] (B [SEP]) padded with 0: input ids, segment ids and lengths.

    Row r's A tokens are ids[a_start + p - 1] at positions p = 1 .. len(A): a window of ids
    starting at a_start - 1, and its B tokens likewise a window at b_start - len(A) - 2. Whole
    windows are copied (`sliding_window_view`, rows of contiguous memory), then masked.
    """
    seq_len = options.max_seq_length
    la, lb = pairs[:, 1] - pairs[:, 0], pairs[:, 3] - pairs[:, 2]
    has_b = lb > 0
    length = la + 2 + np.where(has_b, lb + 1, 0)
    padded = np.zeros(len(ids) + 2 * seq_len, np.int32)
    padded[seq_len:seq_len + len(ids)] = ids
    windows = np.lib.stride_tricks.sliding_window_view(padded, seq_len)
    p = np.arange(seq_len)[None, :]
    la_, lb_ = la[:, None], lb[:, None]
    in_a = (p >= 1) & (p <= la_)
    in_b = (p >= la_ + 2) & (p < la_ + 2 + lb_)
    tokens = np.where(in_a, windows[pairs[:, 0] - 1 + seq_len], 0)
    tokens = np.where(in_b, windows[pairs[:, 2] - la - 2 + seq_len], tokens)
    tokens[:, 0] = special.cls
    rows = np.arange(len(pairs))
    tokens[rows, la + 1] = special.sep
    tokens[rows[has_b], (la + lb + 2)[has_b]] = special.sep
    segments = (has_b[:, None] & (p >= la_ + 2) & (p < length[:, None])).astype(np.uint8)
    return tokens, segments, length


def _num_to_predict(length: np.ndarray, options: PretrainingDataOptions) -> np.ndarray:
    # int(round(x)) in the original: Python rounds halves to even, as np.rint does.
    wanted = np.maximum(1, np.rint(length * options.masked_lm_prob).astype(np.int64))
    return np.minimum(options.max_predictions_per_seq, wanted)


def _candidates(tokens: np.ndarray, length: np.ndarray, special: SpecialIds) -> np.ndarray:
    real = np.arange(tokens.shape[1])[None, :] < length[:, None]
    return real & (tokens != special.cls) & (tokens != special.sep)


def _choose_tokens(candidates, num_to_predict, rng) -> tuple[np.ndarray, np.ndarray]:
    """Uniformly random masked positions, sorted: [n, max_predictions] and their validity.

    Each candidate draws a key; a row masks the candidates of its num_to_predict smallest keys
    (ties, vanishingly rare, to the earlier position). Found by partition, not a full sort.
    """
    keys = rng.random(candidates.shape)
    keys[~candidates] = 2.0  # never below a candidate's key
    width = int(num_to_predict.max(initial=1))
    smallest = np.sort(np.partition(keys, width - 1, axis=1)[:, :width], axis=1)
    threshold = np.take_along_axis(smallest, (num_to_predict - 1)[:, None], axis=1)
    chosen_mask = keys < threshold  # candidates only: a key of 2.0 is never below
    tied = (keys == threshold) & candidates
    needed = num_to_predict - chosen_mask.sum(axis=1)
    crowded = np.flatnonzero(tied.sum(axis=1) > needed)  # more tied keys than places left
    tied[crowded] &= np.cumsum(tied[crowded], axis=1) <= needed[crowded, None]
    chosen_mask |= tied
    counts = chosen_mask.sum(axis=1)
    rows, positions = np.nonzero(chosen_mask)  # row by row, positions ascending
    first = np.zeros(len(counts), np.int64)
    np.cumsum(counts[:-1], out=first[1:])
    chosen = np.zeros((len(keys), width), np.int64)
    chosen[rows, np.arange(len(rows)) - first[rows]] = positions
    return chosen, np.arange(width)[None, :] < counts[:, None]


def _choose_whole_words(tokens, candidates, num_to_predict, special, rng):
    """Whole-word masking: a "##" piece belongs to its word, and words are masked whole.

    Per instance (words vary in number and size): shuffle the words, take each one that still
    fits under num_to_predict, skip one that would overflow (a later, shorter word may fit).
    """
    width = int(num_to_predict.max(initial=1))
    chosen = np.zeros((len(tokens), width), np.int64)
    valid = np.zeros((len(tokens), width), bool)
    continues = special.continues_word[tokens] & candidates
    for row in range(len(tokens)):
        positions = np.flatnonzero(candidates[row])
        if not len(positions):
            continue
        # As in the original, specials are skipped when grouping: a "##" piece opening segment B
        # joins the last word of A. Only the very first candidate has nothing to join.
        starts_word = ~continues[row, positions]
        starts_word[0] = True
        words = np.split(positions, np.flatnonzero(starts_word)[1:])
        picked: list[int] = []
        for w in rng.permutation(len(words)):
            if len(picked) + len(words[w]) <= num_to_predict[row]:
                picked.extend(words[w])
        picked.sort()
        chosen[row, :len(picked)] = picked
        valid[row, :len(picked)] = True
    return chosen, valid


def build_instances(chunk: TokenizedChunk, options: PretrainingDataOptions, special: SpecialIds,
                    rng: np.random.Generator) -> InstanceBatch:
    """All instances of one chunk (every document, `dupe_factor` passes), masked and shuffled."""
    # Scalar draws (a few per instance) from Python's generator, which is ~10x cheaper per call
    # than numpy's; array draws from numpy. Both are seeded from `rng`, so output stays a
    # function of the seed.
    pairs = _segment_pairs(chunk, options, _ScalarDraws(int(rng.integers(2**63))))
    max_num_tokens = options.max_seq_length - (2 if options.objective == "none" else 3)
    pairs = _truncate(pairs, max_num_tokens, rng)
    pairs = pairs[rng.permutation(len(pairs))]  # The original shuffles its instances too.
    tokens, segments, length = _assemble(chunk.ids, pairs, options, special)

    candidates = _candidates(tokens, length, special)
    num_to_predict = _num_to_predict(length, options)
    if options.do_whole_word_mask:
        chosen, valid = _choose_whole_words(tokens, candidates, num_to_predict, special, rng)
    else:
        chosen, valid = _choose_tokens(candidates, num_to_predict, rng)
    # Sort each row's valid positions ascending, invalid ones last (the original sorts by index).
    chosen = np.sort(np.where(valid, chosen, options.max_seq_length), axis=1)
    valid = chosen < options.max_seq_length
    chosen = np.where(valid, chosen, 0)
    labels = np.where(valid, np.take_along_axis(tokens, chosen, axis=1), 0)

    # The masking mix, the original's 80% [MASK] (the model must predict from context), 10% kept
    # (it must also model tokens it sees), 10% random (it cannot trust any input token). Both
    # arrays are drawn whatever the mix, so the mix changes no other draw.
    below_mask, below_same = replacement_thresholds(options.masking_mix)
    draw = rng.random(chosen.shape)
    random_ids = rng.integers(0, special.vocab_size, chosen.shape)
    replacement = np.where(draw < below_mask, special.mask,
                           np.where(draw < below_same, labels, random_ids))
    rows = np.repeat(np.arange(len(tokens)), chosen.shape[1]).reshape(chosen.shape)
    tokens[rows[valid], chosen[valid]] = replacement[valid]

    width = options.max_predictions_per_seq
    padded = np.zeros((len(tokens), width), np.int32)
    positions, label_ids, weights = padded.copy(), padded.copy(), np.zeros((len(tokens), width),
                                                                           np.float32)
    positions[:, :chosen.shape[1]] = chosen
    label_ids[:, :chosen.shape[1]] = labels
    weights[:, :chosen.shape[1]] = valid
    mask_rows = np.arange(options.max_seq_length)[None, :] < length[:, None]
    return InstanceBatch(
        input_ids=tokens, input_mask=mask_rows.astype(np.uint8), segment_ids=segments,
        masked_lm_positions=positions, masked_lm_ids=label_ids, masked_lm_weights=weights,
        next_sentence_labels=pairs[:, 4].astype(np.int32),
        replaced_with_mask=int(((draw < below_mask) & valid).sum()),
        kept=int(((draw >= below_mask) & (draw < below_same) & valid).sum()),
        replaced_with_random=int(((draw >= below_same) & valid).sum()))
