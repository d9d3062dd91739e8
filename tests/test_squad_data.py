"""data_prep.squad against google-research/bert's run_squad.py, field by field.

The original module imports `bert.modeling`, which needs tf.contrib, and defines ~30 flags, some
of which (vocab_file, max_seq_length, ...) bert.create_pretraining_data, imported by other
tests, defines too. `tests.reference_bert.import_original_script` therefore imports it with a
stub `bert.modeling` (the functions compared here never touch it) and with its flags on a private
FlagValues, set per call (`FLAGS.version_2_with_negative`, read inside read_squad_examples and
write_predictions).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import logging
import os
import types

import pytest
import tensorflow as tf

from data_prep import squad
from official.text.tokenizer import FullTokenizer
from tests.reference_bert import import_original, import_original_script

HERE = os.path.dirname(__file__)
VOCAB = os.path.join(HERE, "..", "data", "vocab", "uncased_vocab.txt")
# The first 55 questions of the real SQuAD v1.1 dev set (data/squad/README.md).
DEV = os.path.join(HERE, "..", "data", "squad", "dev-v1.1-sample.json")
# Small windows, so that the contexts below make several each.
SEQ, STRIDE, QUERY = 64, 16, 16


@functools.cache
def original_run_squad() -> types.ModuleType:
    """google-research/bert's run_squad module, imported once."""
    return import_original_script("bert.run_squad")


@functools.cache
def tokenizers() -> tuple[FullTokenizer, object]:
    """(ours, the original's) on the uncased vocab."""
    original = import_original("bert.tokenization").FullTokenizer(VOCAB, do_lower_case=True)
    return FullTokenizer(VOCAB, do_lower_case=True), original


# Contexts long enough for several 64-token windows, with what the reader and the WordPiece
# alignment must get right: punctuation glued to words, accents, tabs / newlines / double spaces,
# U+202F (a separator for the original) and U+00A0 (not one), a zero-width space (a word with no
# WordPieces), CJK, and an answer ("Japan") that is only part of a word.
CONTEXTS = [
    "The leader was John Smith (1895-1943). Steve Smith's house, built in 1901 for $1,000, "
    "stood near the Café Müller in Zürich;  its architect,\tØrsted-Hansen, called it "
    "\"a home for everyone\"... The Japanese electronics industry is the largest in the world."
    "\nIn 2003\u202fthe U.S. firm (Acme, Inc.) bought it for \u20ac2.5\u00a0million — after "
    "years of talks in 東京 and São Paulo. \u200b Critics said: \"It's over-priced!\" Others "
    "(e.g. naïve investors) disagreed; the deal closed on 12/31/2003 at 11:59 p.m. sharp. "
    "Later, the house became a museum of élan, art-déco furniture and pre-1900 clocks.",
    "Rivers: the Rhône, the Rhine and the Danube flow through Europe. The Danube, at "
    "2,850 km, is the second-longest river in Europe after the Volga; it passes through "
    "ten countries — more than any other river in the world. Its delta (Romania/Ukraine) is a "
    "UNESCO World Heritage Site since 1991. Boats carry 'grain', 'coal' & 'steel' upstream, "
    "while tourists prefer the Wachau valley's vineyards near Dürnstein and the Cafe\u0301 "
    "Sacher (an accent decomposed: text recovery cannot align it, and falls back).",
]


def _answer(context: str, text: str) -> dict:
    return {"text": text, "answer_start": context.index(text)}


def _qas(context: str, article: int, with_impossible: bool) -> list[dict]:
    """Hand-picked answers, then every 4th word as a 1-3 word answer (so some sit at windows'
    edges), then (for SQuAD 2.0) unanswerable questions."""
    picked = {0: ["1895", "Steve Smith", "$1,000", "Café Müller", "Japan", "Ørsted-Hansen",
                  "\"a home for everyone\"", "U.S. firm (Acme, Inc.)", "東京", "São Paulo",
                  "It's over-priced!", "11:59 p.m.", "élan, art-déco"],
              1: ["Rhône", "2,850 km", "Volga", "Romania/Ukraine", "'grain', 'coal' & 'steel'",
                  "Dürnstein", "Cafe\u0301 Sacher"]}[article]
    answers = [_answer(context, text) for text in picked]
    words = context.split(" ")
    for i in range(0, len(words), 4):
        text = " ".join(words[i:i + 1 + i % 3]).strip()
        if text:
            # Where this word starts (leading tabs or newlines are not part of the answer).
            start = len(" ".join(words[:i])) + (i > 0)
            answers.append({"text": text, "answer_start": context.index(text, start)})
    qas = [{"id": f"a{article}q{i}", "question": f"Which part is number {i} (of {article})?",
            "answers": [answer]} for i, answer in enumerate(answers)]
    if with_impossible:
        for i in range(3):
            qas.append({"id": f"a{article}none{i}", "question": "Who bought the moon in 1901?",
                        "answers": [], "is_impossible": True,
                        "plausible_answers": [_answer(context, "the")] if i == 0 else []})
        for qa in qas:
            qa.setdefault("is_impossible", False)
    return qas


def write_hand_written(path: str, version_2: bool) -> str:
    data = {"version": "2.0" if version_2 else "1.1", "data": [
        {"title": f"T{i}", "paragraphs": [
            {"context": context, "qas": _qas(context, i, version_2)},
            # A short paragraph too: one window.
            {"context": "Short: the end.", "qas": [
                {"id": f"short{i}", "question": "How does it end?",
                 "answers": [_answer("Short: the end.", "end")], "is_impossible": False}]}]}
        for i, context in enumerate(CONTEXTS)]}
    with open(path, "w", encoding="utf-8") as f:
        json.dump(data, f, ensure_ascii=False)
    return path


def write_dev_subset(path: str, num_questions: int = 30, first_answer_only: bool = False) -> str:
    """The first questions of the real SQuAD v1.1 dev set (the shipped sample);
    `first_answer_only` makes a training file."""
    with open(DEV, encoding="utf-8") as f:
        article = json.load(f)["data"][0]
    paragraphs, left = [], num_questions
    for paragraph in article["paragraphs"]:
        qas = paragraph["qas"][:left]
        if first_answer_only:
            qas = [dict(qa, answers=qa["answers"][:1]) for qa in qas]
        paragraphs.append({"context": paragraph["context"], "qas": qas})
        left -= len(qas)
        if not left:
            break
    if left:
        raise ValueError(f"{DEV} has fewer than {num_questions} questions in its first article")
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"version": "1.1", "data": [{"title": article["title"],
                                                "paragraphs": paragraphs}]}, f)
    return path


def original_examples(path: str, is_training: bool, version_2: bool) -> list:
    original = original_run_squad()
    original.FLAGS.version_2_with_negative = version_2
    return original.read_squad_examples(path, is_training=is_training)


def original_features(examples: list, is_training: bool) -> list:
    features = []
    original_run_squad().convert_examples_to_features(
        examples, tokenizers()[1], SEQ, STRIDE, QUERY, is_training, output_fn=features.append)
    return features


def our_features(examples: list, is_training: bool) -> list[squad.InputFeatures]:
    return list(squad.convert_examples_to_features(examples, tokenizers()[0], SEQ, STRIDE, QUERY,
                                                   is_training))


CASES = [  # (file maker, is_training, version_2_with_negative)
    pytest.param(lambda p: write_hand_written(p, False), False, False, id="v1-eval"),
    pytest.param(lambda p: write_hand_written(p, False), True, False, id="v1-train"),
    pytest.param(lambda p: write_hand_written(p, True), False, True, id="v2-eval"),
    pytest.param(lambda p: write_hand_written(p, True), True, True, id="v2-train"),
    pytest.param(write_dev_subset, False, False, id="dev-eval"),
    pytest.param(lambda p: write_dev_subset(p, first_answer_only=True), True, False,
                 id="dev-train"),
]


@pytest.mark.parametrize("make_file, is_training, version_2", CASES)
def test_examples_features_and_records_match_the_original(tmp_path, make_file, is_training,
                                                          version_2):
    path = make_file(str(tmp_path / "squad.json"))
    expected_examples = original_examples(path, is_training, version_2)
    examples = squad.read_squad_examples(path, is_training, version_2)
    assert [dataclasses.asdict(e) for e in examples] == [vars(e) for e in expected_examples]

    expected = original_features(expected_examples, is_training)
    features = our_features(examples, is_training)
    assert len(features) > len(examples)  # several windows per long context
    for ours, theirs in zip(features, expected):
        assert dataclasses.asdict(ours) == vars(theirs)
    assert len(features) == len(expected)
    if is_training:  # answers in some windows and not in others
        starts = {f.start_position for f in features}
        assert 0 in starts and len(starts) > 2

    writer = original_run_squad().FeatureWriter(str(tmp_path / "original.tf_record"), is_training)
    for feature in expected:
        writer.process_feature(feature)
    writer.close()
    output = str(tmp_path / "ours.tf_record")
    assert squad.write_features(features, output, is_training) == len(features)
    assert _records(output) == _records(writer.filename)
    parsed = next(iter(tf.data.TFRecordDataset(output).map(
        lambda r: tf.io.parse_single_example(r, squad.parse_spec(SEQ, is_training)))))
    assert parsed["unique_ids"].numpy() == squad.FIRST_UNIQUE_ID
    assert parsed["input_ids"].numpy().tolist() == features[0].input_ids


def _records(path: str) -> list[tf.train.Example]:
    return [tf.train.Example.FromString(r.numpy()) for r in tf.data.TFRecordDataset(path)]


def test_the_hand_written_answers_are_where_the_docstrings_say(tmp_path):
    path = write_hand_written(str(tmp_path / "v1.json"), version_2=False)
    examples = {e.qas_id: e for e in squad.read_squad_examples(path, True)}
    features = our_features(list(examples.values()), is_training=True)
    answers = {}
    for feature in features:
        if feature.start_position:
            qas_id = list(examples)[feature.example_index]
            answers.setdefault(qas_id, " ".join(
                feature.tokens[feature.start_position:feature.end_position + 1]))
    assert answers["a0q0"] == "1895"  # from the word "(1895-1943)."
    assert answers["a0q4"] == "japanese"  # "Japan" is no WordPiece of "Japanese"
    assert examples["a0q4"].doc_tokens[examples["a0q4"].start_position] == "Japanese"
    assert answers["a0q9"] == "sao paulo"  # accents stripped: uncased


def test_split_context_keeps_the_originals_separators():
    words, offsets = squad.split_context(" a\u202fb\u00a0c\t d")
    assert words == ["a", "b\u00a0c", "d"]
    assert offsets == [-1, 0, 0, 1, 1, 1, 1, 1, 2]


def test_improve_answer_span_matches_the_original():
    ours, theirs = tokenizers()
    doc = ours.tokenize("The leader was John Smith (1895-1943). The Japanese re-re-read (1-1)")
    assert squad._improve_answer_span(doc, 13, 17, ["re"]) == (13, 13)  # the leftmost match
    for answer in ["1895", "Japan", "smith (1895", "-", "re", "1", "\u200b"]:
        for start in range(len(doc)):
            for end in range(start, min(start + 8, len(doc))):
                assert squad._improve_answer_span(doc, start, end, ours.tokenize(answer)) == \
                    original_run_squad()._improve_answer_span(doc, start, end, theirs, answer)


def test_an_answer_not_at_its_answer_start_is_skipped_as_by_the_original(tmp_path, caplog):
    context = "The Danube flows east."
    qas = [{"id": "good", "question": "Which?", "answers": [_answer(context, "Danube")]},
           {"id": "bad", "question": "Which?", "answers": [{"text": "Rhine",
                                                             "answer_start": 4}]}]
    path = str(tmp_path / "train-v1.1.json")
    with open(path, "w") as f:
        json.dump({"data": [{"paragraphs": [{"context": context, "qas": qas}]}]}, f)
    with caplog.at_level(logging.WARNING):
        examples = squad.read_squad_examples(path, is_training=True)
    assert [e.qas_id for e in examples] == ["good"]
    assert [e.qas_id for e in original_examples(path, True, False)] == ["good"]
    assert f"{path}: question bad: answer 'Rhine' is not at answer_start 4" in caplog.text
    assert "skipped 1 of 2 questions" in caplog.text
    # Not read for prediction, as in the original.
    assert len(squad.read_squad_examples(path, is_training=False)) == 2


def _squad_file(tmp_path, qa: dict, context: str = "The Danube flows east.") -> str:
    path = str(tmp_path / "bad.json")
    with open(path, "w") as f:
        json.dump({"data": [{"paragraphs": [{"context": context, "qas": [qa]}]}]}, f)
    return path


@pytest.mark.parametrize("qa, version_2, message", [
    ({"id": "q1", "question": "?", "answers": [{"text": "east.", "answer_start": 30}]}, False,
     "question q1: answer 'east.' at answer_start 30 is not inside the context (22 characters)"),
    ({"id": "q1", "question": "?", "answers": [{"text": "east", "answer_start": -1}]}, False,
     "question q1: answer 'east' at answer_start -1 is not inside"),
    ({"id": "q1", "question": "?", "answers": [{"text": "east"}]}, False,
     "question q1: missing key 'answer_start'"),
    ({"id": "q1", "question": "?", "answers": [{"text": "east", "answer_start": "17"}]}, False,
     "question q1: 'answer_start' is str, not int"),
    ({"id": "q1", "answers": []}, False, "question q1: missing key 'question'"),
    ({"question": "?", "answers": []}, False, "article 0 paragraph 0: missing key 'id'"),
    ({"id": "q1", "question": "?", "answers": []}, False,
     "question q1: training needs exactly 1 answer per question, got 0"),
    ({"id": "q1", "question": "?", "answers": []}, True,
     "question q1: missing key 'is_impossible'"),
])
def test_a_malformed_file_is_a_one_line_error_naming_file_and_question(tmp_path, qa, version_2,
                                                                       message):
    path = _squad_file(tmp_path, qa)
    with pytest.raises(ValueError) as raised:
        squad.read_squad_examples(path, is_training=True, version_2_with_negative=version_2)
    assert str(raised.value).startswith(f"{path}: {message}")
    assert "\n" not in str(raised.value)


@pytest.mark.parametrize("text, message", [
    (None, "no such file"),
    ('{"data": [', "not valid JSON: Expecting value: line 1 column 11 (char 10)"),
    ('{"version": "1.1"}', "the top level: missing key 'data'"),
    ('{"data": [{"paragraphs": {}}]}', "article 0: 'paragraphs' is dict, not list"),
])
def test_missing_and_non_squad_files_are_one_line_errors(tmp_path, text, message):
    path = tmp_path / "dev.json"
    if text is not None:
        path.write_text(text)
    with pytest.raises(ValueError) as raised:
        squad.read_squad_examples(str(path), is_training=False)
    assert str(raised.value) == f"{path}: {message}"


def test_lengths_that_leave_no_room_for_the_context_are_refused_at_the_call():
    with pytest.raises(ValueError, match=r"max_seq_length \(19\) must be greater than "
                                         r"max_query_length \(16\) \+ 3"):
        squad.convert_examples_to_features([], tokenizers()[0], 19, 8, 16, False)
    with pytest.raises(ValueError, match="doc_stride must be positive"):
        squad.convert_examples_to_features([], tokenizers()[0], 64, 0, 16, False)


def test_a_failed_write_leaves_no_file(tmp_path):
    def features():
        yield squad.InputFeatures(1000000000, 0, 0, ["[CLS]"], {}, {}, [101], [1], [0])
        raise RuntimeError("interrupted")

    with pytest.raises(RuntimeError):
        squad.write_features(features(), str(tmp_path / "train.tf_record"), is_training=False)
    assert os.listdir(tmp_path) == []
