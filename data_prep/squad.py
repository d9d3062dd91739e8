"""SQuAD: the JSON reader, the windowed features and their TFRecords, as the original run_squad.py.

google-research/bert's `run_squad.py` algorithm, result for result (the tests compare every field
with the original's):

    read_squad_examples           SQuAD v1.1 / v2.0 JSON -> one `SquadExample` per question, the
                                  context split at whitespace, the answer as a word span
    convert_examples_to_features  each example -> one `InputFeatures` per window of the
                                  WordPiece-tokenized context: [CLS] question [SEP] window [SEP]
    write_features                features -> TFRecords with the original's feature names
    cached_tfrecord               a SQuAD file's TFRecords in an output_dir, made once per
                                  setting (run_squad's data step)

The records hold, per feature (int64; the last three only for training):

    unique_ids       [1]               1000000000, 1000000001, ... in feature order
    input_ids        [max_seq_length]  token ids, 0-padded
    input_mask       [max_seq_length]  1 for real tokens, 0 for padding
    segment_ids      [max_seq_length]  0 for [CLS] question [SEP], 1 for window [SEP]; 0 padding
    start_positions  [1]               the answer's first token, or 0 ([CLS]): no answer here
    end_positions    [1]               its last token, or 0
    is_impossible    [1]               1 for a SQuAD 2.0 question without an answer

Prediction needs the features themselves, not only the records: `token_to_orig_map` and
`token_is_max_context` take the model's logits back to the context's words
(`official.tasks.squad_decoding`).

Example (the repo's sample of the SQuAD v1.1 dev set, two paragraphs of 55 questions, in
windows of 128 tokens, one every 64: two windows a question):
    >>> import os, shutil, tempfile
    >>> tokenizer = FullTokenizer("data/vocab/uncased_vocab.txt", do_lower_case=True)
    >>> examples = read_squad_examples("data/squad/dev-v1.1-sample.json", is_training=False)
    >>> len(examples), examples[0].question_text, examples[0].doc_tokens[:4]
    (55, 'Which NFL team represented the AFC at Super Bowl 50?', ['Super', 'Bowl', '50', 'was'])
    >>> features = list(convert_examples_to_features(examples, tokenizer, max_seq_length=128,
    ...                                              doc_stride=64, max_query_length=64,
    ...                                              is_training=False))
    >>> len(features), features[0].unique_id, len(features[0].input_ids)
    (110, 1000000000, 128)
    >>> " ".join(features[0].tokens[:17])
    '[CLS] which nfl team represented the afc at super bowl 50 ? [SEP] super bowl 50 was'
    >>> folder = tempfile.mkdtemp()
    >>> write_features(features, os.path.join(folder, "eval.tf_record"), is_training=False)
    110
    >>> shutil.rmtree(folder)
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import os
import random
from typing import Any, Iterable, Iterator, Sequence

import numpy as np
import tensorflow as tf
from absl import logging

from data_prep import record_cache
from data_prep.input_errors import InputError
from official.atomic_files import atomic_path
from official.features import doc_windows
from official.tasks.base import Records
from official.tasks.squad import SquadSplit, check_answers
from official.tasks.squad_settings import SquadSettings
from official.text.tokenizer import FullTokenizer

# The original numbers features from here, so a unique_id never looks like an example index.
FIRST_UNIQUE_ID = 1000000000
# Examples tokenized per tokenizer call: big enough that op-call overhead vanishes, small enough
# that the WordPieces of a whole training set are never held at once.
_EXAMPLES_PER_CHUNK = 2000
# The version of the records `cached_tfrecord` writes: a change of format or order bumps it, so
# records cached by an older version are rebuilt.
_FORMAT_VERSION = 1
# The original run_squad shuffles the training examples with this seed before writing them, so
# that a small shuffle buffer still mixes articles.
_TRAIN_SHUFFLE_SEED = 12345


@dataclasses.dataclass
class SquadExample:
    """One question on one paragraph.

    `doc_tokens` are the context's whitespace-separated words, shared (the same list) by the
    questions of a paragraph. The answer fields are set only when reading for training:
    `start_position` / `end_position` index the first and last word of the answer, and are -1
    (with `orig_answer_text` "") for a SQuAD 2.0 question without one.
    """
    qas_id: str
    question_text: str
    doc_tokens: list[str]
    orig_answer_text: str | None = None
    start_position: int | None = None
    end_position: int | None = None
    is_impossible: bool = False


@dataclasses.dataclass
class InputFeatures:
    """One window of an example, as model inputs plus what decoding needs.

    `tokens` are the real tokens, [CLS] question [SEP] window [SEP]; the id lists are padded to
    max_seq_length. `token_to_orig_map` and `token_is_max_context` are keyed by the position in
    `tokens` of each window token: the context word it came from, and whether this window is the
    one whose prediction counts for it (`official.features.doc_windows.max_context`). Training
    features also carry the answer's token positions in this window (0, 0 when it holds none).
    """
    unique_id: int
    example_index: int
    doc_span_index: int
    tokens: list[str]
    token_to_orig_map: dict[int, int]
    token_is_max_context: dict[int, bool]
    input_ids: list[int]
    input_mask: list[int]
    segment_ids: list[int]
    start_position: int | None = None
    end_position: int | None = None
    is_impossible: bool = False


def read_squad_examples(input_file: str, is_training: bool,
                        version_2_with_negative: bool = False) -> list[SquadExample]:
    """Reads a SQuAD JSON file into one `SquadExample` per question, in file order.

    For training, each answerable question must have exactly one answer (SQuAD's train sets do).
    Its character offset becomes a word span; the original then checks that the words there
    contain the answer text (whitespace runs counting as one space) and skips the question,
    with a warning, when they do not: such annotations exist, from odd Unicode in the source.
    Here too each skip is a warning naming the question, and a last warning counts them, so the
    same questions are kept as by the original. With `version_2_with_negative`, training reads
    each question's `is_impossible`.

    Raises:
      InputError (a ValueError) with a one-line message naming the file, and the question where
      there is one: a missing file, text that is not JSON, a missing or mistyped key, a training
      question without exactly one answer, an answer outside its context.
    """
    data = _load_json(input_file)
    examples, skipped = [], 0
    questions = 0
    for article_index, article in enumerate(_get(data, "data", list, input_file, "the top level")):
        paragraphs = _get(article, "paragraphs", list, input_file, f"article {article_index}")
        for paragraph_index, paragraph in enumerate(paragraphs):
            in_paragraph = f"article {article_index} paragraph {paragraph_index}"
            context = _get(paragraph, "context", str, input_file, in_paragraph)
            doc_tokens, char_to_word_offset = split_context(context)
            for qa in _get(paragraph, "qas", list, input_file, in_paragraph):
                qas_id = _get(qa, "id", str, input_file, in_paragraph)
                where = f"question {qas_id}"
                example = SquadExample(qas_id, _get(qa, "question", str, input_file, where),
                                       doc_tokens)
                questions += 1
                if is_training:
                    if version_2_with_negative:
                        example.is_impossible = _get(qa, "is_impossible", bool, input_file, where)
                    answers = _get(qa, "answers", list, input_file, where)
                    if example.is_impossible:
                        example.orig_answer_text = ""
                        example.start_position = example.end_position = -1
                    elif len(answers) != 1:
                        raise InputError(f"{input_file}: {where}: training needs exactly 1 "
                                         f"answer per question, got {len(answers)}")
                    elif not _locate_answer(example, answers[0], context, char_to_word_offset,
                                            input_file):
                        skipped += 1
                        continue
                examples.append(example)
    if skipped:
        logging.warning("%s: skipped %d of %d questions whose answer is not at its answer_start "
                        "(as the original does)", input_file, skipped, questions)
    return examples


def split_context(context: str) -> tuple[list[str], list[int]]:
    """The original's split of a context into words, and each character's word.

    Words are separated by runs of " ", "\\t", "\\r", "\\n" and U+202F (narrow no-break space)
    only: other Unicode spaces stay inside words, as in the original. `char_to_word_offset[i]`
    is the word holding character i; a separator belongs to the word before it (-1 before the
    first word).

        split_context("The (1895-1943) era")
        # (["The", "(1895-1943)", "era"], [0, 0, 0, 0, 1, 1, ..., 1, 1, 2, 2, 2])
    """
    doc_tokens: list[str] = []
    char_to_word_offset = []
    previous_is_separator = True
    for char in context:
        if char in " \t\r\n\u202f":
            previous_is_separator = True
        else:
            if previous_is_separator:
                doc_tokens.append(char)
            else:
                doc_tokens[-1] += char
            previous_is_separator = False
        char_to_word_offset.append(len(doc_tokens) - 1)
    return doc_tokens, char_to_word_offset


def _locate_answer(example: SquadExample, answer: Any, context: str,
                   char_to_word_offset: list[int], input_file: str) -> bool:
    """Sets the example's answer text and word span; False if the words there do not hold it."""
    where = f"question {example.qas_id}"
    text = _get(answer, "text", str, input_file, where)
    answer_start = _get(answer, "answer_start", int, input_file, where)
    if not text or answer_start < 0 or answer_start + len(text) > len(context):
        raise InputError(f"{input_file}: {where}: answer {text!r} at answer_start {answer_start} "
                         f"is not inside the context ({len(context)} characters)")
    example.orig_answer_text = text
    example.start_position = char_to_word_offset[answer_start]
    example.end_position = char_to_word_offset[answer_start + len(text) - 1]
    found = " ".join(example.doc_tokens[example.start_position:example.end_position + 1])
    if found.find(" ".join(text.split())) == -1:
        logging.warning("%s: %s: answer %r is not at answer_start %d (the words there are %r); "
                        "skipped", input_file, where, text, answer_start, found)
        return False
    return True


def _load_json(input_file: str) -> Any:
    try:
        with open(input_file, encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        raise InputError(f"{input_file}: no such file") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise InputError(f"{input_file}: not valid JSON: {e}") from None


def _get(obj: Any, key: str, kind: type, input_file: str, where: str) -> Any:
    """obj[key], which must be a `kind`; otherwise a one-line InputError saying where."""
    if not isinstance(obj, dict) or key not in obj:
        raise InputError(f"{input_file}: {where}: missing key {key!r}")
    value = obj[key]
    # bool is an int in Python, but `"answer_start": true` is no offset.
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise InputError(f"{input_file}: {where}: {key!r} is {type(value).__name__}, "
                         f"not {kind.__name__}")
    return value


@dataclasses.dataclass
class _WordPieceDoc:
    """A context as WordPiece tokens, with the maps between tokens and the context's words."""
    tokens: list[str]
    tok_to_orig_index: list[int]
    orig_to_tok_index: list[int]


def convert_examples_to_features(examples: list[SquadExample], tokenizer: FullTokenizer,
                                 max_seq_length: int, doc_stride: int, max_query_length: int,
                                 is_training: bool) -> Iterator[InputFeatures]:
    """The features of `examples`, in order: one per window of each example's context.

    The question keeps its first `max_query_length` tokens. The context, tokenized word by word
    (so every token knows its word), is cut into windows of max_seq_length - len(question) - 3
    tokens, each starting `doc_stride` tokens after the last, until one reaches the end
    (`official.features.doc_windows`, the rule the serving graph windows by too). In
    training, a window without the whole answer, and every window of an impossible question,
    points at [CLS] (start = end = 0).

    Features are generated lazily, a chunk of examples tokenized at a time, so a training set
    streams to `write_features` without being held whole.

    Raises:
      ValueError: max_seq_length leaves no room for the context, or doc_stride is not positive
        (the original would loop forever); raised at the call, before any feature is made.
    """
    SquadSettings(max_seq_length=max_seq_length, doc_stride=doc_stride,
                  max_query_length=max_query_length)  # checks them
    return _generate_features(examples, tokenizer, max_seq_length, doc_stride, max_query_length,
                              is_training)


def _generate_features(examples: list[SquadExample], tokenizer: FullTokenizer,
                       max_seq_length: int, doc_stride: int, max_query_length: int,
                       is_training: bool) -> Iterator[InputFeatures]:
    unique_ids = itertools.count(FIRST_UNIQUE_ID)
    for chunk_start in range(0, len(examples), _EXAMPLES_PER_CHUNK):
        chunk = examples[chunk_start:chunk_start + _EXAMPLES_PER_CHUNK]
        queries = tokenizer.tokenize_batch([e.question_text for e in chunk])
        docs = _tokenize_docs(chunk, tokenizer)
        answers = tokenizer.tokenize_batch(
            [e.orig_answer_text if is_training and not e.is_impossible else "" for e in chunk])
        queries = [query[:max_query_length] for query in queries]
        windows = _chunk_windows([len(doc.tokens) for doc in docs],
                                 [len(query) for query in queries], max_seq_length, doc_stride)
        for offset, (example, query, doc, answer, example_windows) in enumerate(
                zip(chunk, queries, docs, answers, windows)):
            yield from _example_features(
                example, chunk_start + offset, query, doc, answer, example_windows,
                unique_ids, tokenizer, max_seq_length, is_training)


@dataclasses.dataclass(frozen=True)
class _Window:
    """A window of a context's WordPiece tokens: `length` tokens from `start`; `is_max_context`
    says, token by token, whether this window is the one whose prediction counts for it."""
    start: int
    length: int
    is_max_context: list[bool]


def _chunk_windows(num_tokens: list[int], query_lengths: list[int], max_seq_length: int,
                   doc_stride: int) -> list[list[_Window]]:
    """Each example's windows, by official.features.doc_windows (the serving graph's rule) in
    one call for the chunk."""
    windows = doc_windows.doc_windows(np.array(num_tokens, np.int32),
                                      np.array(query_lengths, np.int32), max_seq_length,
                                      doc_stride)
    is_max = doc_windows.max_context(windows)
    flags = np.split(is_max.flat_values.numpy().tolist(), is_max.row_splits.numpy()[1:-1])
    starts, lengths = windows.start.numpy().tolist(), windows.length.numpy().tolist()
    made = [_Window(start, length, window_flags.tolist())
            for start, length, window_flags in zip(starts, lengths, flags)]
    splits = np.cumsum([0] + windows.count.numpy().tolist())
    return [made[begin:end] for begin, end in zip(splits[:-1], splits[1:])]


def _tokenize_docs(examples: list[SquadExample],
                   tokenizer: FullTokenizer) -> list[_WordPieceDoc]:
    """Each example's context as WordPieces: one tokenizer call, each paragraph once.

    Tokenizing the words one by one, as the original does, gives the same tokens as tokenizing
    the context (whitespace only separates words) and tells which word each token is from.
    """
    distinct: dict[int, list[str]] = {}  # id(doc_tokens) -> doc_tokens: a paragraph's questions
    for example in examples:             # share the list
        distinct.setdefault(id(example.doc_tokens), example.doc_tokens)
    words = [word for doc_tokens in distinct.values() for word in doc_tokens]
    pieces = iter(tokenizer.tokenize_batch(words))
    docs = {}
    for key, doc_tokens in distinct.items():
        doc = _WordPieceDoc([], [], [])
        for word_index in range(len(doc_tokens)):
            doc.orig_to_tok_index.append(len(doc.tokens))
            for piece in next(pieces):
                doc.tok_to_orig_index.append(word_index)
                doc.tokens.append(piece)
        docs[key] = doc
    return [docs[id(example.doc_tokens)] for example in examples]


def _example_features(example: SquadExample, example_index: int, query_tokens: list[str],
                      doc: _WordPieceDoc, answer_tokens: list[str], spans: list[_Window],
                      unique_ids: Iterator[int], tokenizer: FullTokenizer, max_seq_length: int,
                      is_training: bool) -> Iterator[InputFeatures]:
    tok_start = tok_end = None
    if is_training and not example.is_impossible:
        tok_start = doc.orig_to_tok_index[example.start_position]
        if example.end_position < len(example.doc_tokens) - 1:
            tok_end = doc.orig_to_tok_index[example.end_position + 1] - 1
        else:
            tok_end = len(doc.tokens) - 1
        tok_start, tok_end = _improve_answer_span(doc.tokens, tok_start, tok_end, answer_tokens)

    for span_index, span in enumerate(spans):
        tokens = ["[CLS]", *query_tokens, "[SEP]"]
        segment_ids = [0] * len(tokens)
        token_to_orig_map, token_is_max_context = {}, {}
        for split_token_index, is_max_context in zip(range(span.start, span.start + span.length),
                                                     span.is_max_context):
            token_to_orig_map[len(tokens)] = doc.tok_to_orig_index[split_token_index]
            token_is_max_context[len(tokens)] = is_max_context
            tokens.append(doc.tokens[split_token_index])
            segment_ids.append(1)
        tokens.append("[SEP]")
        segment_ids.append(1)
        padding = [0] * (max_seq_length - len(tokens))

        start_position = end_position = None
        if is_training:
            span_end = span.start + span.length - 1
            if example.is_impossible or not span.start <= tok_start <= tok_end <= span_end:
                start_position = end_position = 0
            else:
                doc_offset = len(query_tokens) + 2  # [CLS] question [SEP]
                start_position = tok_start - span.start + doc_offset
                end_position = tok_end - span.start + doc_offset

        yield InputFeatures(
            unique_id=next(unique_ids), example_index=example_index, doc_span_index=span_index,
            tokens=tokens, token_to_orig_map=token_to_orig_map,
            token_is_max_context=token_is_max_context,
            input_ids=tokenizer.convert_tokens_to_ids(tokens) + padding,
            input_mask=[1] * len(tokens) + padding, segment_ids=segment_ids + padding,
            start_position=start_position, end_position=end_position,
            is_impossible=example.is_impossible)


def _improve_answer_span(doc_tokens: list[str], input_start: int, input_end: int,
                         answer_tokens: list[str]) -> tuple[int, int]:
    """The token span of the answer within the span of its words, when it can be found.

    The original's explanation: the SQuAD annotations are character based. We first project
    them to whitespace-tokenized words. But then after WordPiece tokenization, we can often find
    a "better match". For example:

        Question: What year was John Smith born?
        Context: The leader was John Smith (1895-1943).
        Answer: 1895

    The original whitespace-tokenized answer will be "(1895-1943).". However after
    tokenization, our tokens will be "( 1895 - 1943 ) .". So we can match the exact answer,
    1895.

    However, this is not always possible. Consider the following:

        Question: What country is the top exporter of electronics?
        Context: The Japanese electronics industry is the largest in the world.
        Answer: Japan

    In this case, the annotator chose "Japan" as a character sub-span of the word "Japanese".
    Since our WordPiece tokenizer does not split "Japanese", we just use "Japanese" as the
    annotation. This is fairly rare in SQuAD, but does happen.

    `answer_tokens` is the tokenized answer text; the first (leftmost) match wins.
    """
    # Tokens never hold a space, so comparing lists is comparing the original's joined strings.
    length = len(answer_tokens)
    if length:
        for new_start in range(input_start, input_end - length + 2):
            if doc_tokens[new_start:new_start + length] == answer_tokens:
                return new_start, new_start + length - 1
    return input_start, input_end


def parse_spec(max_seq_length: int, is_training: bool) -> dict[str, tf.io.FixedLenFeature]:
    """The reader's side of the records: `tf.io.parse_example(records, parse_spec(384, True))`.

    The original's `input_fn` reads all but `is_impossible`, which it writes and never reads.
    """
    seq = [max_seq_length]
    spec = {
        "unique_ids": tf.io.FixedLenFeature([], tf.int64),
        "input_ids": tf.io.FixedLenFeature(seq, tf.int64),
        "input_mask": tf.io.FixedLenFeature(seq, tf.int64),
        "segment_ids": tf.io.FixedLenFeature(seq, tf.int64),
    }
    if is_training:
        for name in ("start_positions", "end_positions", "is_impossible"):
            spec[name] = tf.io.FixedLenFeature([], tf.int64)
    return spec


def write_features(features: Iterable[InputFeatures], output_file: str,
                   is_training: bool) -> int:
    """Writes one tf.train.Example per feature to the TFRecord file `output_file`; returns how
    many. The file appears only once complete (written under a temp name, then renamed)."""
    count = 0
    with atomic_path(output_file) as tmp_path, tf.io.TFRecordWriter(tmp_path) as writer:
        for feature in features:
            writer.write(_to_example(feature, is_training).SerializeToString(deterministic=True))
            count += 1
    return count


def _to_example(feature: InputFeatures, is_training: bool) -> tf.train.Example:
    values = {
        "unique_ids": [feature.unique_id],
        "input_ids": feature.input_ids,
        "input_mask": feature.input_mask,
        "segment_ids": feature.segment_ids,
    }
    if is_training:
        values["start_positions"] = [feature.start_position]
        values["end_positions"] = [feature.end_position]
        values["is_impossible"] = [int(feature.is_impossible)]
    return tf.train.Example(features=tf.train.Features(feature={
        name: tf.train.Feature(int64_list=tf.train.Int64List(value=value))
        for name, value in values.items()}))


def cached_tfrecord(input_file: str, examples: list[SquadExample], tokenizer: FullTokenizer,
                    output_dir: str, *, max_seq_length: int, doc_stride: int,
                    max_query_length: int, is_training: bool, version_2_with_negative: bool,
                    features: Sequence[InputFeatures] | None = None
                    ) -> record_cache.CachedRecords:
    """The records of `examples` (read from `input_file`) in output_dir, made only when needed.

    The file is `<input_file's name>.train.tf_record` (training features, the examples shuffled
    first as the original does) or `.predict.tf_record`, cached (data_prep/record_cache.py)
    under every setting above, do_lower_case, the format version and the sha256 of the vocab
    file and of `input_file`.

    Args:
      examples: `read_squad_examples(input_file, is_training, version_2_with_negative)`.
      features: for prediction, the examples' features when the caller has them already
        (decoding needs them in memory); converted here otherwise.
    Returns:
      the records, with facts data_file, num_examples (the file's questions, the original's
      count for the number of training steps) and num_features (the records, one per window).
    """
    if is_training and features is not None:
        raise ValueError("training features are made here, from the shuffled examples")
    key = {"format": _FORMAT_VERSION, "is_training": is_training,
           "version_2_with_negative": version_2_with_negative, "max_seq_length": max_seq_length,
           "doc_stride": doc_stride, "max_query_length": max_query_length,
           "do_lower_case": tokenizer.do_lower_case,
           "vocab_sha256": record_cache.sha256_of_file(tokenizer.vocab_file),
           "data_sha256": record_cache.sha256_of_file(input_file)}
    name = os.path.basename(input_file) + (".train" if is_training else ".predict")
    path = os.path.join(output_dir, name + ".tf_record")

    def make() -> dict:
        made = features
        if made is None:
            ordered = examples
            if is_training:
                ordered = list(examples)
                random.Random(_TRAIN_SHUFFLE_SEED).shuffle(ordered)
            made = convert_examples_to_features(ordered, tokenizer, max_seq_length, doc_stride,
                                                max_query_length, is_training)
        return {"data_file": input_file, "num_examples": len(examples),
                "num_features": write_features(made, path, is_training)}

    return record_cache.cached(path, key, make)


class SquadData:
    """run_squad's data (`official.tasks.base.TaskData`): `train_file` for "train",
    `predict_file` for both "dev" and "test" (the original evaluates its predictions), as cached
    records in `output_dir`. The count that sets the updates is the training file's questions,
    not its windows, as the original counts.

    Args:
      settings: run_squad's flags; the features read max_seq_length, doc_stride,
        max_query_length and version_2_with_negative.
      vocab_file, do_lower_case: the tokenizer's, read by `read` (after the run's checks).
    """

    def __init__(self, train_file: str | None, predict_file: str | None, settings: SquadSettings,
                 vocab_file: str, do_lower_case: bool, output_dir: str):
        self.files = {"train": train_file, "dev": predict_file, "test": predict_file}
        self.settings, self.output_dir = settings, output_dir
        self.vocab_file, self.do_lower_case = vocab_file, do_lower_case
        self._train: list[SquadExample] = []
        self._predict: SquadSplit | None = None
        self._made: dict[bool, Records] = {}

    def source(self, split: str) -> str:
        return self.files[split]

    def read(self, splits: Sequence[str]) -> int | None:
        self.tokenizer = FullTokenizer(self.vocab_file, self.do_lower_case)
        v2 = self.settings.version_2_with_negative
        if "train" in splits:
            self._train = read_squad_examples(self.files["train"], True, v2)
            if not self._train:
                raise ValueError(f"{self.files['train']}: no question to train on")
        if "dev" in splits or "test" in splits:
            path = self.files["test"]
            examples = read_squad_examples(path, False, v2)
            with open(path, encoding="utf-8") as f:
                gold = json.load(f)
            try:
                check_answers(gold, path, v2)
            except ValueError:
                if "dev" in splits:  # evaluating needs the answers; predicting does not
                    raise
                gold = None
            features = list(convert_examples_to_features(
                examples, self.tokenizer, is_training=False, **self._feature_settings()))
            self._predict = SquadSplit(examples, features, gold)
        return len(self._train) if "train" in splits else None

    def records(self, split: str) -> Records:
        is_training = split == "train"
        if is_training not in self._made:
            path = self.files[split]
            made = cached_tfrecord(
                path, self._train if is_training else self._predict.examples, self.tokenizer,
                self.output_dir, is_training=is_training,
                version_2_with_negative=self.settings.version_2_with_negative,
                features=None if is_training else self._predict.features,
                **self._feature_settings())
            self._made[is_training] = Records(
                made.path, parse_spec(self.settings.max_seq_length, is_training),
                made.facts["num_examples"], made.facts["num_features"], path, made.reused,
                None if is_training else self._predict)
        return self._made[is_training]

    def _feature_settings(self) -> dict[str, int]:
        s = self.settings
        return dict(max_seq_length=s.max_seq_length, doc_stride=s.doc_stride,
                    max_query_length=s.max_query_length)
