"""official.tasks.squad_decoding against the original run_squad.py's write_predictions.

Both decode the same examples and features (made by data_prep.squad, which test_squad_data
checks against the original) from the same logits; the three JSON files must be the same bytes.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os

import numpy as np
import pytest
import tensorflow as tf

from data_prep import squad
from official.tasks import squad_decoding
from official.text.basic_tokenizer import BasicTokenizer
from tests.test_squad_data import (
    original_run_squad,
    our_features,
    write_dev_subset,
    write_hand_written,
)


@functools.cache
def _data(name: str, tmp_dir: str) -> tuple[list, list]:
    """(examples, features) for prediction: "v1" / "v2" hand-written, or "dev" (30 questions)."""
    path = os.path.join(tmp_dir, f"{name}.json")
    if name == "dev":
        write_dev_subset(path)
    else:
        write_hand_written(path, version_2=name == "v2")
    examples = squad.read_squad_examples(path, is_training=False,
                                         version_2_with_negative=name == "v2")
    return examples, our_features(examples, is_training=False)


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    tmp_dir = str(tmp_path_factory.mktemp("squad"))
    return lambda name: _data(name, tmp_dir)


def random_results(features: list, seed: int, decimals: int | None = None,
                   context_bonus: float = 0.0) -> list:
    """float32 logits as a model gives them; rounded, many scores tie; `context_bonus` added on
    the context tokens makes valid answers likelier."""
    rng = np.random.default_rng(seed)
    results = []
    for feature in features:
        logits = rng.normal(0.0, 3.0, size=(2, len(feature.input_ids))).astype(np.float32)
        logits[:, list(feature.token_to_orig_map)] += np.float32(context_bonus)
        if decimals is not None:
            logits = np.round(logits, decimals)
        results.append(squad_decoding.RawResult(feature.unique_id, logits[0], logits[1]))
    return results


def decode_both(tmp_path, examples, features, results, *, n_best_size=20, max_answer_length=30,
                version_2=False, threshold=0.0) -> dict[str, str]:
    """Runs both decoders; asserts their files are identical; returns ours {name: text}."""
    original = original_run_squad()
    original.FLAGS.version_2_with_negative = version_2
    original.FLAGS.null_score_diff_threshold = threshold
    expected_dir, our_dir = tmp_path / "original", tmp_path / "ours"
    expected_dir.mkdir()
    # As the original's main() hands them over: Python floats of the float32 logits.
    original_results = [original.RawResult(r.unique_id, [float(x) for x in r.start_logits],
                                           [float(x) for x in r.end_logits]) for r in results]
    names = ["predictions.json", "nbest_predictions.json", "null_odds.json"]
    original.write_predictions(examples, features, original_results, n_best_size,
                               max_answer_length, True, *(str(expected_dir / n) for n in names))

    predictions = squad_decoding.decode_predictions(
        examples, features, results, n_best_size=n_best_size,
        max_answer_length=max_answer_length, do_lower_case=True,
        version_2_with_negative=version_2, null_score_diff_threshold=threshold)
    paths = squad_decoding.write_prediction_files(predictions, str(our_dir))
    assert sorted(os.listdir(our_dir)) == sorted(os.listdir(expected_dir))  # no null_odds in 1.1
    ours = {}
    for path in paths:
        name = os.path.basename(path)
        with open(path) as f, open(expected_dir / name) as g:
            ours[name] = f.read()
            assert ours[name] == g.read(), name
    return ours


@pytest.mark.parametrize("name, seed, n_best_size, max_answer_length, decimals", [
    ("dev", 0, 20, 30, None),
    ("v1", 1, 20, 30, None),
    ("v1", 2, 3, 5, 0),  # few candidates; rounded logits: ties everywhere
    ("v1", 3, 1, 2, None),  # one start and one end per window: often none valid, "empty"
])
def test_squad_1_predictions_are_the_originals(tmp_path, data, name, seed, n_best_size,
                                               max_answer_length, decimals):
    examples, features = data(name)
    files = decode_both(tmp_path, examples, features, random_results(features, seed, decimals),
                        n_best_size=n_best_size, max_answer_length=max_answer_length)
    predictions = json.loads(files["predictions.json"])
    assert list(predictions) == [e.qas_id for e in examples]
    nbest = json.loads(files["nbest_predictions.json"])
    assert all(1 <= len(entries) <= n_best_size for entries in nbest.values())
    if n_best_size == 1:
        assert "empty" in predictions.values()


@pytest.mark.parametrize("quantile", [0.2, 0.5, 0.8])
def test_squad_2_predictions_and_null_odds_are_the_originals(tmp_path, data, quantile):
    examples, features = data("v2")
    # Without the bonus the short paragraph's question may get no valid answer in any window:
    # the original then fails (see test_squad_2_without_any_valid_answer_gets_the_empty_nonce).
    results = random_results(features, 4, context_bonus=3.0)
    # The null odds do not depend on the threshold: pick thresholds that split the questions.
    null_odds = squad_decoding.decode_predictions(
        examples, features, results, n_best_size=20, max_answer_length=30, do_lower_case=True,
        version_2_with_negative=True).null_odds
    threshold = float(np.quantile(list(null_odds.values()), quantile))
    files = decode_both(tmp_path, examples, features, results, version_2=True, threshold=threshold)
    predictions = json.loads(files["predictions.json"])
    no_answer = {qid for qid, text in predictions.items() if text == ""}
    assert no_answer == {qid for qid, diff in null_odds.items() if diff > threshold}
    assert 0 < len(no_answer) < len(predictions)
    assert all(any(e["text"] == "" for e in entries)
               for entries in json.loads(files["nbest_predictions.json"]).values())


def test_the_max_context_window_decides(tmp_path, data):
    """A token in two windows counts only from the window where it has the most context."""
    examples, features = data("v1")
    first, second = features[0], features[1]
    assert first.example_index == second.example_index == 0
    # The last context token of the first window is in the second too, nearer its middle.
    position = max(first.token_to_orig_map)
    word = first.token_to_orig_map[position]
    assert not first.token_is_max_context[position]
    position_2 = next(p for p, w in second.token_to_orig_map.items()
                      if w == word and second.token_is_max_context[p])
    results = []
    for feature in features:
        logits = np.full((2, len(feature.input_ids)), -10.0, np.float32)
        if feature is first:
            logits[:, position] = 5.0
        if feature is second:
            logits[:, position_2] = 1.0
        results.append(squad_decoding.RawResult(feature.unique_id, logits[0], logits[1]))
    files = decode_both(tmp_path, examples, features, results)
    best = json.loads(files["nbest_predictions.json"])[examples[0].qas_id][0]
    assert (best["start_logit"], best["end_logit"]) == (1.0, 1.0)
    assert best["text"] in examples[0].doc_tokens[word]  # the word less its punctuation


def test_squad_2_without_any_valid_answer_gets_the_empty_nonce(tmp_path, data):
    """Where the original fails (no non-null answer to compare the null score with)."""
    examples, features = data("v2")
    examples, features = examples[:1], [f for f in features if f.example_index == 0]
    results = []
    for i, feature in enumerate(features):
        logits = np.zeros((2, len(feature.input_ids)), np.float32)
        logits[:, 0] = i - 1.0  # the null score is lowest (-2) in the first window
        logits[0, 1] = 9.0  # the best start is in the question: no valid answer
        results.append(squad_decoding.RawResult(feature.unique_id, logits[0], logits[1]))
    original = original_run_squad()
    original.FLAGS.version_2_with_negative = True
    with pytest.raises(AttributeError, match="'NoneType' object has no attribute 'start_logit'"):
        original.write_predictions(
            examples, features, [original.RawResult(r.unique_id, r.start_logits.tolist(),
                                                    r.end_logits.tolist()) for r in results],
            1, 30, True, *(str(tmp_path / name) for name in "abc"))
    output = squad_decoding.decode_predictions(
        examples, features, results, n_best_size=1, max_answer_length=30, do_lower_case=True,
        version_2_with_negative=True)
    qas_id = examples[0].qas_id
    assert [(e["text"], e["start_logit"]) for e in output.nbest[qas_id]] == [("", -1.0),
                                                                            ("empty", 0.0)]
    assert output.null_odds[qas_id] == -2.0
    assert output.predictions[qas_id] == "empty"


@pytest.mark.parametrize("pred_text, orig_text, do_lower_case, expected", [
    ("steve smith", "Steve Smith's", True, "Steve Smith"),  # the original's example
    ("1895", "(1895-1943).", True, "1895"),
    ("cafe muller", "Café Müller,", True, "Café Müller"),
    ("Café", "\"Café\"", False, "Café"),
    ("cafe", "Cafe\u0301's", True, "Cafe\u0301's"),  # NFD accent: lengths differ, all returned
    ("zurich", "Berlin", True, "Berlin"),  # not found: all returned
])
def test_get_final_text_is_the_originals(pred_text, orig_text, do_lower_case, expected):
    basic = BasicTokenizer(lower_case=do_lower_case).tokenize(tf.constant([orig_text]))
    basic_text = " ".join(t.decode() for t in basic.to_list()[0])
    assert squad_decoding.get_final_text(pred_text, orig_text, basic_text) == expected
    assert original_run_squad().get_final_text(pred_text, orig_text, do_lower_case) == expected


def test_best_indexes_and_softmax_are_the_originals():
    original = original_run_squad()
    rng = np.random.default_rng(5)
    for _ in range(20):
        logits = np.round(rng.normal(size=40), 1).tolist()  # with ties
        for n in (1, 5, 40, 50):
            assert squad_decoding._get_best_indexes(logits, n) == original._get_best_indexes(
                logits, n)
        assert squad_decoding._compute_softmax(logits) == original._compute_softmax(logits)


def test_a_feature_without_result_is_an_error(data):
    examples, features = data("v1")
    results = random_results(features, 6)[1:]
    with pytest.raises(ValueError, match=f"no result for the feature with unique_id "
                                         f"{features[0].unique_id} \\(question a0q0\\)"):
        squad_decoding.decode_predictions(examples, features, results, n_best_size=20,
                                          max_answer_length=30, do_lower_case=True)


def test_decoding_takes_any_objects_with_the_fields(data):
    """official/ does not import data_prep: plain objects with the same fields do as well."""
    examples, features = data("v1")
    results = random_results(features, 7)
    expected = squad_decoding.decode_predictions(examples, features, results, n_best_size=5,
                                                 max_answer_length=10, do_lower_case=True)

    @dataclasses.dataclass
    class Example:
        qas_id: str
        doc_tokens: list[str]

    @dataclasses.dataclass
    class Window:
        unique_id: int
        example_index: int
        tokens: list[str]
        token_to_orig_map: dict[int, int]
        token_is_max_context: dict[int, bool]

    plain_examples = [Example(e.qas_id, list(e.doc_tokens)) for e in examples]
    windows = [Window(f.unique_id, f.example_index, f.tokens, f.token_to_orig_map,
                      f.token_is_max_context) for f in features]
    assert squad_decoding.decode_predictions(plain_examples, windows, results, n_best_size=5,
                                             max_answer_length=10,
                                             do_lower_case=True) == expected
