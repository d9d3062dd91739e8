"""Classifier features: `InputExample`s -> fixed-length token ids, and their TFRecord files.

The conversion is google-research/bert's `convert_single_example`: tokens are
`[CLS] a [SEP]` or `[CLS] a [SEP] b [SEP]`, a pair too long loses tokens from the end of its
longer text one at a time (`official.features.pair_truncation`, the rule serving cuts by too),
single texts are cut at the end, and everything is 0-padded. The files are those of the
original's `file_based_convert_examples_to_features`, one `tf.train.Example` per example:

    input_ids        int64    [max_seq_length]  token ids, 0-padded
    input_mask       int64    [max_seq_length]  1 for real tokens, 0 for padding
    segment_ids      int64    [max_seq_length]  0 for [CLS] a [SEP], 1 for b [SEP]; 0 padding
    label_ids        int64    [1]               the label's index in the task's label list;
                     float32  [1]               the score itself for a regression task (STS-B,
                                                which the original did not have)
    is_real_example  int64    [1]               0 for a `PaddingInputExample`, and for an
                                                unlabelled `TransferExample` (label id 0)

A reader parses `label_ids` and `is_real_example` as scalars (`FixedLenFeature([], ...)`), as
the original's did. `cached_tfrecord` makes a task split's file once per set of settings.

Documents longer than a row (official/tasks/long_doc_settings.py, single texts): head_tail keeps
a text's head and tail tokens (`official.features.long_text.head_tail`, the serving graph's
rule too) in the same records. windows writes one record per document holding all its windows
(`official.features.long_text.window_rows`), a training document at most max_windows of them
spread evenly from its first to its last (`spread_windows`):

    input_ids, input_mask, segment_ids   int64 [windows * max_seq_length]  the rows, in order
    label_ids, is_real_example           as above, one per document

parsed as `tf.io.RaggedFeature`s of rows ([documents, (windows), max_seq_length]), which
official/training/finetuning_input.py turns into the model's window rows.

A distillation's transfer data (`read_transfer_file`: unlabelled texts a teacher labels, Turc et
al. 2019) joins the training records as rows with is_real_example 0, so the task's own loss and
metrics skip them while the teacher's soft targets cover them.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import os
from typing import Iterable, Sequence

import numpy as np
import tensorflow as tf
from absl import logging

from data_prep import record_cache
from data_prep.attack_data import read_adversarial_examples
from data_prep.example_bytes import ExampleSerializer
from data_prep.glue import InputExample, TaskProcessor, TsvError, read_tfds
from official.atomic_files import atomic_path
from official.features.long_text import head_tail, window_rows
from official.features.pair_truncation import truncated_pair_lengths
from official.tasks.base import Records
from official.tasks.long_doc_settings import LongDocSettings
from official.text.tokenizer import FullTokenizer

# Examples tokenized per op call: big enough that the op's overhead vanishes, small enough
# that a chunk's arrays stay a few MB.
_CHUNK = 4096
# Part of every cache key: raise it when the records written for the same settings change.
_FORMAT_VERSION = 1


@dataclasses.dataclass(frozen=True)
class PaddingInputExample:
    """A stand-in example that makes all-zero features with is_real_example 0.

    The original padded eval and predict sets with these to a multiple of the batch size,
    because a TPU needs every batch full; metrics weight examples by is_real_example.
    """


@dataclasses.dataclass(frozen=True)
class TransferExample(InputExample):
    """An unlabelled example of a distillation's transfer data: real tokens, is_real_example
    0 (the task's loss skips it), label id 0."""


def read_transfer_file(path: str, pair: bool) -> list[TransferExample]:
    """The texts of `path`, one example per line (for a pair task, its two texts separated by
    a tab), empty lines skipped.

    Raises:
      TsvError: no such file, not UTF-8, or a line with the wrong number of texts (naming the
        file and line).
    """
    if not os.path.isfile(path):
        raise TsvError(f"{path}: no such file (--transfer_data)")
    examples = []
    with open(path, encoding="utf-8", newline="") as f:
        try:
            for number, line in enumerate(f, start=1):
                line = line.rstrip("\r\n")
                if not line.strip():
                    continue
                texts = line.split("\t")
                if len(texts) != (2 if pair else 1):
                    raise TsvError(f"{path}:{number}: {len(texts)} tab-separated texts; this "
                                   f"task's transfer data has {2 if pair else 1} per line")
                examples.append(TransferExample(f"transfer-{number}", texts[0],
                                                texts[1] if pair else None, None))
        except UnicodeDecodeError as e:
            raise TsvError(f"{path}: not UTF-8 text ({e.reason} at byte {e.start})") from None
    if not examples:
        raise TsvError(f"{path}: no text in the transfer data")
    return examples


@dataclasses.dataclass(frozen=True)
class InputFeatures:
    """One example's model inputs, as the original's `InputFeatures`: lists of
    max_seq_length ints, and the label id (a float for regression)."""
    input_ids: list[int]
    input_mask: list[int]
    segment_ids: list[int]
    label_id: int | float
    is_real_example: bool = True


def _label_id(example: InputExample, label_map: dict[str, int] | None) -> int | float:
    """The label's index, or its number for regression (label_map None). An unlabelled (test)
    example gets 0, the id of the placeholder label the original gave test examples."""
    if example.label is None:
        return 0 if label_map is not None else 0.0
    if label_map is None:
        try:
            return float(example.label)
        except ValueError:
            raise ValueError(f"{example.guid}: label {example.label!r} is not a number") from None
    if example.label not in label_map:
        raise ValueError(f"{example.guid}: label {example.label!r} is not one of "
                         f"{', '.join(label_map)}")
    return label_map[example.label]


def convert_examples(examples: Sequence[InputExample | PaddingInputExample],
                     label_list: Sequence[str] | None, max_seq_length: int,
                     tokenizer: FullTokenizer, head_tokens: int | None = None
                     ) -> list[InputFeatures]:
    """Features of many examples, tokenized in one op call (the fast path of `convert_example`,
    with the same result for each example).

    Args:
      examples: the examples; a `PaddingInputExample` gives all-zero features.
      label_list: the task's labels (a label's id is its index); None for regression, whose
        labels are numbers and become float label ids.
      max_seq_length: the length of every sequence, [CLS] and [SEP]s included (at least 3).
      tokenizer: the checkpoint's tokenizer.
      head_tokens: --long_doc=head_tail: a single text too long keeps this many tokens of its
        start and the rest of the row from its end; None cuts it at the end (the original).
    """
    if max_seq_length < 3:
        raise ValueError(f"max_seq_length must be at least 3 (a pair's [CLS] and two [SEP]), "
                         f"got {max_seq_length}")
    label_map = None if label_list is None else {label: i for i, label in enumerate(label_list)}
    cls_id, sep_id = tokenizer.convert_tokens_to_ids(["[CLS]", "[SEP]"])
    real = [e for e in examples if isinstance(e, InputExample)]
    # The original tokenizes text_b only when it is non-empty (`if example.text_b`).
    ids = iter(tokenizer.tokenize_batch_ids([e.text_a for e in real]
                                            + [e.text_b for e in real if e.text_b]))
    ids_a = [next(ids) for _ in real]
    ids_b = [next(ids).tolist() if e.text_b else [] for e in real]
    if head_tokens is not None and real:
        kept = head_tail(tf.RaggedTensor.from_row_lengths(
            np.concatenate(ids_a), [len(a) for a in ids_a]), head_tokens, max_seq_length - 2)
        ids_a = np.split(kept.flat_values.numpy(), kept.row_splits.numpy()[1:-1])
    ids_a = [a.tolist() for a in ids_a]
    # Every pair's lengths in one call; a row without b tokens (below) does not use its own.
    pair_lengths = np.stack([length.numpy() for length in truncated_pair_lengths(
        np.array([len(a) for a in ids_a], np.int32), np.array([len(b) for b in ids_b], np.int32),
        max_seq_length - 3)], axis=1)
    features, index = [], 0
    for example in examples:
        if isinstance(example, PaddingInputExample):
            features.append(InputFeatures([0] * max_seq_length, [0] * max_seq_length,
                                          [0] * max_seq_length,
                                          0 if label_map is not None else 0.0, False))
            continue
        a, b = ids_a[index], ids_b[index]
        len_a, len_b = pair_lengths[index]
        index += 1
        # A text_b that tokenizes to nothing (only spaces, say) makes a single-text example
        # in the original too: it tests the tokens (`if tokens_b`), not the text.
        if b:
            tokens = [cls_id, *a[:len_a], sep_id, *b[:len_b], sep_id]
            segments = [0] * (len_a + 2) + [1] * (len_b + 1)
        else:
            tokens = [cls_id, *a[:max_seq_length - 2], sep_id]
            segments = [0] * len(tokens)
        pad = [0] * (max_seq_length - len(tokens))
        features.append(InputFeatures(tokens + pad, [1] * len(tokens) + pad, segments + pad,
                                      _label_id(example, label_map),
                                      not isinstance(example, TransferExample)))
    return features


def convert_example(example: InputExample | PaddingInputExample,
                    label_list: Sequence[str] | None, max_seq_length: int,
                    tokenizer: FullTokenizer) -> InputFeatures:
    """One example's features: the original's `convert_single_example` (see `convert_examples`
    for the arguments)."""
    return convert_examples([example], label_list, max_seq_length, tokenizer)[0]


def write_tfrecord(examples: Iterable[InputExample | PaddingInputExample],
                   label_list: Sequence[str] | None, max_seq_length: int,
                   tokenizer: FullTokenizer, output_file: str,
                   head_tokens: int | None = None) -> int:
    """Writes one record per example (the format in the module docstring); returns the count.
    `head_tokens`: see `convert_examples`.

    The file appears only when complete: a failure (a bad label, say) leaves none.
    """
    regression = label_list is None
    serializer = ExampleSerializer(
        ["input_ids", "input_mask", "segment_ids", "is_real_example"]
        + ([] if regression else ["label_ids"]), ["label_ids"] if regression else [])
    examples = iter(examples)
    count = 0
    with atomic_path(output_file) as tmp, tf.io.TFRecordWriter(tmp) as writer:
        while chunk := list(itertools.islice(examples, _CHUNK)):
            features = convert_examples(chunk, label_list, max_seq_length, tokenizer,
                                        head_tokens)
            batch = {
                "input_ids": np.array([f.input_ids for f in features], np.int64),
                "input_mask": np.array([f.input_mask for f in features], np.int64),
                "segment_ids": np.array([f.segment_ids for f in features], np.int64),
                "label_ids": np.array([[f.label_id] for f in features],
                                      np.float32 if regression else np.int64),
                "is_real_example": np.array([[int(f.is_real_example)] for f in features],
                                            np.int64),
            }
            for record in serializer.serialize(batch):
                writer.write(record)
            count += len(features)
    return count


@dataclasses.dataclass(frozen=True)
class DocumentFeatures:
    """One document's windows (--long_doc=windows) as model rows.

    Attributes:
      input_ids, input_mask: int64 [windows, max_seq_length], rows [CLS] window [SEP], 0-padded.
      label_id: as `InputFeatures`.
    """
    input_ids: np.ndarray
    input_mask: np.ndarray
    label_id: int | float
    is_real_example: bool = True


def spread_windows(count: int, max_windows: int | None) -> np.ndarray:
    """The indexes of the windows a training document keeps: all `count` when they are at most
    max_windows (or it is None), else max_windows of them spread evenly from the first to the
    last (10 windows, 4 kept: 0, 3, 6, 9), so every part of a long document is read."""
    if max_windows is None or count <= max_windows:
        return np.arange(count)
    return np.round(np.linspace(0, count - 1, max_windows)).astype(np.int64)


def convert_documents(examples: Sequence[InputExample | PaddingInputExample],
                      label_list: Sequence[str] | None, max_seq_length: int,
                      tokenizer: FullTokenizer, doc_stride: int,
                      max_windows: int | None = None) -> list[DocumentFeatures]:
    """Each single-text example's windows (`official.features.long_text.window_rows`: windows
    of max_seq_length - 2 tokens every doc_stride tokens), at most max_windows of them
    (`spread_windows`; None keeps all). A `PaddingInputExample` is one all-zero row."""
    label_map = None if label_list is None else {label: i for i, label in enumerate(label_list)}
    cls_id, sep_id = tokenizer.convert_tokens_to_ids(["[CLS]", "[SEP]"])
    real = [e for e in examples if isinstance(e, InputExample)]
    rows = None
    if real:
        made = window_rows(tokenizer.tokenize_batch_ragged([e.text_a for e in real]),
                           max_seq_length, doc_stride, cls_id, sep_id)
        splits = np.cumsum(made.windows.count.numpy())[:-1]
        rows = zip(np.split(made.input_word_ids.numpy().astype(np.int64), splits),
                   np.split(made.input_mask.numpy().astype(np.int64), splits))
    features = []
    for example in examples:
        if isinstance(example, PaddingInputExample):
            zeros = np.zeros([1, max_seq_length], np.int64)
            features.append(DocumentFeatures(zeros, zeros, 0 if label_map is not None else 0.0,
                                             False))
            continue
        input_ids, input_mask = next(rows)
        kept = spread_windows(len(input_ids), max_windows)
        features.append(DocumentFeatures(input_ids[kept], input_mask[kept],
                                         _label_id(example, label_map),
                                         not isinstance(example, TransferExample)))
    return features


def write_document_tfrecord(examples: Iterable[InputExample | PaddingInputExample],
                            label_list: Sequence[str] | None, max_seq_length: int,
                            tokenizer: FullTokenizer, output_file: str, doc_stride: int,
                            max_windows: int | None = None) -> tuple[int, int]:
    """Writes one record per document, all its windows (the module docstring's document
    format; at most max_windows, see `convert_documents`); returns (documents, windows).
    The file appears only when complete."""
    regression = label_list is None
    examples = iter(examples)
    documents = windows = 0
    with atomic_path(output_file) as tmp, tf.io.TFRecordWriter(tmp) as writer:
        while chunk := list(itertools.islice(examples, _CHUNK)):
            for doc in convert_documents(chunk, label_list, max_seq_length, tokenizer,
                                         doc_stride, max_windows):
                label = (tf.train.Feature(float_list=tf.train.FloatList(value=[doc.label_id]))
                         if regression else _int64s([doc.label_id]))
                example = tf.train.Example(features=tf.train.Features(feature={
                    "input_ids": _int64s(doc.input_ids.ravel()),
                    "input_mask": _int64s(doc.input_mask.ravel()),
                    "segment_ids": _int64s(np.zeros(doc.input_ids.size, np.int64)),
                    "label_ids": label,
                    "is_real_example": _int64s([int(doc.is_real_example)])}))
                writer.write(example.SerializeToString(deterministic=True))
                documents += 1
                windows += len(doc.input_ids)
    return documents, windows


def _int64s(values) -> tf.train.Feature:
    return tf.train.Feature(int64_list=tf.train.Int64List(value=[int(v) for v in values]))


def document_parse_spec(max_seq_length: int, regression: bool = False
                        ) -> dict[str, tf.io.FixedLenFeature | tf.io.RaggedFeature]:
    """The reader's side of document records: the rows as [documents, (windows),
    max_seq_length], the label and is_real_example one per document."""
    rows = tf.io.RaggedFeature(
        tf.int64, partitions=(tf.io.RaggedFeature.UniformRowLength(max_seq_length),))
    spec = parse_spec(max_seq_length, regression)
    return dict(spec, input_ids=rows, input_mask=rows, segment_ids=rows)


def parse_spec(max_seq_length: int, regression: bool = False) -> dict[str, tf.io.FixedLenFeature]:
    """The reader's side of the records (the original's `name_to_features`, with a float label
    for regression)."""
    seq = [max_seq_length]
    return {
        "input_ids": tf.io.FixedLenFeature(seq, tf.int64),
        "input_mask": tf.io.FixedLenFeature(seq, tf.int64),
        "segment_ids": tf.io.FixedLenFeature(seq, tf.int64),
        "label_ids": tf.io.FixedLenFeature([], tf.float32 if regression else tf.int64),
        "is_real_example": tf.io.FixedLenFeature([], tf.int64),
    }


def read_split(processor: TaskProcessor, data_dir: str | None, split: str,
               tfds_data_dir: str | None = None) -> list[InputExample]:
    """The split's examples, from the TSV file in `data_dir` or from TensorFlow Datasets'
    prepared data in `tfds_data_dir`; every row is checked (TsvError naming file and line)."""
    if tfds_data_dir is not None:
        return read_tfds(processor.name, split, tfds_data_dir)
    return processor.get_examples(data_dir, split)


def cached_tfrecord(processor: TaskProcessor, data_dir: str | None, split: str,
                    max_seq_length: int, tokenizer: FullTokenizer, output_dir: str,
                    pad_to_multiple: int = 1, tfds_data_dir: str | None = None,
                    examples: Sequence[InputExample] | None = None,
                    transfer: tuple[str, Sequence[TransferExample]] | None = None,
                    long_doc: LongDocSettings = LongDocSettings(),
                    augmentation: tuple[str, Sequence[InputExample]] | None = None
                    ) -> record_cache.CachedRecords:
    """The split's records in `output_dir/<task>-<split>.tf_record`, made only when needed.

    The key it is cached under (data_prep/record_cache.py) holds the task, split,
    max_seq_length, do_lower_case, pad_to_multiple, the format version, the sha256 of the vocab
    file and the sha256 of the data: of the split's TSV file, or, for TensorFlow Datasets' data,
    of the examples read from it. Hashing reads the data once, far less work than tokenizing
    it again.

    Args:
      data_dir: the GLUE download's task folder; ignored when `tfds_data_dir` is given.
      pad_to_multiple: append `PaddingInputExample`s until the record count is a multiple of
        this (the batch size, where every batch must be full).
      tfds_data_dir: read the split from TensorFlow Datasets' prepared `glue/*` data there
        (`read_tfds`) instead of the TSV files.
      examples: the split's examples if already read (`read_split`), so that a caller can
        check every split before writing any; otherwise read when the records are made.
      transfer: (file, its examples): unlabelled rows written after the split's (its own file
        name, `<task>-<split>+transfer.tf_record`, keyed by the file's sha256 too); they count
        in num_examples, as the rows an epoch goes through.
      augmentation: (file, its examples): labelled rows written after the split's and any
        transfer rows, an attack's adversarial examples (`data_prep.attack_data`; its own
        file name, `...+augmented.tf_record`, keyed by the file's sha256 too).
      long_doc: how documents longer than a row are read (resolved: its defaults filled in);
        head_tail and windows are part of the key (max_windows for the train split alone, the
        one it cuts). num_examples counts documents.
    Returns:
      the records, with facts data_file, num_examples (the split's examples, what sets the
      number of training steps) and num_records (the examples plus any padding examples).
    """
    if pad_to_multiple < 1:
        raise ValueError(f"pad_to_multiple must be at least 1, got {pad_to_multiple}")
    if tfds_data_dir is not None:
        if examples is None:
            examples = read_tfds(processor.name, split, tfds_data_dir)
        data_file = f"tensorflow_datasets glue ({tfds_data_dir})"
        data_hash = hashlib.sha256(json.dumps(
            [dataclasses.astuple(e) for e in examples]).encode("utf-8")).hexdigest()
    else:
        data_file = processor.path(data_dir, split)
        if not os.path.isfile(data_file):
            raise TsvError(f"{data_file}: no such file")
        data_hash = record_cache.sha256_of_file(data_file)
    key = {"format": _FORMAT_VERSION, "task": processor.name, "labels": processor.get_labels(),
           "split": split,
           "max_seq_length": max_seq_length, "do_lower_case": tokenizer.do_lower_case,
           "pad_to_multiple": pad_to_multiple,
           "vocab_sha256": record_cache.sha256_of_file(tokenizer.vocab_file),
           "data_sha256": data_hash}
    if long_doc.long_doc == "head_tail":
        key["long_doc"] = {"long_doc": "head_tail", "head_tokens": long_doc.head_tokens}
    elif long_doc.windows:
        key["long_doc"] = {"long_doc": "windows", "doc_stride": long_doc.doc_stride,
                           "max_windows": long_doc.max_windows if split == "train" else None}
    name = f"{processor.name}-{split}"
    if transfer is not None:
        key["transfer_sha256"] = record_cache.sha256_of_file(transfer[0])
        name += "+transfer"
    if augmentation is not None:
        key["augmentation_sha256"] = record_cache.sha256_of_file(augmentation[0])
        name += "+augmented"
    path = os.path.join(output_dir, f"{name}.tf_record")

    def make() -> dict:
        read = examples if examples is not None else processor.get_examples(data_dir, split)
        read = list(read) + list(transfer[1] if transfer is not None else ()) \
            + list(augmentation[1] if augmentation is not None else ())
        padded = read + [PaddingInputExample()] * (-len(read) % pad_to_multiple)
        if long_doc.windows:
            num_records, windows = write_document_tfrecord(
                padded, processor.get_labels(), max_seq_length, tokenizer, path,
                long_doc.doc_stride, long_doc.max_windows if split == "train" else None)
            logging.info("%s: %d documents in %d windows", data_file, num_records, windows)
        else:
            num_records = write_tfrecord(padded, processor.get_labels(), max_seq_length,
                                         tokenizer, path, long_doc.head_tokens)
        return {"data_file": data_file, "num_examples": len(read), "num_records": num_records}

    return record_cache.cached(path, key, make)


class ClassifierData:
    """run_classifier's data (`official.tasks.base.TaskData`): a task's TSV files in
    `data_dir`, or TensorFlow Datasets' prepared glue/* data in `tfds_data_dir`, as cached
    records in `output_dir`. The count that sets the updates is the split's examples.
    The vocab is read by `read`, after the run's checks of it. `transfer_file`: a
    distillation's unlabelled texts (`read_transfer_file`), added to the training rows.
    `long_doc`: how documents longer than a row are read (resolved), one record per document
    for windows. `augment_file`: an attack's output, whose adversarial examples are added to
    the training rows (`data_prep.attack_data.read_adversarial_examples`)."""

    def __init__(self, processor: TaskProcessor, data_dir: str | None,
                 tfds_data_dir: str | None, max_seq_length: int, vocab_file: str,
                 do_lower_case: bool, output_dir: str, transfer_file: str | None = None,
                 long_doc: LongDocSettings = LongDocSettings(),
                 augment_file: str | None = None):
        self.processor = processor
        self.data_dir, self.tfds_data_dir = data_dir, tfds_data_dir
        self.max_seq_length, self.output_dir = max_seq_length, output_dir
        self.vocab_file, self.do_lower_case = vocab_file, do_lower_case
        self.transfer_file = transfer_file
        self.long_doc = long_doc
        self.augment_file = augment_file
        self._examples: dict[str, list[InputExample]] = {}
        self._transfer: list[TransferExample] = []
        self._augmentation: list[InputExample] = []

    def source(self, split: str) -> str:
        if self.tfds_data_dir is not None:
            source = f"{self.tfds_data_dir} (glue/{self.processor.name} {split})"
        else:
            source = self.processor.path(self.data_dir, split)
        if split == "train" and self.transfer_file is not None:
            source += f" and the transfer data {self.transfer_file}"
        if split == "train" and self.augment_file is not None:
            source += f" and the adversarial examples of {self.augment_file}"
        return source

    def read(self, splits: Sequence[str]) -> int | None:
        self.tokenizer = FullTokenizer(self.vocab_file, self.do_lower_case)
        self._examples = {split: read_split(self.processor, self.data_dir, split,
                                            self.tfds_data_dir) for split in splits}
        if "train" not in splits:
            return None
        if self.transfer_file is not None:
            self._transfer = read_transfer_file(self.transfer_file, self.processor.is_pair)
        if self.augment_file is not None:
            self._augmentation = read_adversarial_examples(self.augment_file,
                                                           self.processor.get_labels())
        return len(self._examples["train"]) + len(self._transfer) + len(self._augmentation)

    def records(self, split: str) -> Records:
        train = split == "train"
        transfer = ((self.transfer_file, self._transfer)
                    if train and self.transfer_file is not None else None)
        augmentation = ((self.augment_file, self._augmentation)
                        if train and self.augment_file is not None else None)
        made = cached_tfrecord(self.processor, self.data_dir, split, self.max_seq_length,
                               self.tokenizer, self.output_dir, tfds_data_dir=self.tfds_data_dir,
                               examples=self._examples[split], transfer=transfer,
                               long_doc=self.long_doc, augmentation=augmentation)
        regression = self.processor.get_labels() is None
        spec = (document_parse_spec if self.long_doc.windows else parse_spec)(
            self.max_seq_length, regression)
        return Records(made.path, spec, made.facts["num_examples"], made.facts["num_records"],
                       self.source(split), made.reused, documents=self.long_doc.windows)
