"""Tests for official.tasks.ner: the weighted token loss, windows back to one tag per word, and
the scores. References are hand-built arrays and hand-computed numbers."""

import json
import math
import os
from types import SimpleNamespace

import numpy as np
import pytest
import tensorflow as tf

from official.tasks import ner

LABELS = ("O", "B-PER", "I-PER", "B-LOC", "I-LOC")
NUM_LABELS = len(LABELS)

# Two sentences: 0 has 3 words, 1 has 5 words split into two windows (words 0-2, then 3-4).
# Weights are 0 at [CLS], [SEP], a word's later pieces and padding; row 3 is a padding record.
IDS = np.array([
    [0, 1, 9, 2, 0, 0, 0, 0],   # sentence 0: words at positions 1, 3, 4 (position 2 a 2nd piece)
    [0, 3, 4, 0, 0, 0, 0, 0],   # sentence 1, words 0, 1, 2
    [0, 1, 9, 0, 0, 0, 0, 0],   # sentence 1, words 3, 4 (position 2 a 2nd piece)
    [0, 0, 0, 0, 0, 0, 0, 0],   # padding
])
WEIGHTS = np.array([
    [0, 1, 0, 1, 1, 0, 0, 0],
    [0, 1, 1, 1, 0, 0, 0, 0],
    [0, 1, 0, 1, 0, 0, 0, 0],
    [0, 0, 0, 0, 0, 0, 0, 0],
], np.float32)
SENTENCE_INDEX = np.array([0, 1, 1, 0])
FIRST_WORD = np.array([0, 0, 3, 0])
LENGTHS = [3, 5]


def test_windows_give_each_word_its_first_piece_prediction():
    words = ner.word_label_ids(IDS, WEIGHTS, SENTENCE_INDEX, FIRST_WORD, LENGTHS)
    assert [w.tolist() for w in words] == [[1, 2, 0], [3, 4, 0, 1, 0]]


def test_window_order_does_not_matter():
    order = [2, 3, 0, 1]
    words = ner.word_label_ids(IDS[order], WEIGHTS[order], SENTENCE_INDEX[order],
                               FIRST_WORD[order], LENGTHS)
    assert [w.tolist() for w in words] == [[1, 2, 0], [3, 4, 0, 1, 0]]


@pytest.mark.parametrize("change, message", [
    (lambda w, s, f: f.__setitem__(2, 2), "predicts word 2 of sentence 1 again"),
    (lambda w, s, f: f.__setitem__(2, 4), "predicts words [4, 6) of sentence 1"),
    (lambda w, s, f: s.__setitem__(0, 7), "sentence 7"),
    (lambda w, s, f: w.__setitem__((2, 3), 0), "word 4 of sentence 1 has no prediction"),
])
def test_every_word_gets_exactly_one_tag(change, message):
    weights, sentence_index, first_word = WEIGHTS.copy(), SENTENCE_INDEX.copy(), FIRST_WORD.copy()
    change(weights, sentence_index, first_word)
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace(")", r"\)")):
        ner.word_label_ids(IDS, weights, sentence_index, first_word, LENGTHS)


def test_a_sentence_without_predictions_is_an_error():
    with pytest.raises(ValueError, match="word 0 of sentence 2 has no prediction"):
        ner.word_label_ids(IDS, WEIGHTS, SENTENCE_INDEX, FIRST_WORD, LENGTHS + [1])


def one_hot_logits(ids, num_labels=NUM_LABELS):
    return np.eye(num_labels, dtype=np.float32)[np.minimum(ids, num_labels - 1)] * 5.0


def outputs():
    # label_ids as the records hold them: 0 where nothing is predicted.
    return {"logits": one_hot_logits(IDS), "label_weights": WEIGHTS,
            "sentence_index": SENTENCE_INDEX, "first_word": FIRST_WORD,
            "label_ids": np.where(WEIGHTS > 0, IDS, 0)}


def test_predicted_tags_are_the_argmax_label_per_word():
    assert ner.predicted_tags(outputs(), LENGTHS, LABELS) == [
        ["B-PER", "I-PER", "O"], ["B-LOC", "I-LOC", "O", "B-PER", "O"]]


def test_evaluate_scores_entities_and_the_loss():
    # Gold: sentence 0 as predicted (1 PER); sentence 1 has B-LOC I-LOC right, and gold PER
    # is 2 words (B-PER I-PER) where 1 was predicted: 3 gold, 3 predicted, 2 correct.
    gold = [["B-PER", "I-PER", "O"], ["B-LOC", "I-LOC", "O", "B-PER", "I-PER"]]
    scores, tags = ner.evaluate(outputs(), gold, LABELS)
    assert tags[1] == ["B-LOC", "I-LOC", "O", "B-PER", "O"]
    assert scores["precision"] == pytest.approx(2 / 3)
    assert scores["recall"] == pytest.approx(2 / 3)
    assert scores["f1"] == pytest.approx(2 / 3)
    assert scores["PER_f1"] == pytest.approx(0.5) and scores["LOC_f1"] == 1.0
    # Each weighted position: logit 5 on the gold label, 0 on 4 others.
    assert scores["loss"] == pytest.approx(math.log(1 + 4 * math.exp(-5)), rel=1e-6)


def test_a_domain_taggers_entity_scores_are_seqevals_and_by_hand():
    """The same predicted ids read as BC5CDR's tags (data_prep/conll.py tag_set's order): gold
    chunks Chemical [0, 2) of sentence 0, Disease [0, 1) and Chemical [3, 5) of sentence 1;
    predicted Chemical [0, 2), Disease [0, 2) and Chemical [3, 4): one of three right."""
    import seqeval.metrics

    labels = ("O", "B-Chemical", "I-Chemical", "B-Disease", "I-Disease")
    gold = [["B-Chemical", "I-Chemical", "O"], ["B-Disease", "O", "O", "B-Chemical", "I-Chemical"]]
    scores, tags = ner.evaluate(outputs(), gold, labels)
    assert tags == [["B-Chemical", "I-Chemical", "O"],
                    ["B-Disease", "I-Disease", "O", "B-Chemical", "O"]]
    assert (scores["precision"], scores["recall"]) == (pytest.approx(1 / 3),) * 2
    assert scores["f1"] == pytest.approx(1 / 3)
    assert scores["f1"] == pytest.approx(seqeval.metrics.f1_score(gold, tags))
    report = seqeval.metrics.classification_report(gold, tags, output_dict=True)
    assert scores["Chemical_f1"] == pytest.approx(report["Chemical"]["f1-score"]) == 0.5
    assert scores["Disease_f1"] == report["Disease"]["f1-score"] == 0.0


def test_a_task_records_its_tags_unless_they_are_conll_2003s():
    from official import records
    from official.tasks.ner_metrics import CONLL2003_LABELS
    from official.tasks.ner_settings import TAGGER_FILE, TaggerSettings

    assert ner.NerTask(CONLL2003_LABELS).files() == {TAGGER_FILE: None}
    labels = ["O", "B-Chemical", "I-Chemical"]
    text = ner.NerTask(labels, tagger=TaggerSettings.of(False, labels)).files()[TAGGER_FILE]
    assert records.from_dict(TaggerSettings, json.loads(text), TAGGER_FILE).tags() == labels
    with pytest.raises(ValueError, match="records the tags O, B-Chemical, I-Chemical, not O$"):
        ner.NerTask(["O"], tagger=TaggerSettings.of(False, labels))


# ---- the loss ------------------------------------------------------------------------------


def batch(rows=4, seq=6, labels=3, seed=0):
    rng = np.random.default_rng(seed)
    return ({"label_ids": tf.constant(rng.integers(0, labels, (rows, seq)), tf.int32),
             "label_weights": tf.constant(rng.integers(0, 2, (rows, seq)), tf.float32)},
            tf.constant(rng.normal(size=(rows, seq, labels)), tf.float32))


def numpy_loss(features, logits):
    logits = logits.numpy().astype(np.float64)
    log_probs = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    labels, weights = features["label_ids"].numpy(), features["label_weights"].numpy()
    picked = np.take_along_axis(log_probs, labels[..., None], -1)[..., 0]
    return -(weights * picked).sum() / weights.sum()


def test_loss_is_the_weighted_mean_over_predicted_positions():
    task = ner.NerTask()
    features, logits = batch()
    loss, stats = task.loss_and_stats(logits, features, task.normalizers(features))
    assert float(loss) == pytest.approx(numpy_loss(features, logits), rel=1e-5)
    assert float(stats["examples"]) == 4
    assert float(stats["label_weight"]) == features["label_weights"].numpy().sum()
    metrics = task.metrics({k: float(v) for k, v in stats.items()})
    assert metrics["loss"] == pytest.approx(float(loss), rel=1e-6)
    predicted = np.argmax(logits.numpy(), -1) == features["label_ids"].numpy()
    weights = features["label_weights"].numpy()
    assert metrics["accuracy"] == pytest.approx((weights * predicted).sum() / weights.sum())


def test_split_batches_add_up_to_the_whole_batch_loss():
    """With the denominators summed over both halves first, the halves' losses add up to the
    loss of the whole batch, however unevenly the weights fall."""
    task = ner.NerTask()
    features, logits = batch(rows=6)
    whole, _ = task.loss_and_stats(logits, features, task.normalizers(features))
    halves = [({k: v[i:i + 3] for k, v in features.items()}, logits[i:i + 3]) for i in (0, 3)]
    normalizers = {k: sum(task.normalizers(f)[k] for f, _ in halves)
                   for k in ("label_weight", "examples")}
    parts = [task.loss_and_stats(logits, f, normalizers)[0] for f, logits in halves]
    assert float(parts[0] + parts[1]) == pytest.approx(float(whole), rel=1e-6)


def test_a_batch_of_padding_records_has_zero_loss():
    task = ner.NerTask()
    features, logits = batch()
    features["label_weights"] = tf.zeros_like(features["label_weights"])
    loss, _ = task.loss_and_stats(logits, features, task.normalizers(features))
    assert float(loss) == 0.0


def test_tagged_words_are_written_in_conll_format(tmp_path):
    sentences = [SimpleNamespace(words=["EU", "rejects", "German", "call", "."],
                                 tags=["B-ORG", "O", "B-MISC", "O", "O"], line=3),
                 SimpleNamespace(words=["Peter", "Blackburn", "Sam", "Jones"],
                                 tags=["B-PER", "I-PER", "B-PER", "I-PER"], line=10)]
    path = tmp_path / "predictions.txt"
    ner.write_tagged_words(sentences, [["B-ORG", "O", "O", "O", "O"],
                                         ["B-PER", "I-PER", "I-PER", "I-PER"]], str(path))
    assert path.read_text(encoding="utf-8") == (
        "EU B-ORG B-ORG\nrejects O O\nGerman B-MISC O\ncall O O\n. O O\n\n"
        "Peter B-PER B-PER\nBlackburn I-PER I-PER\nSam B-PER I-PER\nJones I-PER I-PER\n\n")
    with pytest.raises(ValueError, match="^2 sentences but 1 predicted$"):
        ner.write_tagged_words(sentences, [["O"] * 5], str(tmp_path / "other.txt"))
    with pytest.raises(ValueError, match=r"^sentence 1 \(line 10\): 4 words but 3 predicted"):
        ner.write_tagged_words(sentences, [["O"] * 5, ["O"] * 3], str(tmp_path / "other.txt"))
    assert sorted(os.listdir(tmp_path)) == ["predictions.txt"]
