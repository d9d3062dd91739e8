"""Entity scores against seqeval (conlleval-compatible by default) and conlleval cases by hand."""

import random
import warnings

import pytest
import seqeval.metrics
from seqeval.metrics.sequence_labeling import get_entities

from official.tasks.ner_metrics import (
    PANX_LABELS,
    Chunk,
    ChunkCounts,
    entity_scores,
    get_chunks,
    iob1_to_iob2,
)


@pytest.mark.parametrize("tags, chunks", [
    # IOB2: B- starts; I- continues the same type.
    (["B-PER", "I-PER", "O", "B-LOC"], [("PER", 0, 2), ("LOC", 3, 4)]),
    # IOB1: I- starts after O or at the start; B- separates adjacent chunks of one type.
    (["I-PER", "I-PER", "B-PER", "O", "I-LOC"], [("PER", 0, 2), ("PER", 2, 3), ("LOC", 4, 5)]),
    # A type switch mid-chunk ends one chunk and starts another, I- or not.
    (["B-PER", "I-LOC", "I-LOC", "I-ORG"], [("PER", 0, 1), ("LOC", 1, 3), ("ORG", 3, 4)]),
    (["B-PER", "B-PER", "I-PER"], [("PER", 0, 1), ("PER", 1, 3)]),
    # A chunk runs to the sentence end.
    (["O", "O", "I-MISC"], [("MISC", 2, 3)]),
    (["O", "O"], []),
    ([], []),
    # IOBES: S- is one token, E- closes, I- after E- starts afresh.
    (["B-PER", "E-PER", "S-PER", "I-PER", "E-PER", "E-PER"],
     [("PER", 0, 2), ("PER", 2, 3), ("PER", 3, 5), ("PER", 5, 6)]),
])
def test_chunks_by_conllevals_rules(tags, chunks):
    assert get_chunks(tags) == [Chunk(*chunk) for chunk in chunks]


def test_iob1_to_iob2():
    assert iob1_to_iob2(["I-PER", "I-PER", "B-PER", "O", "I-LOC", "I-ORG", "I-ORG"]) == [
        "B-PER", "I-PER", "B-PER", "O", "B-LOC", "B-ORG", "I-ORG"]


def _random_tags(rng, length, prefixes="BI", types=("PER", "LOC", "ORG")):
    """Tags drawn freely, so they include I- after O, type switches and adjacent B-s."""
    return ["O" if rng.random() < 0.4 else f"{rng.choice(prefixes)}-{rng.choice(types)}"
            for _ in range(length)]


def _random_corpus(seed, prefixes="BI"):
    rng = random.Random(seed)
    lengths = [rng.randint(0, 12) for _ in range(20)]
    return ([_random_tags(rng, n, prefixes) for n in lengths],
            [_random_tags(rng, n, prefixes) for n in lengths])


@pytest.mark.parametrize("seed", range(10))
def test_iob1_to_iob2_keeps_chunks_and_starts_each_with_b(seed):
    for tags in _random_corpus(seed)[0]:
        converted = iob1_to_iob2(tags)
        assert get_chunks(converted) == get_chunks(tags)
        assert all(converted[chunk.start].startswith("B-") for chunk in get_chunks(converted))


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("prefixes", ["BI", "BIES"])
def test_scores_match_seqeval(seed, prefixes):
    gold, predicted = _random_corpus(seed, prefixes)
    for gold_tags in gold:
        assert [tuple(c) for c in get_chunks(gold_tags)] == [
            (kind, start, end + 1) for kind, start, end in get_entities(gold_tags)]
    scores = entity_scores(gold, predicted)
    assert scores.overall.precision == pytest.approx(
        seqeval.metrics.precision_score(gold, predicted, zero_division=0))
    assert scores.overall.recall == pytest.approx(
        seqeval.metrics.recall_score(gold, predicted, zero_division=0))
    assert scores.overall.f1 == pytest.approx(
        seqeval.metrics.f1_score(gold, predicted, zero_division=0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a type only predicted has an undefined recall
        report = seqeval.metrics.classification_report(gold, predicted, output_dict=True,
                                                       zero_division=0)
    assert set(scores.per_type) == set(report) - {"micro avg", "macro avg", "weighted avg"}
    for entity_type, counts in scores.per_type.items():
        assert (counts.precision, counts.recall, counts.f1, counts.support) == pytest.approx((
            report[entity_type]["precision"], report[entity_type]["recall"],
            report[entity_type]["f1-score"], report[entity_type]["support"]))


def test_scores_by_hand():
    gold = [["I-PER", "I-PER", "O", "I-LOC"],  # IOB1: PER[0,2), LOC[3,4)
            ["B-ORG", "I-ORG", "B-ORG"]]  # ORG[0,2), ORG[2,3)
    predicted = [["B-PER", "I-PER", "O", "B-ORG"],  # PER right; ORG[3,4) has the wrong type
                 ["B-ORG", "I-ORG", "I-ORG"]]  # ORG[0,3): both boundaries must match: wrong
    scores = entity_scores(gold, predicted)
    # 1 correct of 3 predicted and of 4 gold: P = 1/3, R = 1/4, F1 = 2PR/(P+R) = 2/7.
    assert scores.overall == ChunkCounts(correct=1, predicted=3, support=4)
    assert scores.overall.f1 == pytest.approx(2 / 7)
    assert scores.per_type == {"LOC": ChunkCounts(0, 0, 1), "ORG": ChunkCounts(0, 2, 2),
                               "PER": ChunkCounts(1, 1, 1)}
    assert scores.as_dict()["PER_f1"] == 1.0
    assert scores.as_dict()["LOC_precision"] == 0.0  # nothing predicted: 0, as conlleval prints
    assert scores.as_dict()["ORG_support"] == 2


def test_wikiann_tags_have_hugging_faces_ids_and_three_entity_types():
    # The `ner_tags` class names of Hugging Face's `xtreme` (PAN-X.*) and `wikiann` datasets.
    assert dict(enumerate(PANX_LABELS)) == {0: "O", 1: "B-PER", 2: "I-PER", 3: "B-ORG",
                                            4: "I-ORG", 5: "B-LOC", 6: "I-LOC"}
    assert {get_chunks([tag])[0].type for tag in PANX_LABELS[1:]} == {"PER", "ORG", "LOC"}


def test_chunks_do_not_cross_sentences():
    # Joined, "I-PER | I-PER" would be one chunk; as two sentences they are two.
    scores = entity_scores([["I-PER"], ["I-PER"]], [["B-PER"], ["B-PER"]])
    assert scores.overall == ChunkCounts(correct=2, predicted=2, support=2)


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="neither 'O' nor"):
        get_chunks(["B-PER", "PER"])
    with pytest.raises(ValueError, match="sentence 0: 2 gold tags but 1"):
        entity_scores([["O", "O"]], [["O"]])
    with pytest.raises(ValueError, match="1 gold sentences but 0"):
        entity_scores([["O"]], [])
