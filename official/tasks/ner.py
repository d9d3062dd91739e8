"""Token classification (named entities, CoNLL-2003's or any types a training file has; a
treebank's parts of speech): the loss, and logits back to one tag per word.

    NerTask             the training loop's Task: sum(w * cross-entropy) / sum(w) over the
                        global batch, w = label_weights (1.0 at each word's first piece)
    word_label_ids      windows' per-position predictions -> each sentence's per-word label ids
    predicted_tags      model outputs -> each sentence's per-word tags
    evaluate            model outputs + gold tags -> conlleval's entity P/R/F1 and the loss
    tag_accuracy        model outputs + gold tags -> the share of words tagged right (parts of
                        speech, whose tags are not entity spans)
    write_tagged_words  "word gold predicted" lines, conlleval's input

The features are data_prep.conll's records (read through official.training.finetuning_input):
only a word's first piece is predicted, and a long sentence is split into windows of whole
words that do not overlap. A window's k-th position of weight 1 predicts word
`first_word + k` of sentence `sentence_index`, so the windows of a sentence together predict
each of its words exactly once; `word_label_ids` checks that they do. Padding records (all
weights 0) predict nothing.

The loss is the pretraining masked-LM loss's pattern (official/tasks/pretraining.py): the
denominator sum(w) is summed over every micro-batch and replica first (`normalizers`), so the
loss is that of one big batch however the batch is split. Unlike masked-LM there is no epsilon:
a batch without any weight (padding records only) has a loss of 0, not 0/eps.

This module takes plain arrays and tag lists, not data_prep's classes (the library does not
import data_prep): a sentence here is its gold tags, one per word (or, for the fine-tuning task
and `write_tagged_words`, anything with `words`, `tags` and the `line` it starts at, as
data_prep.conll.Sentence).

Example (what `FinetuningRun.predict(dataset, keep=PREDICT_FEATURES)` returns for one sentence
of three words, "John Smith left", in two windows: [CLS] john sm ##ith [SEP] predicts words 0
and 1, [CLS] left [SEP] word 2; logits favouring one label per position):
    >>> labels = ("O", "B-PER", "I-PER")
    >>> outputs = {"logits": np.eye(3)[[[0, 1, 2, 2, 0], [0, 0, 0, 0, 0]]],  # [windows, seq, 3]
    ...            "label_weights": np.array([[0, 1, 1, 0, 0], [0, 1, 0, 0, 0]], np.float32),
    ...            "label_ids": np.array([[0, 1, 2, 0, 0], [0, 0, 0, 0, 0]]),
    ...            "sentence_index": np.array([0, 0]), "first_word": np.array([0, 2])}
    >>> predicted_tags(outputs, [3], labels)
    [['B-PER', 'I-PER', 'O']]
    >>> scores, tags = evaluate(outputs, [["B-PER", "I-PER", "O"]], labels)
    >>> round(scores["f1"], 4), round(scores["PER_f1"], 4), round(scores["loss"], 4)
    (1.0, 1.0, 0.5514)
"""

from __future__ import annotations

import os
from typing import Mapping, Sequence

import keras
import numpy as np
import tensorflow as tf
from absl import logging

from official.atomic_files import open_atomically
from official.modeling.encoder import BertEncoder
from official.modeling.feature_tagger import BertFeatureTagger
from official.modeling.models import BertTokenClassifier
from official.records import to_json
from official.tasks.base import Records, SoftTarget
from official.tasks.ner_metrics import entity_scores
from official.tasks.ner_settings import TAGGER_FILE, FeatureBasedSettings, TaggerSettings

TEST_PREDICTIONS_FILE = "test_predictions.txt"
TEST_RESULTS_FILE = "test_results.txt"

# The features `FinetuningRun.predict` must keep beside the logits for `predicted_tags`
# (label_ids too, for `evaluate`'s loss).
PREDICT_FEATURES = ("label_weights", "sentence_index", "first_word", "label_ids")
# A scheme of tags and the dev metric best/ keeps: entity spans, or one tag per word.
SCHEMES = {"entities": "f1", "tags": "accuracy"}


class NerTask:
    """Token classification with per-position weights: run_ner's task (official/tasks/base.py).

    Args:
      labels: the tags in label-id order (data_prep/conll.py `tag_set`: chosen from the
        training file's tags).
      feature_based: the paper's feature-based approach (official/tasks/ner_settings.py): a
        BertFeatureTagger (a BiLSTM on the chosen layers of the encoder, which the run's
        frozen method freezes) instead of fine-tuning a BertTokenClassifier; kept in the
        serving spec, so an export rebuilds the same model.
      tagger: what the tagger is beyond its weights, kept in tagger.json: what a fine-tuned
        BertTokenClassifier reads (the last layer, or a learned mix of every layer; in the
        serving spec too) and the tags when they are not CoNLL-2003's (then `labels`).
      scheme: "entities" (IOB tags: conlleval's entity scores, best/ by F1) or "tags" (each
        word's tag on its own, a part of speech: accuracy over words, best/ by accuracy).

    Features: label_ids int32 [batch, seq_len], label_weights float32 [batch, seq_len].
    Outputs (of either model): float32 logits [batch, seq_len, num_labels].
    Stats: loss_sum and correct (weighted sums over predicted positions), label_weight,
    examples. Metrics: loss and accuracy over predicted positions (words, not pieces).
    The dev metrics are conlleval's entity scores (best/ kept by entity F1), or for "tags" the
    accuracy over words; the test split's tags are written as conlleval's input,
    test_predictions.txt, and scored (CoNLL's and UD's test files carry gold tags) into
    test_results.txt. `Records.examples` is the split's sentences.
    """

    keep = PREDICT_FEATURES
    results_file = TEST_RESULTS_FILE

    def __init__(self, labels: Sequence[str] = (),
                 feature_based: FeatureBasedSettings | None = None, scheme: str = "entities",
                 tagger: TaggerSettings | None = None):
        if scheme not in SCHEMES:
            raise ValueError(f"scheme must be one of {', '.join(SCHEMES)}, got {scheme!r}")
        tagger = tagger or TaggerSettings()
        if feature_based is not None and tagger.mix_layers:
            raise ValueError("--mix_layers is for fine-tuning; --feature_based chooses its "
                             "own layers")
        if tagger.labels is not None and list(tagger.labels) != list(labels):
            raise ValueError(f"the tagger records the tags {', '.join(tagger.labels)}, not "
                             f"{', '.join(labels)}")
        self.labels = list(labels)
        self.feature_based = feature_based
        self.tagger = tagger
        self.scheme = scheme
        self.best_metric = SCHEMES[scheme]

    def build_model(self, encoder: BertEncoder) -> keras.Model:
        if self.feature_based is None:
            return BertTokenClassifier(encoder, len(self.labels), self.tagger.mix_layers)
        return BertFeatureTagger(encoder, len(self.labels), self.feature_based.layers,
                                 self.feature_based.lstm_units)

    def serving_spec(self) -> dict:
        spec = {"export_type": "ner", "task_name": "ner", "labels": self.labels}
        if self.tagger.mix_layers:
            spec["mix_layers"] = True
        return spec if self.feature_based is None else {**spec, **self.feature_based.to_spec()}

    def files(self) -> dict[str, str | None]:
        """tagger.json when the tagger mixes layers or its tags are not CoNLL-2003's (an
        evaluation-only rerun and an export read it back)."""
        return {TAGGER_FILE: None if self.tagger == TaggerSettings() else to_json(self.tagger)}

    def normalizers(self, features: Mapping[str, tf.Tensor]) -> dict[str, tf.Tensor]:
        """This batch's share of the loss denominator: float32 scalars that add across batches."""
        weights = features["label_weights"]
        return {"label_weight": tf.reduce_sum(weights),
                "examples": tf.cast(tf.shape(weights)[0], tf.float32)}

    def soft_targets(self, logits: tf.Tensor,
                     features: Mapping[str, tf.Tensor]) -> dict[str, SoftTarget]:
        """The tag distribution of every token the task's loss counts (words' first pieces)."""
        return {"logits": SoftTarget(logits, features["label_weights"], "label_weight")}

    def loss_and_stats(self, outputs: tf.Tensor, features: Mapping[str, tf.Tensor],
                       normalizers: Mapping[str, tf.Tensor]) -> tuple[tf.Tensor, dict]:
        """This batch's part of the global loss, and its statistics as sums.

        Args:
          outputs: logits [batch, seq_len, num_labels].
          normalizers: `normalizers` summed over every batch of the update.
        """
        weights = features["label_weights"]
        labels = features["label_ids"]
        logits = tf.cast(outputs, tf.float32)
        cross_entropy = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels,
                                                                       logits=logits)
        correct = tf.cast(tf.equal(tf.argmax(logits, axis=-1, output_type=labels.dtype), labels),
                          tf.float32)
        stats = {
            "loss_sum": tf.reduce_sum(weights * cross_entropy),
            "correct": tf.reduce_sum(weights * correct),
            "label_weight": tf.reduce_sum(weights),
            "examples": tf.cast(tf.shape(weights)[0], tf.float32),
        }
        loss = tf.math.divide_no_nan(stats["loss_sum"], normalizers["label_weight"])
        return loss, stats

    def metrics(self, stats: Mapping[str, float]) -> dict[str, float]:
        """Loss and accuracy per predicted word, from summed stats."""
        weight = max(float(stats["label_weight"]), 1e-12)
        return {"accuracy": float(stats["correct"]) / weight,
                "loss": float(stats["loss_sum"]) / weight}

    def _scores(self, outputs: Mapping[str, np.ndarray],
                gold: Sequence[Sequence[str]]) -> tuple[dict[str, float], list[list[str]]]:
        if self.scheme == "tags":
            return tag_accuracy(outputs, gold, self.labels)
        return evaluate(outputs, gold, self.labels)

    def evaluate(self, outputs: Mapping[str, np.ndarray], records: Records) -> dict[str, float]:
        return self._scores(outputs, [s.tags for s in records.examples])[0]

    def write_predictions(self, outputs: Mapping[str, np.ndarray], records: Records,
                          output_dir: str | None) -> dict[str, float]:
        """test_predictions.txt (conlleval's input); the entity scores (CoNLL's test files
        carry gold tags)."""
        sentences = records.examples
        scores, tags = self._scores(outputs, [s.tags for s in sentences])
        if output_dir is not None:
            write_tagged_words(sentences, tags, os.path.join(output_dir, TEST_PREDICTIONS_FILE))
        logging.info("test %s: %s", records.source, "  ".join(
            f"{name} {scores[name]:.4f}" for name in ("precision", "recall", "f1", "accuracy")
            if name in scores))
        return scores


def word_label_ids(position_ids: np.ndarray, label_weights: np.ndarray,
                   sentence_index: np.ndarray, first_word: np.ndarray,
                   sentence_lengths: Sequence[int]) -> list[np.ndarray]:
    """Each sentence's per-word values from its windows' per-position ones.

    Args:
      position_ids: [windows, seq_len] a value per position (the predicted label id).
      label_weights: [windows, seq_len] > 0 at the positions that predict a word.
      sentence_index: [windows] the sentence each window belongs to.
      first_word: [windows] the word predicted by each window's first weighted position.
      sentence_lengths: words per sentence, for every sentence of the data.
    Returns:
      one int array [sentence_lengths[i]] per sentence.
    Raises:
      ValueError: a window points outside its sentence, two windows predict the same word, or
        a word is predicted by none: the predictions do not belong to these sentences.
    """
    position_ids, label_weights = np.asarray(position_ids), np.asarray(label_weights)
    sentence_index, first_word = np.asarray(sentence_index), np.asarray(first_word)
    if not (len(position_ids) == len(label_weights) == len(sentence_index) == len(first_word)):
        raise ValueError(f"predictions of different lengths: {len(position_ids)} windows of ids, "
                         f"{len(label_weights)} of weights, {len(sentence_index)} sentence "
                         f"indices, {len(first_word)} first words")
    words = [np.full(n, -1, np.int64) for n in sentence_lengths]
    for row in range(len(position_ids)):
        positions = np.flatnonzero(label_weights[row] > 0)
        if positions.size == 0:
            continue  # a padding record
        sentence, start = int(sentence_index[row]), int(first_word[row])
        end = start + positions.size
        if not 0 <= sentence < len(words) or start < 0 or end > len(words[sentence]):
            raise ValueError(f"window {row} predicts words [{start}, {end}) of sentence "
                             f"{sentence}, which is not among the {len(words)} sentences or "
                             "has fewer words")
        target = words[sentence][start:end]
        if (target >= 0).any():
            word = start + int(np.flatnonzero(target >= 0)[0])
            raise ValueError(f"window {row} predicts word {word} of sentence {sentence} again")
        target[:] = position_ids[row, positions]
    for sentence, values in enumerate(words):
        if (values < 0).any():
            raise ValueError(f"word {int(np.flatnonzero(values < 0)[0])} of sentence {sentence} "
                             "has no prediction")
    return words


def predicted_tags(outputs: Mapping[str, np.ndarray], sentence_lengths: Sequence[int],
                   labels: Sequence[str]) -> list[list[str]]:
    """Each sentence's predicted tags, one per word: the arg-max label at each word's first piece.

    Args:
      outputs: `FinetuningRun.predict`'s arrays: logits [windows, seq_len, num_labels] and the
        kept label_weights, sentence_index, first_word.
      sentence_lengths: words per sentence, every sentence of the predicted data.
      labels: the tag set (a label id is its index).
    """
    ids = np.argmax(outputs["logits"], axis=-1)
    words = word_label_ids(ids, outputs["label_weights"], outputs["sentence_index"],
                           outputs["first_word"], sentence_lengths)
    return [[labels[i] for i in sentence] for sentence in words]


def weighted_loss(outputs: Mapping[str, np.ndarray]) -> float:
    """NerTask's loss over all predicted rows: sum(w * cross-entropy) / sum(w)."""
    logits = np.asarray(outputs["logits"], np.float64)
    shifted = logits - logits.max(axis=-1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    gold = np.take_along_axis(log_probs, outputs["label_ids"][..., None].astype(np.int64),
                              axis=-1)[..., 0]
    weights = np.asarray(outputs["label_weights"], np.float64)
    return float(-(weights * gold).sum() / max(weights.sum(), 1e-12))


def evaluate(outputs: Mapping[str, np.ndarray], gold_tags: Sequence[Sequence[str]],
             labels: Sequence[str]) -> tuple[dict[str, float], list[list[str]]]:
    """conlleval's entity scores of the predictions against the gold tags, and the loss.

    Args:
      outputs: `FinetuningRun.predict`'s arrays with PREDICT_FEATURES kept.
      gold_tags: each sentence's gold tags, every sentence of the predicted data.
    Returns:
      ({"precision", "recall", "f1", "<TYPE>_f1", ..., "loss"}, the predicted tags per sentence).
    """
    tags = predicted_tags(outputs, [len(t) for t in gold_tags], labels)
    scores = entity_scores(gold_tags, tags).as_dict()
    scores["loss"] = weighted_loss(outputs)
    return scores, tags


def tag_accuracy(outputs: Mapping[str, np.ndarray], gold_tags: Sequence[Sequence[str]],
                 labels: Sequence[str]) -> tuple[dict[str, float], list[list[str]]]:
    """The share of words whose predicted tag is the gold one, and the loss.

    Args:
      outputs: `FinetuningRun.predict`'s arrays with PREDICT_FEATURES kept.
      gold_tags: each sentence's gold tags, every sentence of the predicted data.
    Returns:
      ({"accuracy", "loss"}, the predicted tags per sentence).
    """
    tags = predicted_tags(outputs, [len(t) for t in gold_tags], labels)
    right = sum(p == g for sentence, gold in zip(tags, gold_tags) for p, g in zip(sentence, gold))
    words = sum(len(t) for t in gold_tags)
    return {"accuracy": right / max(words, 1), "loss": weighted_loss(outputs)}, tags


def write_tagged_words(sentences: Sequence, predicted_tags: Sequence[Sequence[str]],
                       path: str) -> None:
    """Writes "word gold predicted" per word, a blank line after each sentence: the input of
    CoNLL's conlleval script (gold in IOB2, as read). Written atomically.

    Args:
      sentences: each with `words`, its gold `tags` and the `line` it starts at.
    Raises:
      ValueError: the sentences and predictions differ in number, or a sentence's word count
        and its tag count differ.
    """
    if len(sentences) != len(predicted_tags):
        raise ValueError(f"{len(sentences)} sentences but {len(predicted_tags)} predicted")
    for index, (sentence, tags) in enumerate(zip(sentences, predicted_tags)):
        if len(tags) != len(sentence.words):
            raise ValueError(f"sentence {index} (line {sentence.line}): {len(sentence.words)} "
                             f"words but {len(tags)} predicted tags")
    with open_atomically(path) as f:
        for sentence, tags in zip(sentences, predicted_tags):
            f.writelines(f"{word} {gold} {predicted}\n"
                         for word, gold, predicted in zip(sentence.words, sentence.tags, tags))
            f.write("\n")
