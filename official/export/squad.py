"""The SQuAD export: a raw question and context -> the best answer text and its score, in the graph.

    serving_default(question: string [batch], context: string [batch]) ->
        answer        string  [batch]  the answer ("" when there is none: SQuAD 2.0's no-answer,
                                       or a context without tokens)
        score         float32 [batch]  its start + end logit (for a SQuAD 2.0 "" answer, the
                                       no-answer score)
        answer_start  int32   [batch]  character offset of the answer in the context
        answer_end    int32   [batch]  one past its last character (-1 for both without answer)
        null_score_diff float32 [batch]  SQuAD 2.0 exports only: the original's null_odds, the
                                       no-answer score minus the best answer's

Everything run_squad does for one question happens inside the graph, as the original does it:

 1. features (data_prep/squad.py): the context split at whitespace into words, each word
    WordPiece-tokenized; the question cut to max_query_length tokens; windows of the context's
    tokens every doc_stride tokens, [CLS] question [SEP] window [SEP]; each token's
    "max context" window (both by official/features/doc_windows.py, as the records);
 2. the span labeler on every window of the batch at once;
 3. decoding (official/tasks/squad_decoding.py, the best of the n-best): in each window the
    n_best_size best starts and ends, every pair inside the window's context, not backwards, at
    most max_answer_length tokens and starting where this window has the max context; the best
    sum of logits over the question's windows (ties: earliest window, then best start, then best
    end, as the original's stable sort); for SQuAD 2.0 the no-answer score against it;
 4. the text: the original's `get_final_text` (the answer's pieces found in the basic-tokenized
    words and projected back onto the words' characters, else the words whole). As in the
    original, the answer is built from the context's words joined by single spaces;
    answer_start/answer_end locate it in the context itself.

So `answer` is the original's predictions.json entry, except that where the original answers its
placeholder "empty" (no span passes the filters) this export answers "".
"""

from __future__ import annotations

from typing import NamedTuple

import tensorflow as tf

from official.export import packing, words
from official.export.preprocessing import clean_utf8
from official.export.saving import TaskExport
from official.features import doc_windows
from official.modeling.models import BertSpanLabeler
from official.tasks.squad_settings import SquadSettings
from official.text.basic_tokenizer import BasicTokenizer
from official.text.tokenizer import FullTokenizer

_NO_SCORE = float("-inf")


def _first_max(values: tf.Tensor, axis: int = -1) -> tf.Tensor:
    """Index of the first maximum along `axis` (tf.argmax does not promise which on ties)."""
    is_max = values >= tf.reduce_max(values, axis=axis, keepdims=True)
    size = tf.shape(values, out_type=tf.int32)[axis]
    indexes = tf.range(size)
    return tf.reduce_min(tf.where(is_max, indexes, size), axis=axis)


def _row_of(values: tf.Tensor, rows: tf.Tensor) -> tf.Tensor:
    """values[rows], zeros where a row is -1 (also when `values` has no rows at all)."""
    zeros = tf.zeros(tf.concat([[1], tf.shape(values)[1:]], 0), values.dtype)
    padded = tf.concat([values, zeros], 0)
    return tf.gather(padded, tf.where(rows >= 0, rows, tf.shape(values)[0]))


class _Doc(NamedTuple):
    """The batch's contexts as WordPiece tokens, with the maps back to their words."""
    batch: tf.Tensor  # int32 scalar: questions
    words: tf.RaggedTensor  # [batch, (words)] the contexts' whitespace-separated words
    word_byte_starts: tf.RaggedTensor  # [batch, (words)] byte offsets in the context
    word_byte_ends: tf.RaggedTensor
    tokens: tf.Tensor  # int32 [all tokens]: every context's tokens, one after another
    splits: tf.Tensor  # int32 [batch + 1]: context i's tokens are tokens[splits[i]:splits[i+1]]
    tok_to_orig: tf.Tensor  # int32 [all tokens]: the token's word, within its context


class SquadExport(TaskExport):
    """A `BertSpanLabeler` answering raw questions on raw contexts (see the module docstring).

    Args:
      model: the fine-tuned span labeler, weights loaded.
      tokenizer: its tokenizer.
      settings: run_squad's settings (max_seq_length the fine-tuning's).
    """

    def __init__(self, model: BertSpanLabeler, tokenizer: FullTokenizer,
                 settings: SquadSettings = SquadSettings()):
        super().__init__(model, tokenizer)
        self.settings = settings
        self._basic = BasicTokenizer(lower_case=tokenizer.do_lower_case)
        self._id_to_token = [tokenizer.inv_vocab[i] for i in range(len(tokenizer.inv_vocab))]

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)] * 2, autograph=False)
    def __call__(self, question, context):
        s = self.settings
        check = tf.debugging.assert_equal(
            tf.size(question), tf.size(context),
            message="question and context must have the same number of texts")
        with tf.control_dependencies([check]):
            question, context = clean_utf8(question), clean_utf8(context)
        doc, windows, inputs = self._features(question, context)
        logits = self.model(inputs, training=False)
        start_logits = tf.cast(logits["start_logits"], tf.float64)
        end_logits = tf.cast(logits["end_logits"], tf.float64)
        has_answer, score, first_token, last_token = self._best_spans(
            doc, windows, start_logits, end_logits)
        answer, answer_start, answer_end = self._span_text(doc, context, has_answer,
                                                           first_token, last_token)
        outputs = {}
        if s.version_2_with_negative:
            # The no-answer score: the lowest [CLS] start + end over the question's windows.
            score_null = tf.math.unsorted_segment_min(start_logits[:, 0] + end_logits[:, 0],
                                                      windows.example, doc.batch)
            # No window (no context tokens): the original's initial null score.
            score_null = tf.where(windows.count > 0, score_null, 1000000.0)
            null_diff = score_null - tf.where(has_answer, score, 0.0)
            is_null = null_diff > s.null_score_diff_threshold
            has_answer = has_answer & ~is_null
            score = tf.where(is_null, score_null, score)
            outputs["null_score_diff"] = tf.cast(null_diff, tf.float32)
        outputs.update({
            "answer": tf.where(has_answer, answer, ""),
            "score": tf.cast(tf.where(score > _NO_SCORE, score, 0.0), tf.float32),
            "answer_start": tf.where(has_answer, answer_start, -1),
            "answer_end": tf.where(has_answer, answer_end, -1),
        })
        return outputs

    def _features(self, question, context) -> tuple[_Doc, doc_windows.DocWindows, dict]:
        """Step 1: the contexts' tokens, the windows and the encoder inputs [windows, seq]."""
        s = self.settings
        batch = tf.shape(question, out_type=tf.int32)[0]
        query = self._tokenizer.tokenize_tf(question)[:, :s.max_query_length]
        word_strings, word_byte_starts, word_byte_ends = words.split_whitespace(context)
        pieces = self._tokenizer.tokenize_tf(word_strings.flat_values)
        tokens = word_strings.with_flat_values(pieces).merge_dims(1, 2)
        # Each token's word, numbered within its context (the original's tok_to_orig_index).
        word_in_context = tf.ragged.range(word_strings.row_lengths()).flat_values
        doc = _Doc(batch=batch, words=word_strings, word_byte_starts=word_byte_starts,
                   word_byte_ends=word_byte_ends, tokens=tokens.flat_values,
                   splits=tf.cast(tokens.row_splits, tf.int32),
                   tok_to_orig=tf.repeat(tf.cast(word_in_context, tf.int32),
                                         tf.cast(pieces.row_lengths(), tf.int32)))

        num_tokens = doc.splits[1:] - doc.splits[:-1]
        windows = doc_windows.doc_windows(num_tokens, tf.cast(query.row_lengths(), tf.int32),
                                          s.max_seq_length, s.doc_stride)
        first_token = tf.gather(doc.splits, windows.example) + windows.start
        # Each window's tokens, as indexes into doc.tokens.
        window_tokens = tf.ragged.range(first_token, first_token + windows.length)
        inputs = packing.pack_inputs(
            [tf.gather(query, windows.example), tf.gather(doc.tokens, window_tokens)],
            s.max_seq_length, self._cls_id, self._sep_id)
        return doc, windows, inputs

    def _best_spans(self, doc: _Doc, windows: doc_windows.DocWindows, start_logits, end_logits):
        """Step 3: per question, whether it has a span, its score and its first and last
        token (indexes into doc.tokens)."""
        s = self.settings
        k = min(s.n_best_size, s.max_seq_length)
        starts = tf.repeat(tf.math.top_k(start_logits, k).indices, k, axis=1)  # start-major:
        ends = tf.tile(tf.math.top_k(end_logits, k).indices, [1, k])  # [windows, k * k]
        begin = windows.offset[:, None]  # (top_k: on ties the lower index first)
        end = (windows.offset + windows.length)[:, None]
        valid = ((starts >= begin) & (starts < end) & (ends >= begin) & (ends < end)
                 & (ends >= starts) & (ends - starts + 1 <= s.max_answer_length)
                 & tf.gather(self._max_context(windows), starts, batch_dims=1))
        scores = tf.where(valid, tf.gather(start_logits, starts, batch_dims=1)
                          + tf.gather(end_logits, ends, batch_dims=1), _NO_SCORE)
        in_window = _first_max(scores)
        window_score = tf.reduce_max(scores, axis=1)
        best_score = tf.math.unsorted_segment_max(window_score, windows.example, doc.batch)
        is_best = window_score >= tf.gather(best_score, windows.example)
        best_window = tf.math.unsorted_segment_min(
            tf.where(is_best, tf.range(tf.size(windows.example)), tf.int32.max),
            windows.example, doc.batch)
        # (Not best_score > -inf: a segment max starts from the lowest float, not -inf.)
        has_answer = tf.math.unsorted_segment_max(
            tf.cast(tf.reduce_any(valid, axis=1), tf.int32), windows.example, doc.batch) > 0
        best_window = tf.where(has_answer, best_window, -1)
        pick = _row_of(in_window, best_window)[:, None]
        start_position = tf.gather(_row_of(starts, best_window), pick, batch_dims=1)[:, 0]
        end_position = tf.gather(_row_of(ends, best_window), pick, batch_dims=1)[:, 0]
        # Window positions -> tokens of the batch's contexts.
        base = (_row_of(tf.gather(doc.splits, windows.example) + windows.start, best_window)
                - _row_of(windows.offset, best_window))
        return (has_answer, tf.where(has_answer, best_score, _NO_SCORE),
                tf.where(has_answer, base + start_position, -1),
                tf.where(has_answer, base + end_position, -1))

    def _span_text(self, doc: _Doc, context, has_answer, first_token, last_token):
        """Step 4: the answer text and its character [start, end) in the context."""
        span_tokens = tf.gather(doc.tokens, tf.ragged.range(tf.maximum(first_token, 0),
                                                            last_token + 1))
        first_word = _row_of(doc.tok_to_orig, first_token)
        last_word = tf.where(has_answer, _row_of(doc.tok_to_orig, last_token), -1)
        # tok_to_orig counts words within a context; these index all the batch's words.
        word_splits = tf.cast(doc.words.row_splits[:-1], tf.int32)
        word_range = tf.ragged.range(word_splits + first_word, word_splits + last_word + 1)
        span_starts, span_ends = (
            tf.gather(words.char_offsets(context, offsets).flat_values, word_range)
            for offsets in (doc.word_byte_starts, doc.word_byte_ends))
        return self._final_text(span_tokens, tf.gather(doc.words.flat_values, word_range),
                                span_starts, span_ends)

    def _max_context(self, windows: doc_windows.DocWindows) -> tf.Tensor:
        """bool [windows, max_seq_length]: the window is its token's "max context" window
        (`official.features.doc_windows.max_context`); False outside the window's context."""
        is_max = doc_windows.max_context(windows)
        owner = tf.cast(is_max.value_rowids(), tf.int32)
        column = (tf.gather(windows.offset, owner)
                  + tf.cast(tf.ragged.range(windows.length).flat_values, tf.int32))
        return tf.scatter_nd(tf.stack([owner, column], axis=1),
                             tf.cast(is_max.flat_values, tf.int32),
                             [tf.size(windows.example), self.settings.max_seq_length]) > 0

    def _final_text(self, span_tokens, span_words, span_starts, span_ends):
        """The original's `get_final_text` for each question's span, and its character range
        in the context.

        Args (ragged [batch, (n)]): the span's token ids; its words, and their character
        [start, end) in the context.
        Returns: answer string [batch], answer_start and answer_end int32 [batch].
        """
        pieces = tf.gather(tf.constant(self._id_to_token), span_tokens)
        pred_text = tf.strings.reduce_join(pieces, axis=1, separator=" ")
        pred_text = tf.strings.regex_replace(pred_text, " ##", "")
        pred_text = tf.strings.regex_replace(pred_text, "##", "")
        pred_text = tf.strings.strip(tf.strings.regex_replace(pred_text, " +", " "))
        orig_text = tf.strings.reduce_join(span_words, axis=1, separator=" ")
        basic_text = tf.strings.reduce_join(self._basic.tokenize(orig_text), axis=1,
                                            separator=" ")
        # Where each word starts in orig_text (characters), to map the answer back.
        word_lengths = span_ends - span_starts
        in_orig = tf.cumsum(word_lengths + 1, axis=1, exclusive=True)

        def one(args):
            pred, orig, basic, orig_word_starts, context_word_starts = args
            return tf.cond(tf.size(orig_word_starts) > 0,
                           lambda: located(pred, orig, basic, orig_word_starts,
                                           context_word_starts),
                           lambda: (tf.constant(""), tf.constant(-1), tf.constant(-1)))

        def located(pred, orig, basic, orig_word_starts, context_word_starts):
            first_char, last_char = _project(pred, orig, basic)
            # orig_text position -> (word, offset in it) -> context position.
            start_word = tf.searchsorted(orig_word_starts, first_char[None], side="right")[0] - 1
            end_word = tf.searchsorted(orig_word_starts, last_char[None], side="right")[0] - 1
            context_start = (tf.gather(context_word_starts, start_word) + first_char
                             - tf.gather(orig_word_starts, start_word))
            context_end = (tf.gather(context_word_starts, end_word) + last_char
                           - tf.gather(orig_word_starts, end_word) + 1)
            text = tf.strings.substr(orig, first_char, last_char - first_char + 1,
                                     unit="UTF8_CHAR")
            return text, context_start, context_end

        return tf.map_fn(
            one, (pred_text, orig_text, basic_text, in_orig, span_starts),
            fn_output_signature=(tf.TensorSpec([], tf.string), tf.TensorSpec([], tf.int32),
                                 tf.TensorSpec([], tf.int32)))

    def signatures(self) -> dict:
        """`serving_default`: question and context [batch] strings -> the outputs above."""
        serve = tf.function(lambda question, context: self(question, context), input_signature=[
            tf.TensorSpec([None], tf.string, name="question"),
            tf.TensorSpec([None], tf.string, name="context")], autograph=False)
        return {"serving_default": serve}


def _project(pred: tf.Tensor, orig: tf.Tensor, basic: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
    """`get_final_text` on scalars: the [first, last] characters of `orig` the predicted text
    stands for; all of `orig` when the projection fails (see squad_decoding.get_final_text).

    pred is found in basic (its first occurrence); if basic and orig have the same characters
    once spaces are removed, they are aligned one to one.
    """
    orig_chars = tf.strings.unicode_decode(orig, "UTF-8")
    basic_chars = tf.strings.unicode_decode(basic, "UTF-8")
    whole = (tf.constant(0), tf.size(orig_chars) - 1)
    pred_length = tf.strings.length(pred, unit="UTF8_CHAR")
    parts = tf.strings.split(basic, sep=tf.where(pred_length > 0, pred, " "), maxsplit=1)
    found = (pred_length > 0) & (tf.size(parts) == 2)

    def aligned():
        start = tf.strings.length(parts[0], unit="UTF8_CHAR")
        end = start + pred_length - 1
        orig_kept = tf.cast(tf.where(orig_chars != 32)[:, 0], tf.int32)
        basic_is_char = basic_chars != 32
        # The index among basic's non-space characters of each position.
        basic_index = tf.cumsum(tf.cast(basic_is_char, tf.int32)) - 1
        ok = ((tf.size(orig_kept) == tf.reduce_sum(tf.cast(basic_is_char, tf.int32)))
              & tf.gather(basic_is_char, start) & tf.gather(basic_is_char, end))
        last = tf.maximum(tf.size(orig_kept) - 1, 0)
        first_char = tf.gather(orig_kept, tf.minimum(tf.gather(basic_index, start), last))
        last_char = tf.gather(orig_kept, tf.minimum(tf.gather(basic_index, end), last))
        return (tf.where(ok, first_char, whole[0]), tf.where(ok, last_char, whole[1]))

    return tf.cond(found, aligned, lambda: whole)
