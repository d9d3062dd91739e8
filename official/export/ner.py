"""The NER export: raw sentences -> entity spans (text, type, character offsets), in the graph.

    serving_default(text: string [batch]) ->
        entity_text   string [batch, max_entities]  the entity as it is in the text ("" pads)
        entity_type   string [batch, max_entities]  PER, LOC, ... (the tag without B-/I-)
        entity_start  int32  [batch, max_entities]  character offset of its first character
        entity_end    int32  [batch, max_entities]  one past its last character (-1 pads both)
        num_entities  int32  [batch]
        words         string [batch, max_words]     the words tagged ("" pads)
        tags          string [batch, max_words]     each word's predicted tag ("" pads)
        num_words     int32  [batch]

The steps are those of the fine-tuning data (data_prep/conll.py) on words found in raw text:

 1. words: `words.split_words`, the original tokenizer's word boundaries (CoNLL's words are
    split the same way: "German's" -> German ' s); a word with no WordPiece (only characters the
    tokenizer deletes) is dropped;
 2. each word tokenized alone, its pieces cut to max_seq_length - 2; a sentence too long for
    one window is cut between words into windows filled greedily
    (`official.features.word_windows`, as the records); [CLS] window [SEP];
 3. each word's tag is the argmax at its first piece;
 4. entities are chunks by conlleval's rule (`official.tasks.ner_metrics.get_chunks`): B-X (or
    S-X) starts one, and so does I-X after O, after another type or at the sentence start.

Offsets are characters of the text (see `words` for text that is not UTF-8).
"""

from __future__ import annotations

from typing import Sequence

import keras
import tensorflow as tf

from official.export import packing, words
from official.export.preprocessing import clean_utf8
from official.export.saving import TaskExport
from official.features.word_windows import greedy_windows
from official.text.tokenizer import FullTokenizer

_PREFIXES = "OBIES"  # index of a tag's prefix; O is 0


def _tag_table(labels: Sequence[str]) -> tuple[list[int], list[str], list[int]]:
    """Per label: its prefix's index in _PREFIXES, and its type's index in the types list.

    Labels are entity tags (O, or B-/I-/E-/S- and a type) or, when none is O or has a prefix,
    tags of single words (a part-of-speech tagger's ADJ, NOUN, ...): each word is then a span of
    its own, as an S- tag, and `tags` serves the labels as they are."""
    word_tags = all(label != "O" and "-" not in label for label in labels)
    prefixes, types, type_ids = [], [], []
    for label in labels:
        if label == "O":
            prefixes.append(0)
            type_ids.append(-1)
            continue
        prefix, dash, entity_type = ("S", "-", label) if word_tags else label.partition("-")
        if prefix not in _PREFIXES[1:] or not dash or not entity_type:
            raise ValueError(f"label {label!r} is neither 'O' nor B-/I-/E-/S- and a type")
        if entity_type not in types:
            types.append(entity_type)
        prefixes.append(_PREFIXES.index(prefix))
        type_ids.append(types.index(entity_type))
    return prefixes, types, type_ids


def _row_starts(row_ids: tf.Tensor) -> tf.Tensor:
    """bool [n]: True where a row (a run of equal ids) begins."""
    previous = tf.roll(row_ids, 1, axis=0)
    return (tf.range(tf.size(row_ids)) == 0) | (previous != row_ids)


def _count(ids: tf.Tensor) -> tf.Tensor:
    """1 + the largest of ids (0 for none): the number of segments they index."""
    return tf.reduce_max(tf.concat([[-1], ids], 0)) + 1


class NerExport(TaskExport):
    """A token tagger serving raw sentences (see the module docstring).

    Args:
      model: the fine-tuned model, weights loaded: a `BertTokenClassifier`, or a feature-based
        run's `BertFeatureTagger` (official/modeling/feature_tagger.py); logits
        [batch, seq_len, num_labels] either way.
      tokenizer: its tokenizer.
      labels: the tag of each output column (data_prep.conll.LABELS for CoNLL-2003).
      max_seq_length: the fine-tuning's max_seq_length (at least 3).
    """

    def __init__(self, model: keras.Model, tokenizer: FullTokenizer,
                 labels: Sequence[str], max_seq_length: int):
        if len(labels) != model.num_labels:
            raise ValueError(f"{len(labels)} labels for a model of {model.num_labels} outputs")
        if max_seq_length < 3:
            raise ValueError(f"max_seq_length must be at least 3, got {max_seq_length}")
        super().__init__(model, tokenizer)
        self._max_seq_length = max_seq_length
        prefixes, types, type_ids = _tag_table(labels)
        self._labels = list(labels)
        self._prefixes, self._types, self._type_ids = prefixes, types, type_ids

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)], autograph=False)
    def __call__(self, text):
        text = clean_utf8(text)
        word_strings, byte_starts, byte_ends, pieces = self._words(text)
        sentence_ids = tf.cast(word_strings.value_rowids(), tf.int32)
        tag_ids = self._tag_words(pieces, sentence_ids)
        first, last, type_ids = self._chunks(tag_ids, sentence_ids)

        entity_sentence = tf.gather(sentence_ids, first)
        entity_bytes_start = tf.gather(byte_starts.flat_values, first)
        entity_bytes_end = tf.gather(byte_ends.flat_values, last)
        entity_text = tf.strings.substr(tf.gather(text, entity_sentence), entity_bytes_start,
                                        entity_bytes_end - entity_bytes_start)
        batch = tf.shape(text, out_type=tf.int64)[0]

        def by_sentence(values):
            return tf.RaggedTensor.from_value_rowids(values, tf.cast(entity_sentence, tf.int64),
                                                     batch)

        entity_type = tf.gather(tf.constant(self._types or [""]), type_ids)
        tags = tf.gather(tf.constant(self._labels), tag_ids)
        return {
            "entity_text": by_sentence(entity_text).to_tensor(""),
            "entity_type": by_sentence(entity_type).to_tensor(""),
            "entity_start": words.char_offsets(text, by_sentence(entity_bytes_start))
            .to_tensor(-1),
            "entity_end": words.char_offsets(text, by_sentence(entity_bytes_end)).to_tensor(-1),
            "num_entities": tf.cast(by_sentence(entity_text).row_lengths(), tf.int32),
            "words": word_strings.to_tensor(""),
            "tags": word_strings.with_flat_values(tags).to_tensor(""),
            "num_words": tf.cast(word_strings.row_lengths(), tf.int32),
        }

    def _words(self, text):
        """Step 1: words [batch, (words)], their byte [start, end), and their pieces
        [words, (pieces)] cut to a window; words without pieces dropped."""
        word_strings, byte_starts, byte_ends = words.split_words(text)
        pieces = self._tokenizer.tokenize_tf(word_strings.flat_values)
        keep = pieces.row_lengths() > 0
        word_strings, byte_starts, byte_ends = (
            tf.ragged.boolean_mask(x, x.with_flat_values(keep))
            for x in (word_strings, byte_starts, byte_ends))
        pieces = tf.ragged.boolean_mask(pieces, keep)[:, :self._max_seq_length - 2]
        return word_strings, byte_starts, byte_ends, pieces

    def _window_inputs(self, pieces, sentence_ids):
        """Step 2: the encoder inputs [windows, max_seq_length], and each word's window and the
        position of its first piece there, int32 [words] each."""
        lengths = tf.cast(pieces.row_lengths(), tf.int32)
        window_ids = greedy_windows(lengths, sentence_ids, self._max_seq_length - 2)
        num_windows = _count(window_ids)
        window_tokens = tf.RaggedTensor.from_value_rowids(
            pieces, tf.cast(window_ids, tf.int64), tf.cast(num_windows, tf.int64)).merge_dims(1, 2)
        inputs = packing.pack_inputs([window_tokens], self._max_seq_length, self._cls_id,
                                     self._sep_id)
        # A word's first piece: after [CLS] and the pieces of its window's earlier words.
        before = tf.cumsum(lengths, exclusive=True)
        window_first = tf.math.unsorted_segment_min(before, window_ids, num_windows)
        return inputs, window_ids, before - tf.gather(window_first, window_ids) + 1

    def _tag_words(self, pieces, sentence_ids):
        """Steps 2 and 3: int32 [words], each word's tag id."""
        inputs, window_ids, positions = self._window_inputs(pieces, sentence_ids)
        logits = self.model(inputs, training=False)
        word_logits = tf.gather_nd(logits, tf.stack([window_ids, positions], axis=1))
        return tf.argmax(word_logits, axis=-1, output_type=tf.int32)

    def _chunks(self, tag_ids, sentence_ids):
        """Step 4: each entity's first and last word (indexes of all the batch's words) and its
        type's index. A non-O word starts an entity (conlleval's rule) or continues the one
        before it."""
        prefix = tf.gather(tf.constant(self._prefixes, tf.int32), tag_ids)
        type_id = tf.gather(tf.constant(self._type_ids, tf.int32), tag_ids)
        sentence_start = _row_starts(sentence_ids)
        previous_prefix = tf.where(sentence_start, 0, tf.roll(prefix, 1, 0))
        previous_type = tf.where(sentence_start, -1, tf.roll(type_id, 1, 0))
        b, e, s = (_PREFIXES.index(p) for p in "BES")
        starts = (prefix != 0) & ((prefix == b) | (prefix == s) | (previous_prefix == 0)
                                  | (previous_prefix == e) | (previous_prefix == s)
                                  | (previous_type != type_id))
        entity_ids = tf.cumsum(tf.cast(starts, tf.int32)) - 1
        member = tf.cast(tf.where(prefix != 0), tf.int32)[:, 0]
        member_entity = tf.gather(entity_ids, member)
        num_entities = tf.reduce_sum(tf.cast(starts, tf.int32))
        first = tf.math.unsorted_segment_min(member, member_entity, num_entities)
        last = tf.math.unsorted_segment_max(member, member_entity, num_entities)
        return first, last, tf.gather(type_id, first)

    def signatures(self) -> dict:
        """`serving_default`: `text` [batch] strings -> the outputs of the module docstring."""
        serve = tf.function(lambda text: self(text), input_signature=[
            tf.TensorSpec([None], tf.string, name="text")], autograph=False)
        return {"serving_default": serve}
