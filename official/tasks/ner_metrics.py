"""Entity-level precision, recall and F1 as CoNLL's `conlleval` script defines them.

A tag is "O" or PREFIX-TYPE (B-PER, I-LOC, ...). Tags group into chunks (entities); a predicted
chunk is correct only when a gold chunk has the same type, start and end. Over all sentences,

    precision = correct / predicted chunks,  recall = correct / gold chunks,
    F1 = 2PR / (P + R)    (each 0.0 when its denominator is 0)

micro-averaged (counted over every chunk, not averaged over types), and per type. Values are
fractions in [0, 1]; conlleval prints them as percentages.

Where chunks start and end is conlleval's rule, which reads both IOB1 (CoNLL-2003's files: I-X
starts a chunk, B-X only separates two adjacent X chunks) and IOB2/BIO (every chunk starts with
B-X), and tolerates the invalid sequences a model predicts:

- B-X always starts a chunk;
- I-X starts one after O, at a sentence start, or after a tag of another type (so "O I-PER" and
  "B-LOC I-PER" each contain a PER chunk starting at the I);
- a chunk ends before O, before B-, before a tag of another type, and at the sentence end.

The IOBES tags E-X (last token) and S-X (single token) are read too: S-X starts and ends a chunk,
E-X ends one, and an I-X or E-X right after E-X or S-X starts a new one. Mixing them with IOB1 is
not meaningful and is not checked.
"""

from __future__ import annotations

import collections
import dataclasses
from typing import NamedTuple, Sequence

# CoNLL-2003's tags, in Hugging Face conll2003's `ner_tags` order: the tag set run_ner trains
# (data_prep/conll.py) and the NER export serves by default. Here, with no TensorFlow, so the
# entry points name it in their flags before they load it.
CONLL2003_LABELS = ("O", "B-PER", "I-PER", "B-ORG", "I-ORG", "B-LOC", "I-LOC", "B-MISC",
                    "I-MISC")

# WikiANN's tags (PAN-X in XTREME: persons, organisations, locations, no MISC), in IOB2, in the
# order of Hugging Face `xtreme`'s and `wikiann`'s `ner_tags`: run_ner --data_format=panx, scored
# by entity F1 as CoNLL-2003 is.
PANX_LABELS = ("O", "B-PER", "I-PER", "B-ORG", "I-ORG", "B-LOC", "I-LOC")

# Universal Dependencies' 17 universal part-of-speech tags (universaldependencies.org/u/pos),
# alphabetically: the tag set of run_ner --data_format=conllu, whatever the language.
UPOS_LABELS = ("ADJ", "ADP", "ADV", "AUX", "CCONJ", "DET", "INTJ", "NOUN", "NUM", "PART",
               "PRON", "PROPN", "PUNCT", "SCONJ", "SYM", "VERB", "X")

_OUTSIDE = "O"
_PREFIXES = frozenset("BIES")


class Chunk(NamedTuple):
    """One entity: its type and token span [start, end) within its sentence."""
    type: str
    start: int
    end: int


def _split_tag(tag: str) -> tuple[str, str]:
    """"B-PER" -> ("B", "PER"); "O" -> ("O", "")."""
    if tag == _OUTSIDE:
        return _OUTSIDE, ""
    prefix, dash, entity_type = tag.partition("-")
    if prefix not in _PREFIXES or not dash or not entity_type:
        raise ValueError(f"tag {tag!r} is neither 'O' nor B-/I-/E-/S- followed by a type")
    return prefix, entity_type


def _starts_chunk(previous: tuple[str, str], current: tuple[str, str]) -> bool:
    """Whether the token tagged `current` begins a chunk, given the tag before it."""
    (previous_prefix, previous_type), (prefix, entity_type) = previous, current
    if prefix == _OUTSIDE:
        return False
    return (prefix in "BS" or previous_prefix in (_OUTSIDE, "E", "S")
            or previous_type != entity_type)


def _ends_chunk(previous: tuple[str, str], current: tuple[str, str]) -> bool:
    """Whether a chunk open at the token tagged `previous` ends before the one tagged `current`."""
    (previous_prefix, previous_type), (prefix, entity_type) = previous, current
    if previous_prefix == _OUTSIDE:
        return False
    return (previous_prefix in "ES" or prefix in (_OUTSIDE, "B", "S")
            or previous_type != entity_type)


def get_chunks(tags: Sequence[str]) -> list[Chunk]:
    """The chunks of one sentence's tags, in order.

    Example (IOB1: B- only where a chunk follows one of its own type):
        >>> get_chunks(["I-PER", "I-PER", "B-PER", "O", "I-LOC"])
        [Chunk(type='PER', start=0, end=2), Chunk(type='PER', start=2, end=3),
         Chunk(type='LOC', start=4, end=5)]
    """
    chunks: list[Chunk] = []
    previous = (_OUTSIDE, "")  # a sentence starts as if after O
    start = None
    for position, tag in enumerate(tags):
        current = _split_tag(tag)
        if start is not None and _ends_chunk(previous, current):
            chunks.append(Chunk(previous[1], start, position))
            start = None
        if _starts_chunk(previous, current):
            start = position
        previous = current
    if start is not None:
        chunks.append(Chunk(previous[1], start, len(tags)))
    return chunks


def iob1_to_iob2(tags: Sequence[str]) -> list[str]:
    """One sentence's IOB1 tags rewritten so that every chunk starts with B- (IOB2/BIO).

    An I-X that starts a chunk (after O, at the start, after another type) becomes B-X; B-X and
    every other tag are kept, so the chunks are unchanged:
    ["I-PER", "I-PER", "B-PER", "O", "I-LOC"] -> ["B-PER", "I-PER", "B-PER", "O", "B-LOC"].
    """
    converted = []
    previous = (_OUTSIDE, "")
    for tag in tags:
        current = _split_tag(tag)
        if current[0] == "I" and _starts_chunk(previous, current):
            tag = "B-" + current[1]
        converted.append(tag)
        previous = current
    return converted


@dataclasses.dataclass(frozen=True)
class ChunkCounts:
    """Chunk counts of one type (or of all) and the scores they give."""
    correct: int
    predicted: int
    support: int  # gold chunks

    @property
    def precision(self) -> float:
        return self.correct / self.predicted if self.predicted else 0.0

    @property
    def recall(self) -> float:
        return self.correct / self.support if self.support else 0.0

    @property
    def f1(self) -> float:
        precision, recall = self.precision, self.recall
        return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


@dataclasses.dataclass(frozen=True)
class EntityScores:
    """`overall`: micro-averaged over every chunk; `per_type`: each type gold or predicted."""
    overall: ChunkCounts
    per_type: dict[str, ChunkCounts]

    def as_dict(self) -> dict[str, float]:
        """Flat scores for logs and eval_results: precision, recall, f1, and TYPE_f1 etc."""
        flat = {"precision": self.overall.precision, "recall": self.overall.recall,
                "f1": self.overall.f1}
        for entity_type, counts in sorted(self.per_type.items()):
            flat.update({f"{entity_type}_precision": counts.precision,
                         f"{entity_type}_recall": counts.recall, f"{entity_type}_f1": counts.f1,
                         f"{entity_type}_support": counts.support})
        return flat


def entity_scores(gold_tags: Sequence[Sequence[str]],
                  predicted_tags: Sequence[Sequence[str]]) -> EntityScores:
    """conlleval's scores of predicted tag sequences against gold ones, one sequence a sentence.

    Chunks never cross sentences. Gold and predictions may use different schemes (IOB1 gold,
    IOB2 predictions): only the chunks are compared.
    """
    if len(gold_tags) != len(predicted_tags):
        raise ValueError(f"{len(gold_tags)} gold sentences but {len(predicted_tags)} predicted")
    correct: collections.Counter[str] = collections.Counter()
    predicted: collections.Counter[str] = collections.Counter()
    support: collections.Counter[str] = collections.Counter()
    for index, (gold, prediction) in enumerate(zip(gold_tags, predicted_tags)):
        if len(gold) != len(prediction):
            raise ValueError(f"sentence {index}: {len(gold)} gold tags but {len(prediction)} "
                             "predicted")
        gold_chunks, predicted_chunks = set(get_chunks(gold)), get_chunks(prediction)
        support.update(chunk.type for chunk in gold_chunks)
        predicted.update(chunk.type for chunk in predicted_chunks)
        correct.update(chunk.type for chunk in predicted_chunks if chunk in gold_chunks)
    per_type = {entity_type: ChunkCounts(correct[entity_type], predicted[entity_type],
                                         support[entity_type])
                for entity_type in sorted(support.keys() | predicted.keys())}
    overall = ChunkCounts(sum(correct.values()), sum(predicted.values()), sum(support.values()))
    return EntityScores(overall, per_type)
