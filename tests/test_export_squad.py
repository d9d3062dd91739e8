"""official/export/squad.py: raw question + context -> the original's prediction, in the graph.

The reference is run_squad's path in Python: data_prep.squad's features, the Keras span labeler,
official.tasks.squad_decoding.decode_predictions (the original's write_predictions).
"""

import os

import keras
import numpy as np
import pytest
import tensorflow as tf

from data_prep.squad import SquadExample, convert_examples_to_features, split_context
from official.configs import BertConfig
from official.export.squad import SquadExport
from official.modeling.encoder import build_encoder
from official.modeling.models import BertSpanLabeler
from official.tasks.squad_decoding import RawResult, decode_predictions
from official.tasks.squad_settings import SquadSettings
from official.text.tokenizer import FullTokenizer

VOCAB = os.path.join(os.path.dirname(__file__), "..", "data", "vocab", "uncased_vocab.txt")
CONTEXT = ("The leader was John Smith (1895-1943). Steve Smith's house, in Zürich, was built "
           "in 1920 by the ÉCOLE  Normale\n\nand later sold; İstanbul's café owners bought it "
           "for 3,000 francs. The Japanese electronics industry is the largest in the world, "
           "said naïve observers at the time.")
QUESTIONS = [("When was John Smith born?", CONTEXT),
             ("Who owned the house?", CONTEXT),
             ("What is the largest industry?", "Electronics\tis big in Japan."),
             ("Where?", "Zürich"),
             ("A question without context", ""),
             ("", "A blank question still reads the context.")]
SETTINGS = dict(max_seq_length=40, doc_stride=8, max_query_length=10, n_best_size=20,
                max_answer_length=30)


@pytest.fixture(scope="module")
def tokenizer():
    return FullTokenizer(VOCAB, do_lower_case=True)


@pytest.fixture(scope="module")
def model():
    keras.utils.set_random_seed(0)
    config = BertConfig(vocab_size=30522, hidden_size=32, num_hidden_layers=2,
                        num_attention_heads=4, intermediate_size=64, max_position_embeddings=64)
    return BertSpanLabeler(build_encoder(config))


@pytest.fixture(scope="module")
def export(model, tokenizer):
    """The export of SETTINGS, traced once for the tests that serve with them."""
    return SquadExport(model, tokenizer, SquadSettings(**SETTINGS))


def _reference(model, tokenizer, pairs, settings):
    examples = [SquadExample(str(i), q, split_context(c)[0]) for i, (q, c) in enumerate(pairs)]
    features = list(convert_examples_to_features(
        examples, tokenizer, settings.max_seq_length, settings.doc_stride,
        settings.max_query_length, is_training=False))
    logits = model({"input_word_ids": np.array([f.input_ids for f in features], np.int32),
                    "input_mask": np.array([f.input_mask for f in features], np.int32),
                    "input_type_ids": np.array([f.segment_ids for f in features], np.int32)})
    results = [RawResult(f.unique_id, s, e) for f, s, e in zip(
        features, np.asarray(logits["start_logits"]), np.asarray(logits["end_logits"]))]
    return decode_predictions(
        examples, features, results, n_best_size=settings.n_best_size,
        max_answer_length=settings.max_answer_length, do_lower_case=True,
        version_2_with_negative=settings.version_2_with_negative,
        null_score_diff_threshold=settings.null_score_diff_threshold)


def _check(outputs, expected, pairs, v2=False):
    for i, (_, context) in enumerate(pairs):
        answer = outputs["answer"][i].numpy().decode()
        prediction = expected.predictions[str(i)]
        start, end = int(outputs["answer_start"][i]), int(outputs["answer_end"][i])
        if (prediction == "empty" and "empty" not in context) or not context.split():
            # The original's placeholder answer, where no span passes the filters.
            assert (answer, start, end) == ("", -1, -1)
            continue
        assert answer == prediction, (i, answer, prediction)
        if answer:
            best = next(e for e in expected.nbest[str(i)] if e["text"])
            assert float(outputs["score"][i]) == pytest.approx(
                best["start_logit"] + best["end_logit"], abs=1e-5)
            # The answer is the context's words joined by single spaces.
            assert " ".join(context[start:end].split()) == answer
        else:
            assert (start, end) == (-1, -1)
        if v2:
            assert float(outputs["null_score_diff"][i]) == pytest.approx(
                expected.null_odds[str(i)], abs=1e-5)


@pytest.mark.parametrize("max_answer_length", [30, 3])
def test_answers_are_the_originals_predictions(model, tokenizer, export, max_answer_length):
    settings = SquadSettings(**dict(SETTINGS, max_answer_length=max_answer_length))
    if settings != export.settings:
        export = SquadExport(model, tokenizer, settings)
    serve = export.signatures()["serving_default"]
    outputs = serve(question=tf.constant([q for q, _ in QUESTIONS]),
                    context=tf.constant([c for _, c in QUESTIONS]))
    _check(outputs, _reference(model, tokenizer, QUESTIONS, settings), QUESTIONS)


def test_many_random_questions(model, tokenizer, export):
    """Random spans of a random model hit every branch of the text recovery."""
    rng = np.random.default_rng(0)
    words = CONTEXT.split(" ")
    pairs = [(" ".join(rng.choice(words, 4)), " ".join(rng.choice(words, rng.integers(5, 40))))
             for _ in range(24)]
    outputs = export(tf.constant([q for q, _ in pairs]), tf.constant([c for _, c in pairs]))
    _check(outputs, _reference(model, tokenizer, pairs, SquadSettings(**SETTINGS)), pairs)


def test_squad_v2_no_answer(model, tokenizer):
    settings = SquadSettings(**SETTINGS, version_2_with_negative=True,
                             null_score_diff_threshold=0.01)
    outputs = SquadExport(model, tokenizer, settings)(
        tf.constant([q for q, _ in QUESTIONS[:4]]), tf.constant([c for _, c in QUESTIONS[:4]]))
    expected = _reference(model, tokenizer, QUESTIONS[:4], settings)
    _check(outputs, expected, QUESTIONS[:4], v2=True)


def test_bad_requests(export):
    with pytest.raises(tf.errors.InvalidArgumentError, match="same number of texts"):
        export(tf.constant(["a", "b"]), tf.constant(["c"]))
    empty = export(tf.constant([], tf.string), tf.constant([], tf.string))
    assert empty["answer"].shape == (0,)
    odd = export(tf.constant([b"who?", b"\xff"]), tf.constant([b"Zo\xc3\xab \xfe ok", b"\xc3"]))
    assert odd["answer"].numpy()[1] == b""
    with pytest.raises(ValueError, match="max_query_length"):
        SquadSettings(max_seq_length=20, max_query_length=17)
