"""SQuAD predictions from start/end logits: the original run_squad.py's `write_predictions`.

For each question, over all windows (features) of its context:

 1. candidates: the `n_best_size` best start and best end positions of each window, every pair
    kept that lies in the window's context part, ends at or after it starts, is at most
    `max_answer_length` tokens long, and starts at a token for which this window is the
    "max context" one (`official.features.doc_windows.max_context`); scored start + end logit;
 2. SQuAD 2.0: the "no answer" candidate, [CLS] to [CLS], scored with the lowest
    start[0] + end[0] over the windows;
 3. best first, each candidate's text is recovered from the context (`get_final_text`);
    duplicates are dropped until `n_best_size` are left; softmax over their scores;
 4. the prediction: the best text (SQuAD 1.1); for 2.0, "" when the no-answer score beats the
    best non-empty answer's by more than `null_score_diff_threshold`, else that answer.

Every tie is broken as the original breaks it, and scores are summed in the same float64
arithmetic, so `write_prediction_files` writes the original's predictions.json,
nbest_predictions.json and null_odds.json byte for byte.

This module takes plain inputs, not `data_prep.squad`'s classes (the library does not import
data_prep), though those classes have what it needs: see `SquadExampleLike` and
`SquadFeatureLike`.

Example (one question, one window of its context "The Broncos won.", logits favouring
"broncos"; an answer's text is cut from the context's words as written, case and all, "won"
from "won."):
    >>> import os, shutil, tempfile
    >>> from types import SimpleNamespace
    >>> example = SimpleNamespace(qas_id="q1", doc_tokens=["The", "Broncos", "won."])
    >>> feature = SimpleNamespace(
    ...     unique_id=1000000000, example_index=0,
    ...     tokens=["[CLS]", "who", "won", "?", "[SEP]", "the", "broncos", "won", ".", "[SEP]"],
    ...     token_to_orig_map={5: 0, 6: 1, 7: 2, 8: 2},
    ...     token_is_max_context={5: True, 6: True, 7: True, 8: True})
    >>> start_logits = [0.0, 0, 0, 0, 0, 1, 5, 0, 0, 0]
    >>> end_logits = [0.0, 0, 0, 0, 0, 0, 4, 2, 1, 0]
    >>> predictions = decode_predictions(
    ...     [example], [feature], [RawResult(1000000000, start_logits, end_logits)],
    ...     n_best_size=20, max_answer_length=30, do_lower_case=True)
    >>> predictions.predictions
    {'q1': 'Broncos'}
    >>> [(e["text"], round(e["probability"], 3)) for e in predictions.nbest["q1"][:3]]
    [('Broncos', 0.827), ('Broncos won', 0.112), ('Broncos won.', 0.041)]
    >>> folder = tempfile.mkdtemp()
    >>> [os.path.basename(path) for path in write_prediction_files(predictions, folder)]
    ['predictions.json', 'nbest_predictions.json']
    >>> shutil.rmtree(folder)
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from typing import Protocol, Sequence

import numpy as np
import tensorflow as tf

from official.atomic_files import open_atomically
from official.text.basic_tokenizer import BasicTokenizer

# Words per BasicTokenizer call when recovering texts.
_WORDS_PER_CALL = 50000


class SquadExampleLike(Protocol):
    """A question: its id and its context's whitespace-separated words."""
    qas_id: str
    doc_tokens: list[str]


class SquadFeatureLike(Protocol):
    """A window of a question's context, with its tokens' ties to the context's words."""
    unique_id: int
    example_index: int  # the question's index in the examples
    tokens: list[str]  # [CLS] question [SEP] window [SEP]
    token_to_orig_map: dict[int, int]  # position in tokens -> word index, window tokens only
    token_is_max_context: dict[int, bool]  # position in tokens -> this window is its best


@dataclasses.dataclass
class RawResult:
    """The model's logits for one feature, [max_seq_length] each."""
    unique_id: int
    start_logits: Sequence[float]
    end_logits: Sequence[float]


@dataclasses.dataclass
class SquadPredictions:
    """What the original writes, by question id in example order.

    predictions: the answer text ("" for "no answer", SQuAD 2.0).
    nbest: up to n_best_size (+1 for "" in 2.0) {"text", "probability", "start_logit",
      "end_logit"}, best first.
    null_odds: SQuAD 2.0 only: the no-answer score minus the best non-empty answer's.
    """
    predictions: dict[str, str]
    nbest: dict[str, list[dict[str, str | float]]]
    null_odds: dict[str, float] | None


@dataclasses.dataclass(frozen=True)
class _Candidate:
    feature_index: int
    start_index: int
    end_index: int
    start_logit: float
    end_logit: float


@dataclasses.dataclass(frozen=True)
class _NbestEntry:
    text: str
    start_logit: float
    end_logit: float


def decode_predictions(examples: Sequence[SquadExampleLike],
                       features: Sequence[SquadFeatureLike], results: Sequence[RawResult], *,
                       n_best_size: int, max_answer_length: int, do_lower_case: bool,
                       version_2_with_negative: bool = False,
                       null_score_diff_threshold: float = 0.0) -> SquadPredictions:
    """The original's predictions for `examples` from the logits of all their `features`.

    `do_lower_case` must be the tokenizer's: text recovery re-tokenizes the context with it.

    One difference: in SQuAD 2.0, when no candidate passes the filters, the original fails
    (it has no non-empty answer to score the null against); here, as it does in 1.1 when it
    has no candidate at all, an "empty" answer with logits 0 is added to the n-best.

    Raises:
      ValueError: a feature has no result.
    """
    by_unique_id = {result.unique_id: result for result in results}
    example_features: list[list[tuple[SquadFeatureLike, RawResult]]] = [[] for _ in examples]
    for feature in features:
        result = by_unique_id.get(feature.unique_id)
        if result is None:
            raise ValueError(f"no result for the feature with unique_id {feature.unique_id} "
                             f"(question {examples[feature.example_index].qas_id})")
        example_features[feature.example_index].append((feature, result))
    basic_words = _basic_tokenize_words(examples, do_lower_case)

    output = SquadPredictions({}, {}, {} if version_2_with_negative else None)
    for example, windows in zip(examples, example_features):
        nbest, score_null = _nbest(example, windows, basic_words, n_best_size, max_answer_length,
                                   version_2_with_negative)
        probabilities = _compute_softmax([e.start_logit + e.end_logit for e in nbest])
        output.nbest[example.qas_id] = [
            {"text": e.text, "probability": p, "start_logit": e.start_logit,
             "end_logit": e.end_logit} for e, p in zip(nbest, probabilities)]
        if not version_2_with_negative:
            output.predictions[example.qas_id] = nbest[0].text
        else:
            best_non_null = next(e for e in nbest if e.text)
            score_diff = score_null - best_non_null.start_logit - best_non_null.end_logit
            output.null_odds[example.qas_id] = score_diff
            output.predictions[example.qas_id] = (
                "" if score_diff > null_score_diff_threshold else best_non_null.text)
    return output


def _nbest(example: SquadExampleLike, windows: list[tuple[SquadFeatureLike, RawResult]],
           basic_words: dict[str, list[str]], n_best_size: int, max_answer_length: int,
           version_2_with_negative: bool) -> tuple[list[_NbestEntry], float]:
    """One question's n-best answers, best first, and its no-answer score (2.0)."""
    candidates = []
    score_null = 1000000.0  # large and positive: any window's null score is lower
    null_feature_index, null_start_logit, null_end_logit = 0, 0.0, 0.0
    for feature_index, (feature, result) in enumerate(windows):
        # float32 logits become the float64 values the original's float(x) gives.
        start_logits = np.asarray(result.start_logits, np.float64).tolist()
        end_logits = np.asarray(result.end_logits, np.float64).tolist()
        if version_2_with_negative:
            feature_null_score = start_logits[0] + end_logits[0]
            if feature_null_score < score_null:
                score_null = feature_null_score
                null_feature_index = feature_index
                null_start_logit, null_end_logit = start_logits[0], end_logits[0]
        ends = _get_best_indexes(end_logits, n_best_size)
        for start in _get_best_indexes(start_logits, n_best_size):
            for end in ends:
                # Drop pairs that cannot be answers: outside the window's context tokens (in
                # the question, on [SEP] or padding), backwards, too long, or starting where
                # another window sees more context.
                if (start >= len(feature.tokens) or end >= len(feature.tokens)
                        or start not in feature.token_to_orig_map
                        or end not in feature.token_to_orig_map
                        or not feature.token_is_max_context.get(start, False)
                        or end < start or end - start + 1 > max_answer_length):
                    continue
                candidates.append(_Candidate(feature_index, start, end, start_logits[start],
                                             end_logits[end]))
    if version_2_with_negative:
        candidates.append(_Candidate(null_feature_index, 0, 0, null_start_logit,
                                     null_end_logit))
    # Stable: equal scores keep the order above (window, best start, best end; null last).
    candidates.sort(key=lambda c: c.start_logit + c.end_logit, reverse=True)

    nbest: list[_NbestEntry] = []
    seen: set[str] = set()
    for candidate in candidates:
        if len(nbest) >= n_best_size:
            break
        if candidate.start_index > 0:
            feature = windows[candidate.feature_index][0]
            text = _recover_text(example, feature, candidate, basic_words)
            if text in seen:
                continue
        else:
            text = ""
        seen.add(text)
        nbest.append(_NbestEntry(text, candidate.start_logit, candidate.end_logit))
    if version_2_with_negative and "" not in seen:
        nbest.append(_NbestEntry("", null_start_logit, null_end_logit))
    # In very rare cases no candidate survives the filters: a nonce answer, as the original's.
    if not any(entry.text for entry in nbest):
        nbest.append(_NbestEntry("empty", 0.0, 0.0))
    return nbest, score_null


def _recover_text(example: SquadExampleLike, feature: SquadFeatureLike, candidate: _Candidate,
                  basic_words: dict[str, list[str]]) -> str:
    """A candidate's WordPiece span -> the text of the context it stands for."""
    pieces = " ".join(feature.tokens[candidate.start_index:candidate.end_index + 1])
    pred_text = " ".join(pieces.replace(" ##", "").replace("##", "").split())
    words = example.doc_tokens[feature.token_to_orig_map[candidate.start_index]:
                               feature.token_to_orig_map[candidate.end_index] + 1]
    basic_text = " ".join(token for word in words for token in basic_words[word])
    return get_final_text(pred_text, " ".join(words), basic_text)


def _basic_tokenize_words(examples: Sequence[SquadExampleLike],
                          do_lower_case: bool) -> dict[str, list[str]]:
    """Every context word -> its BasicTokenizer tokens, in few op calls.

    The original basic-tokenizes each candidate's words joined with spaces; as spaces only
    separate, that is the concatenation of the words' own tokens.
    """
    seen_docs: set[int] = set()
    words: dict[str, None] = {}  # ordered set
    for example in examples:
        if id(example.doc_tokens) not in seen_docs:
            seen_docs.add(id(example.doc_tokens))
            words.update(dict.fromkeys(example.doc_tokens))
    unique = list(words)
    tokenizer = BasicTokenizer(lower_case=do_lower_case)
    tokens = {}
    for start in range(0, len(unique), _WORDS_PER_CALL):
        batch = unique[start:start + _WORDS_PER_CALL]
        split = tokenizer.tokenize(tf.constant([w.encode("utf-8") for w in batch])).to_list()
        tokens.update((w, [t.decode("utf-8") for t in ts]) for w, ts in zip(batch, split))
    return tokens


def get_final_text(pred_text: str, orig_text: str, basic_text: str) -> str:
    """Projects a predicted text back onto the original text it came from.

    `pred_text` is the predicted WordPieces joined back into words; `orig_text` the context
    words they came from, joined with spaces; `basic_text` is `orig_text` through the
    BasicTokenizer (of the model's casing), its tokens joined with spaces. (The original's
    `get_final_text` takes do_lower_case and tokenizes orig_text itself.)

    The original's explanation: when we created the data, we kept track of the alignment
    between original (whitespace tokenized) tokens and our WordPiece tokenized tokens. So now
    `orig_text` contains the span of our original text corresponding to the span that we
    predicted. However, `orig_text` may contain extra characters that we don't want in our
    prediction. For example, let's say:

        pred_text = steve smith
        orig_text = Steve Smith's

    We don't want to return `orig_text` because it contains the extra "'s". We don't want to
    return `pred_text` because it's already been normalized (the SQuAD eval script also does
    punctuation stripping/lower casing but our tokenizer does additional normalization like
    stripping accent characters). What we really want to return is "Steve Smith".

    So `pred_text` is found in `basic_text`; if the two texts are the same length without
    their spaces, their characters are taken as aligned one to one, and the found characters'
    span is cut from `orig_text`. When any step fails (not found, lengths differ, e.g. after a
    character that lower-casing or accent stripping changed in length), `orig_text` is
    returned whole.
    """
    start = basic_text.find(pred_text)
    if start == -1:
        return orig_text
    end = start + len(pred_text) - 1
    orig_chars, orig_char_positions = _strip_spaces(orig_text)
    basic_chars, basic_char_positions = _strip_spaces(basic_text)
    if len(orig_chars) != len(basic_chars):
        return orig_text
    # Position in basic_text -> index among its non-space characters -> position in orig_text.
    basic_position_to_char = {position: i for i, position in enumerate(basic_char_positions)}
    orig_start = basic_position_to_char.get(start)
    orig_end = basic_position_to_char.get(end)
    if orig_start is None or orig_end is None:
        return orig_text
    return orig_text[orig_char_positions[orig_start]:orig_char_positions[orig_end] + 1]


def _strip_spaces(text: str) -> tuple[str, list[int]]:
    """`text` without " ", and the position in `text` of each character kept."""
    positions = [i for i, char in enumerate(text) if char != " "]
    return "".join(text[i] for i in positions), positions


def _get_best_indexes(logits: Sequence[float], n_best_size: int) -> list[int]:
    """The indexes of the `n_best_size` largest logits, largest first; ties: lower index first."""
    return sorted(range(len(logits)), key=lambda i: logits[i], reverse=True)[:n_best_size]


def _compute_softmax(scores: list[float]) -> list[float]:
    """Softmax in the original's order of operations, so the probabilities are its floats."""
    if not scores:
        return []
    max_score = max(scores)
    exp_scores = [math.exp(score - max_score) for score in scores]
    total = 0.0
    for x in exp_scores:
        total += x
    return [x / total for x in exp_scores]


def write_prediction_files(predictions: SquadPredictions, output_dir: str) -> list[str]:
    """Writes predictions.json, nbest_predictions.json and (SQuAD 2.0) null_odds.json to
    `output_dir`, as the original formats them (4-space indented JSON, a final newline); each
    file appears only once complete. Returns their paths."""
    contents = {"predictions.json": predictions.predictions,
                "nbest_predictions.json": predictions.nbest}
    if predictions.null_odds is not None:
        contents["null_odds.json"] = predictions.null_odds
    paths = []
    for name, value in contents.items():
        path = os.path.join(output_dir, name)
        with open_atomically(path) as f:
            f.write(json.dumps(value, indent=4) + "\n")
        paths.append(path)
    return paths
