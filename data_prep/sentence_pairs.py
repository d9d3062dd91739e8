"""Sentence pairs for contrastive fine-tuning: the TSV reader, one record per pair, their
TFRecords, and `SentencePairData`, run_sentence_embedding's data.

    read_pairs        a TSV file -> `Pair`s; every line checked
    write_tfrecord    pairs -> one record per pair: its texts' rows side by side
    cached_tfrecord   the records made once per setting (data_prep/record_cache.py)

The file: one pair a line, UTF-8, no header, tab-separated columns

    anchor <TAB> positive [<TAB> hard negative]

as sentence-transformers' (anchor, positive[, negative]) training sets hold them (a query and
the passage that answers it, a question and its duplicate, an NLI premise and the hypothesis it
entails, and one that contradicts it). The third column may be on some lines and not on others.
A line with another number of columns, or a column that is empty (or only spaces), is an error
naming the file and line: a mis-split file would otherwise train on shifted pairs without a
word. A "\\r\\n" line end reads as "\\n"; a last line without one is read too.

Each text is its own row, [CLS] text [SEP] cut to max_seq_length (the text's first
max_seq_length - 2 pieces), all segment ids 0: a sentence encoder reads one text at a time,
so a pair's texts never share a row (a cross-encoder's [CLS] a [SEP] b [SEP] could not embed
a query alone).

The records, one `tf.train.Example` per pair, `texts` = 3 when any line of the file has a hard
negative (2 otherwise; a dev file's are always 2, since the dev corpus is its positives alone):

    input_ids   int64  [texts, max_seq_length]  row 0 the anchor, 1 the positive, 2 the hard
                                                negative; 0-padded
    input_mask  int64  [texts, max_seq_length]  1 for real tokens; a pair without a hard
                                                negative has an all-0 row 2 (its [CLS] mask 0
                                                is how the loss knows)
    pair_index  int64  [1]                      the pair's index in `read_pairs`' list

Example (two pairs, the second with a hard negative, so every record holds three rows; rows of
max_seq_length 8, where the first pair's positive is cut and its missing negative is all 0):
    >>> import os, shutil, tempfile
    >>> tokenizer = FullTokenizer("data/vocab/uncased_vocab.txt", do_lower_case=True)
    >>> folder = tempfile.mkdtemp()
    >>> with open(os.path.join(folder, "train.tsv"), "w") as f:
    ...     _ = f.write("how old is the sun\\tthe sun is about 4.6 billion years old\\n"
    ...                 "what is a puppet\\ta doll moved by hand\\ta puppy is a young dog\\n")
    >>> pairs = read_pairs(os.path.join(folder, "train.tsv"))
    >>> pairs[0].negative, pairs[1].negative, texts_of(pairs)
    (None, 'a puppy is a young dog', 3)
    >>> path = os.path.join(folder, "train.tf_record")
    >>> write_tfrecord(pairs, 8, tokenizer, path, texts=texts_of(pairs))
    2
    >>> record = next(iter(tf.data.TFRecordDataset(path)))
    >>> parsed = tf.io.parse_single_example(record, parse_spec(8, texts=3))
    >>> parsed["input_mask"].numpy().tolist()
    [[1, 1, 1, 1, 1, 1, 1, 0], [1, 1, 1, 1, 1, 1, 1, 1], [0, 0, 0, 0, 0, 0, 0, 0]]
    >>> tokenizer.convert_ids_to_tokens(parsed["input_ids"].numpy()[1].tolist())
    ['[CLS]', 'the', 'sun', 'is', 'about', '4', '.', '[SEP]']
    >>> shutil.rmtree(folder)
"""

from __future__ import annotations

import dataclasses
import os
from typing import Sequence

import numpy as np
import tensorflow as tf

from data_prep import record_cache
from data_prep.example_bytes import ExampleSerializer
from data_prep.input_errors import InputError
from official.atomic_files import atomic_path
from official.tasks.base import Records
from official.text.tokenizer import FullTokenizer

# Pairs tokenized per op call: a chunk's rows stay a few MB.
_CHUNK = 4096
# Part of every cache key: raise it when the records written for the same settings change.
_FORMAT_VERSION = 1


class PairsError(InputError):
    """A pairs file that is not anchor<TAB>positive[<TAB>negative] lines; the message is
    "path:line: problem"."""


@dataclasses.dataclass(frozen=True)
class Pair:
    """One line of a pairs file.

    Attributes:
      anchor: the query (first column), stripped of surrounding spaces.
      positive: the text that matches it (second column).
      negative: a text that does not, though it looks as if it might (third column); None when
        the line has two columns.
      line: the 1-based line of the file.
    """
    anchor: str
    positive: str
    negative: str | None
    line: int


def read_pairs(path: str) -> list[Pair]:
    """The pairs of a TSV file, in file order (the module docstring gives the layout).

    Raises:
      PairsError: "path:line: problem" for a missing or non-UTF-8 file, a line without 2 or 3
        columns (a blank line has 1), an empty column, or a file without pairs.
    """
    try:
        f = open(path, "rb")
    except FileNotFoundError:
        raise PairsError(f"{path}: no such file") from None
    pairs = []
    names = ("anchor", "positive", "hard negative")
    with f:
        for number, raw in enumerate(f, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                raise PairsError(f"{path}:{number}: not UTF-8 (byte {e.start} of the line)") \
                    from None
            columns = line.rstrip("\r\n").split("\t")
            if len(columns) not in (2, 3):
                raise PairsError(f"{path}:{number}: {len(columns)} tab-separated columns, "
                                 "expected 2 or 3 (anchor, positive[, hard negative])")
            texts = [c.strip() for c in columns]
            for column, (name, text) in enumerate(zip(names, texts), start=1):
                if not text:
                    raise PairsError(f"{path}:{number}: the {name} (column {column}) is empty")
            pairs.append(Pair(texts[0], texts[1], texts[2] if len(texts) == 3 else None,
                              number))
    if not pairs:
        raise PairsError(f"{path}: no pairs")
    return pairs


def texts_of(pairs: Sequence[Pair]) -> int:
    """The rows a record of these pairs holds: 3 when any has a hard negative, else 2."""
    return 3 if any(p.negative is not None for p in pairs) else 2


def encode_texts(texts: Sequence[str | None], max_seq_length: int,
                 tokenizer: FullTokenizer) -> tuple[np.ndarray, np.ndarray]:
    """Each text as a row [CLS] pieces [SEP], 0-padded: (input_ids, input_mask), int64
    [len(texts), max_seq_length]. A None text is an all-0 row (no row at all)."""
    if max_seq_length < 3:
        raise ValueError(f"max_seq_length must be at least 3 ([CLS], a piece, [SEP]), got "
                         f"{max_seq_length}")
    cls_id, sep_id = tokenizer.convert_tokens_to_ids(["[CLS]", "[SEP]"])
    ids = np.zeros((len(texts), max_seq_length), np.int64)
    mask = np.zeros_like(ids)
    real = [i for i, t in enumerate(texts) if t is not None]
    for i, pieces in zip(real, tokenizer.tokenize_batch_ids([texts[i] for i in real])):
        row = [cls_id, *pieces[:max_seq_length - 2].tolist(), sep_id]
        ids[i, :len(row)] = row
        mask[i, :len(row)] = 1
    return ids, mask


_SERIALIZER = ExampleSerializer(["input_ids", "input_mask", "pair_index"], [])


def write_tfrecord(pairs: Sequence[Pair], max_seq_length: int, tokenizer: FullTokenizer,
                   output_file: str, texts: int) -> int:
    """Writes one record per pair (the module docstring's format), `texts` rows each (2: the
    hard negatives are left out); returns the count of records. The file appears only when
    complete."""
    if texts not in (2, 3):
        raise ValueError(f"texts must be 2 or 3, got {texts}")
    with atomic_path(output_file) as tmp, tf.io.TFRecordWriter(tmp) as writer:
        for start in range(0, len(pairs), _CHUNK):
            chunk = pairs[start:start + _CHUNK]
            columns = [[p.anchor for p in chunk], [p.positive for p in chunk],
                       [p.negative for p in chunk]][:texts]
            # [texts * n, seq] (every pair's anchor, then every positive, ...) -> [n, texts * seq]
            ids, mask = encode_texts([t for column in columns for t in column], max_seq_length,
                                     tokenizer)
            batch = {name: values.reshape(texts, len(chunk), max_seq_length).transpose(1, 0, 2)
                     .reshape(len(chunk), texts * max_seq_length)
                     for name, values in (("input_ids", ids), ("input_mask", mask))}
            batch["pair_index"] = np.arange(start, start + len(chunk), dtype=np.int64)[:, None]
            for record in _SERIALIZER.serialize(batch):
                writer.write(record)
    return len(pairs)


def parse_spec(max_seq_length: int, texts: int) -> dict[str, tf.io.FixedLenFeature]:
    """The reader's side of the records (the module docstring's format)."""
    rows = [texts, max_seq_length]
    return {"input_ids": tf.io.FixedLenFeature(rows, tf.int64),
            "input_mask": tf.io.FixedLenFeature(rows, tf.int64),
            "pair_index": tf.io.FixedLenFeature([1], tf.int64)}


def cached_tfrecord(data_file: str, name: str, max_seq_length: int, tokenizer: FullTokenizer,
                    output_dir: str, negatives: bool = True) -> record_cache.CachedRecords:
    """The records of `data_file` in `output_dir/sentence_pairs-<name>.tf_record`, made only
    when needed.

    Args:
      name: the split ("train", "dev"): a train and a dev file of the same base name in two
        folders get files of their own.
      negatives: keep the hard negatives (a third row when the file has any); False for the
        dev split, whose corpus is its positives.
    The key it is cached under (data_prep/record_cache.py) holds max_seq_length, do_lower_case,
    `negatives`, the format version and the sha256 of the vocab file and of the data file.

    Returns:
      the records, with facts data_file, texts (rows per record) and num_pairs (the records).
    """
    if not os.path.isfile(data_file):
        raise PairsError(f"{data_file}: no such file")
    key = {"format": _FORMAT_VERSION, "max_seq_length": max_seq_length,
           "do_lower_case": tokenizer.do_lower_case, "negatives": negatives,
           "vocab_sha256": record_cache.sha256_of_file(tokenizer.vocab_file),
           "data_sha256": record_cache.sha256_of_file(data_file)}
    path = os.path.join(output_dir, f"sentence_pairs-{name}.tf_record")

    def make() -> dict:
        pairs = read_pairs(data_file)
        texts = texts_of(pairs) if negatives else 2
        return {"data_file": data_file, "texts": texts,
                "num_pairs": write_tfrecord(pairs, max_seq_length, tokenizer, path, texts)}

    return record_cache.cached(path, key, make)


class SentencePairData:
    """run_sentence_embedding's data (`official.tasks.base.TaskData`): a pairs file for
    training and one for evaluation, as cached records in `output_dir`. The count that sets
    the updates is the training file's pairs; `Records.examples` is the split's `Pair`s.

    There is no test split of its own: "test" (--do_predict) is the dev file again, its
    retrieval ranked and written (official/tasks/sentence_embedding.py).

    Args:
      files: {"train", "dev": path}; only the splits asked for are read.
      vocab_file, do_lower_case: the tokenizer's, read by `read` (after the run's checks).
    """

    def __init__(self, files: dict[str, str], max_seq_length: int, vocab_file: str,
                 do_lower_case: bool, output_dir: str):
        self.files = dict(files)
        self.max_seq_length, self.output_dir = max_seq_length, output_dir
        self.vocab_file, self.do_lower_case = vocab_file, do_lower_case
        self._pairs: dict[str, list[Pair]] = {}

    @staticmethod
    def _file_split(split: str) -> str:
        return "dev" if split == "test" else split

    def source(self, split: str) -> str:
        name = self._file_split(split)
        if self.files.get(name) is None:
            raise ValueError(f"--{name}_file is needed for the {split} split")
        return self.files[name]

    def read(self, splits: Sequence[str]) -> int | None:
        self.tokenizer = FullTokenizer(self.vocab_file, self.do_lower_case)
        for split in splits:
            name = self._file_split(split)
            if name not in self._pairs:
                self._pairs[name] = read_pairs(self.source(split))
        return len(self._pairs["train"]) if "train" in splits else None

    def records(self, split: str) -> Records:
        name = self._file_split(split)
        made = cached_tfrecord(self.files[name], name, self.max_seq_length, self.tokenizer,
                               self.output_dir, negatives=name == "train")
        num_pairs = made.facts["num_pairs"]
        return Records(made.path, parse_spec(self.max_seq_length, made.facts["texts"]),
                       num_pairs, num_pairs, self.files[name], made.reused, self._pairs[name])
