"""The fast instance builder against the original algorithm (bert-tensorflow) and its rules."""

import random

import numpy as np
import pytest

from data_prep.fast_instances import SpecialIds, TokenizedChunk, _truncate, build_instances
from data_prep.pretraining_options import PretrainingDataOptions
from tests.reference_bert import import_original

VOCAB = 50000
CLS, SEP, MASK = 1, 2, 3
CONTINUES = np.random.default_rng(0).random(VOCAB) < 0.3  # these ids play "##" pieces
SPECIAL = SpecialIds(cls=CLS, sep=SEP, mask=MASK, vocab_size=VOCAB, continues_word=CONTINUES)


def random_documents(seed, num_docs=40):
    """Documents of random sentences; every token id occurs once, so a span has one place."""
    rng = np.random.default_rng(seed)
    ids = iter(rng.permutation(np.arange(10, VOCAB)))
    return [[np.array([next(ids) for _ in range(rng.integers(1, 40))])
             for _ in range(rng.integers(1, 25))] for _ in range(num_docs)]


def to_chunk(documents):
    sentences = [s for d in documents for s in d]
    starts = np.concatenate([[0], np.cumsum([len(s) for s in sentences])])
    doc_starts = np.concatenate([[0], np.cumsum([len(d) for d in documents])])
    return TokenizedChunk(np.concatenate(sentences).astype(np.int32), starts, doc_starts)


def build(documents, seed=0, **options):
    return build_instances(to_chunk(documents), PretrainingDataOptions(**options), SPECIAL,
                           np.random.default_rng(seed))


def test_truncation_lengths_equal_the_originals():
    original = import_original("bert.create_pretraining_data")
    rng = np.random.default_rng(0)
    pairs = []
    for _ in range(2000):
        la, lb = rng.integers(1, 150, 2)
        pairs.append((0, la, 1000, 1000 + lb, 0))
    pairs = np.array(pairs)
    ours = _truncate(pairs, 61, rng)
    for (a0, a1, b0, b1, _), (c0, c1, d0, d1, _) in zip(pairs, ours):
        tokens_a, tokens_b = list(range(a0, a1)), list(range(b0, b1))
        original.truncate_seq_pair(tokens_a, tokens_b, 61, random.Random(0))
        assert (c1 - c0, d1 - d0) == (len(tokens_a), len(tokens_b))
        # What is left is a contiguous span of what was there.
        assert a0 <= c0 <= c1 <= a1 and b0 <= d0 <= d1 <= b1


def unmasked_view(batch):
    """input_ids with the masked positions restored to their labels."""
    ids = batch.input_ids.copy()
    rows = np.arange(len(ids))[:, None].repeat(ids.shape[1] and batch.masked_lm_ids.shape[1], 1)
    valid = batch.masked_lm_weights > 0
    ids[rows[valid], batch.masked_lm_positions[valid]] = batch.masked_lm_ids[valid]
    return ids


def spans(row_ids, length, sep_positions):
    return row_ids[1:sep_positions[0]], row_ids[sep_positions[0] + 1:length - 1]


@pytest.mark.parametrize("objective", ["nsp", "sop"])
def test_instances_are_well_formed(objective):
    documents = random_documents(1)
    text = np.concatenate([s for d in documents for s in d]).tolist()
    batch = build(documents, objective=objective, max_seq_length=64, max_predictions_per_seq=10,
                  dupe_factor=2)
    ids = unmasked_view(batch)
    for row in range(len(ids)):
        length = int(batch.input_mask[row].sum())
        assert batch.input_mask[row, :length].all() and not batch.input_mask[row, length:].any()
        assert ids[row, 0] == CLS and ids[row, length - 1] == SEP and not ids[row, length:].any()
        seps = np.flatnonzero(ids[row, :length] == SEP)
        assert len(seps) == 2
        assert (batch.segment_ids[row, :seps[0] + 1] == 0).all()
        assert (batch.segment_ids[row, seps[0] + 1:length] == 1).all()
        a, b = spans(ids[row], length, seps)
        assert len(a) and len(b)
        # Each segment is a contiguous stretch of the corpus.
        for segment in (a, b):
            string = ",".join(map(str, segment))
            assert string in ",".join(map(str, text))
        # Predictions: sorted, distinct, never a special token, as many as the original takes.
        positions = batch.masked_lm_positions[row][batch.masked_lm_weights[row] > 0]
        assert (np.diff(positions) > 0).all()
        assert not np.isin(ids[row, positions], [CLS, SEP]).any()
        assert len(positions) == min(10, max(1, round(length * 0.15)), length - 3)


def test_sentence_order_labels_mean_swapped():
    documents = random_documents(2)
    text = "," + ",".join(map(str, np.concatenate([s for d in documents for s in d]))) + ","
    batch = build(documents, objective="sop", max_seq_length=64, dupe_factor=2)
    ids = unmasked_view(batch)
    for row in range(len(ids)):
        length = int(batch.input_mask[row].sum())
        a, b = spans(ids[row], length, np.flatnonzero(ids[row, :length] == SEP))
        where_a, where_b = (text.find("," + ",".join(map(str, s)) + ",") for s in (a, b))
        assert where_a >= 0 and where_b >= 0  # each segment is a contiguous stretch
        # Label 1: the segments were swapped, B comes first in the document.
        assert (where_b < where_a) == bool(batch.next_sentence_labels[row])
    assert 0.45 < batch.next_sentence_labels.mean() < 0.55


def test_objective_none_is_one_segment():
    batch = build(random_documents(3), objective="none", max_seq_length=64)
    lengths = batch.input_mask.sum(1)
    assert not batch.segment_ids.any() and not batch.next_sentence_labels.any()
    assert ((batch.input_ids == SEP).sum(1) == 1).all()
    assert (batch.input_ids[np.arange(len(lengths)), lengths - 1] == SEP).all()


def test_distributions_match_the_original_algorithm():
    """Same documents through the original's create_instances_from_document: the share of
    random-next labels and the mean length agree; the masking split is 80/10/10."""
    original = import_original("bert.create_pretraining_data")
    documents = random_documents(4, num_docs=60)
    as_tokens = [[[f"w{i}" for i in s] for s in d] for d in documents]
    vocab_words = [f"w{i}" for i in range(VOCAB)]
    rng = random.Random(0)
    instances = []
    for _ in range(3):
        for index in range(len(as_tokens)):
            instances += original.create_instances_from_document(
                as_tokens, index, 128, 0.1, 0.15, 20, vocab_words, rng)
    theirs_random = np.mean([i.is_random_next for i in instances])
    theirs_length = np.mean([len(i.tokens) for i in instances])

    batch = build(documents, dupe_factor=3)
    assert abs(len(batch.input_ids) - len(instances)) < 0.05 * len(instances)
    assert abs(batch.next_sentence_labels.mean() - theirs_random) < 0.04
    assert abs(batch.input_mask.sum(1).mean() - theirs_length) < 0.03 * theirs_length
    predictions = batch.replaced_with_mask + batch.kept + batch.replaced_with_random
    assert predictions == batch.masked_lm_weights.sum()
    assert abs(batch.replaced_with_mask / predictions - 0.8) < 0.02
    assert abs(batch.kept / predictions - 0.1) < 0.02


def test_whole_words_are_masked_whole():
    batch = build(random_documents(5), do_whole_word_mask=True, max_seq_length=64,
                  max_predictions_per_seq=12)
    ids = unmasked_view(batch)
    for row in range(len(ids)):
        length = int(batch.input_mask[row].sum())
        masked = np.zeros(length, bool)
        masked[batch.masked_lm_positions[row][batch.masked_lm_weights[row] > 0]] = True
        assert masked.sum() <= min(12, max(1, round(length * 0.15)))
        # Group tokens into words (a "##" piece joins the word before it, skipping [SEP]).
        word, words = -1, np.full(length, -1)
        for p in range(1, length):
            if ids[row, p] in (CLS, SEP):
                words[p] = -1
                continue
            if not CONTINUES[ids[row, p]] or word < 0:
                word += 1
            words[p] = word
        for w in set(words[1:]) - {-1}:
            assert masked[words == w].all() or not masked[words == w].any()


def test_same_seed_same_instances_other_seed_other():
    documents = random_documents(6)
    one, two, other = build(documents, seed=7), build(documents, seed=7), build(documents, seed=8)
    np.testing.assert_array_equal(one.input_ids, two.input_ids)
    assert one.input_ids.shape != other.input_ids.shape or (one.input_ids != other.input_ids).any()
