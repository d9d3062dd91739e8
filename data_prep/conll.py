"""Token-classification data: named entities (CoNLL-2003's, or a domain's: any types) and a
treebank's parts of speech; the readers, the tag set, the features, their TFRecords.

google-research/bert has no NER script; this follows the BERT paper's CoNLL-2003 setup (section
5.3: "the representation of the first sub-token as the input to the token-level classifier")
and what BERT NER code commonly does:

    read_conll          eng.train / eng.testa / eng.testb -> one `Sentence` per sentence, tags
                        in IOB2 (see below), each sentence with the index of its document
    read_conllu_tags    a Universal Dependencies treebank (CoNLL-U, any language) -> its
                        syntactic words tagged with their universal part of speech
                        (UPOS_LABELS): run_ner --data_format=conllu
    read_wikiann        WikiANN as XTREME's PAN-X gives it ("en:Paris<TAB>B-LOC" lines), any
                        language, tagged PER/ORG/LOC (PANX_LABELS): run_ner --data_format=panx
    tag_set             the training sentences -> the tags a run trains on (label ids), by one
                        rule for every format (below)
    convert_sentences   each sentence -> one or more `InputFeatures` (windows of whole words):
                        [CLS] word pieces [SEP], 0-padded; a word's tag on its first piece only
    write_tfrecord      features -> TFRecords; `cached_tfrecord` makes them once per setting

Choices, and why:
- Tags are IOB2 (every entity starts with B-): the files' IOB1 (B- only between two adjacent
  entities of one type) is converted on reading, as most BERT NER code and Hugging Face's
  `conll2003` do, so that a model learns where every entity starts. Converting IOB2 is a no-op,
  so files already in IOB2 read the same. The entities, hence conlleval's scores, are unchanged.
- The tag set is the training file's, by one rule (`tag_set`): each format has a published set
  (CoNLL-2003's `LABELS` in Hugging Face `conll2003`'s `ner_tags` order, PAN-X's, UD's UPOS),
  kept whole and in its order when it holds every tag of the training file, so models
  fine-tuned on CoNLL-2003 keep their ids; any other tags (a domain's: BC5CDR's Chemical and
  Disease, JNLPBA's protein, DNA, ...) give a set derived from them alone, whatever their order
  in the file. The other files are read against it: a tag outside it (of a type a domain's
  training file never has) is an error at its line, not a silently bigger output layer. The run
  records a set that is not CoNLL-2003's (official/tasks/ner_settings.py), so that its reruns
  and its export read the same ids.
- Only a word's first piece is predicted; its other pieces, [CLS], [SEP] and padding get
  `label_weights` 0 (and label id 0, a valid id, so every id stays non-negative). The loss is
  sum(weights * per-token loss) / sum(weights), as the pretraining loss weights masked_lm_weights.
  (Hugging Face marks the same positions with label -100 instead.)
- Windows do not overlap: a sentence whose pieces exceed max_seq_length - 2 is cut between
  words into as few windows as a greedy fill gives (`official.features.word_windows`, the rule
  the serving graph windows by too), so each word is predicted exactly once and never loses its
  pieces to a cut. (At max_seq_length 128 with BERT's uncased vocab, 5 of the
  20,744 sentences of eng.train/testa/testb are split in two; common code truncates them
  instead, and never predicts their last words.) A single word of more pieces than a window
  holds keeps its first max_seq_length - 2.
- A word with no pieces at all (only characters the tokenizer deletes, such as U+FEFF) becomes
  one [UNK], so that it too is predicted.
- Sentences are encoded alone; the document index is kept for a document-context variant (the
  paper's "maximal document context"), which this module does not make.
- Case: CoNLL English models are usually cased (the paper's NER runs are); give the tokenizer
  the vocab's own setting (an uncased vocab with do_lower_case False makes capitalised words
  [UNK]). The records' cache key holds do_lower_case and the vocab's hash.

The records, one `tf.train.Example` per feature (a window):

    input_ids       int64    [max_seq_length]  token ids, 0-padded
    input_mask      int64    [max_seq_length]  1 for real tokens, 0 for padding
    segment_ids     int64    [max_seq_length]  all 0 (one text)
    label_ids       int64    [max_seq_length]  the word's tag index in `labels` at its first
                                               piece; 0 elsewhere
    label_weights   float32  [max_seq_length]  1.0 at each predicted position, 0.0 elsewhere
    sentence_index  int64    [1]               the sentence's index in `read_conll`'s list
    first_word      int64    [1]               the sentence's word predicted at the feature's
                                               first position of weight 1; the k-th such
                                               position predicts word first_word + k

Padding records (`pad_to_multiple`) are all 0: they weigh nothing and predict no word. A reader
parses `sentence_index` and `first_word` as scalars (`FixedLenFeature([], tf.int64)`).

Example (the first lines of eng.train, in IOB1; the repo ships the uncased vocab, where a cased
model would take its own with do_lower_case False; rows of max_seq_length 8, so the first
sentence's nine words take two windows):
    >>> import os, shutil, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> with open(os.path.join(folder, "eng.train"), "w") as f:
    ...     _ = f.write("-DOCSTART- -X- O O\\n\\n"
    ...                 "EU NNP I-NP I-ORG\\nrejects VBZ I-VP O\\nGerman JJ I-NP I-MISC\\n"
    ...                 "call NN I-NP O\\nto TO I-VP O\\nboycott VB I-VP O\\n"
    ...                 "British JJ I-NP I-MISC\\nlamb NN I-NP O\\n. . O O\\n\\n"
    ...                 "Peter NNP I-NP I-PER\\nBlackburn NNP I-NP I-PER\\n")
    >>> sentences = read_conll(os.path.join(folder, "eng.train"))
    >>> [(s.words[:3], s.tags[:3], s.line) for s in sentences]
    [(('EU', 'rejects', 'German'), ('B-ORG', 'O', 'B-MISC'), 3),
     (('Peter', 'Blackburn'), ('B-PER', 'I-PER'), 13)]
    >>> tokenizer = FullTokenizer("data/vocab/uncased_vocab.txt", do_lower_case=True)
    >>> features = convert_sentences(sentences, LABELS, 8, tokenizer)
    >>> [(f.sentence_index, f.first_word) for f in features]
    [(0, 0), (0, 6), (1, 0)]
    >>> tokenizer.convert_ids_to_tokens(features[0].input_ids)
    ['[CLS]', 'eu', 'rejects', 'german', 'call', 'to', 'boycott', '[SEP]']
    >>> features[0].label_weights
    [0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0]
    >>> [LABELS[i] for i, w in zip(features[0].label_ids, features[0].label_weights) if w]
    ['B-ORG', 'O', 'B-MISC', 'O', 'O', 'O']
    >>> shutil.rmtree(folder)
"""

from __future__ import annotations

import dataclasses
import itertools
import os
import re
from typing import Iterator, Mapping, Protocol, Sequence

import numpy as np
import tensorflow as tf

from data_prep import record_cache
from data_prep.conllu import ConlluError, read_conllu
from data_prep.example_bytes import ExampleSerializer
from data_prep.input_errors import InputError, utf8_lines
from official.atomic_files import atomic_path
from official.features.word_windows import greedy_windows
from official.tasks.base import Records
from official.tasks.ner_metrics import CONLL2003_LABELS, PANX_LABELS, UPOS_LABELS, iob1_to_iob2
from official.text.tokenizer import UNKNOWN_TOKEN, FullTokenizer

# CoNLL-2003's tags in IOB2, in Hugging Face `conll2003`'s `ner_tags` order (a tag's id is its
# index), so models fine-tuned there read the same ids.
LABELS = CONLL2003_LABELS

_DOCSTART = "-DOCSTART-"
# A word's line: the word first, its tag last, at least these columns, and as many on every line
# of a file: CoNLL-2003's 4 (word, part of speech, syntactic chunk, named entity), or the 2 of
# domain NER files (BC5CDR, NCBI-disease, JNLPBA as Crichton et al. 2017's collection gives them).
_MIN_COLUMNS = 2
_TAG = re.compile(r"O|[BI]-.+")
_FIELD_SEPARATOR = re.compile(r"[ \t]+")
# Sentences converted per tokenizer call: distinct words are tokenized once per chunk, and a
# chunk's features stay a few MB.
_CHUNK = 4096
# Part of every cache key: raise it when the records written for the same settings change.
_FORMAT_VERSION = 1


class ConllError(InputError):
    """A file that is not in CoNLL-2003's format; the message is "path:line: problem"."""


@dataclasses.dataclass(frozen=True)
class Sentence:
    """One sentence of a CoNLL file.

    Attributes:
      words: the first column, one word a line.
      tags: the last column converted to IOB2, one per word (any columns between, CoNLL-2003's
        POS and chunk, which BERT does not use, are dropped).
      document: 0-based index of the sentence's document among the file's documents that
        have sentences; a -DOCSTART- line starts a document.
      line: the 1-based line of the first word; word i is on line `line + i`.
    """
    words: tuple[str, ...]
    tags: tuple[str, ...]
    document: int
    line: int


@dataclasses.dataclass(frozen=True)
class InputFeatures:
    """One window of a sentence: lists of max_seq_length ints, as the records hold them.

    `word_ids[t]` is the index in the sentence of the word that position t predicts, -1 where
    nothing is predicted (a word's later pieces, [CLS], [SEP], padding). `label_weights` and
    `first_word` of the records are computed from it.
    """
    input_ids: list[int]
    input_mask: list[int]
    segment_ids: list[int]
    label_ids: list[int]
    word_ids: list[int]
    sentence_index: int
    window_index: int

    @property
    def label_weights(self) -> list[float]:
        return [1.0 if w >= 0 else 0.0 for w in self.word_ids]

    @property
    def first_word(self) -> int:
        return next(w for w in self.word_ids if w >= 0)


def _read_lines(path: str) -> Iterator[tuple[int, list[str]]]:
    """(1-based line number, fields split at spaces and tabs) of each line; [] for a blank one."""
    for number, line in utf8_lines(path, ConllError):
        line = line.strip(" \t\r\n")
        yield number, _FIELD_SEPARATOR.split(line) if line else []


def _sentence_rows(path: str) -> Iterator[tuple[int, list[tuple[int, str, str]]]]:
    """(document index, [(line number, word, file's tag), ...]) per sentence, each line's
    layout checked."""
    document, document_has_sentences = 0, False
    rows: list[tuple[int, str, str]] = []
    first: tuple[int, int] | None = None  # the first word line's (columns, number)
    for number, fields in _read_lines(path):
        if fields and fields[0] != _DOCSTART:
            if len(fields) < _MIN_COLUMNS:
                raise ConllError(f"{path}:{number}: 1 column, expected the word and its tag "
                                 "(word POS chunk NER, or word tag)")
            first = first or (len(fields), number)
            if len(fields) != first[0]:
                raise ConllError(f"{path}:{number}: {len(fields)} columns, expected {first[0]} "
                                 f"as on line {first[1]}")
            if not _TAG.fullmatch(fields[-1]):
                raise ConllError(f"{path}:{number}: tag {fields[-1]!r} is not O, B-TYPE or "
                                 "I-TYPE")
            rows.append((number, fields[0], fields[-1]))
            continue
        # A blank line or a -DOCSTART- ends the sentence; a -DOCSTART- also the document.
        if rows:
            yield document, rows
            rows, document_has_sentences = [], True
        if fields and document_has_sentences:
            document, document_has_sentences = document + 1, False
    if rows:
        yield document, rows


def read_conllu_tags(path: str, labels: Sequence[str] | None = UPOS_LABELS) -> list[Sentence]:
    """A CoNLL-U treebank's sentences as tagged words: each syntactic word (multiword tokens'
    surface forms and empty nodes skipped, data_prep/conllu.py) with its universal part of
    speech (UPOS) as its tag; one document.

    Raises:
      ConllError: "path:line: problem" for what read_conllu refuses (a UPOS that is none of
        UD's 17), or a tag outside `labels` (None: any of the 17).
    """
    try:
        treebank = read_conllu(path)
    except ConlluError as e:
        raise ConllError(str(e)) from None
    labels = UPOS_LABELS if labels is None else labels
    allowed = set(labels)
    for sentence in treebank:
        for position, tag in enumerate(sentence.upos):
            if tag not in allowed:
                raise ConllError(f"{path}:{sentence.line}: word {position + 1} of the sentence "
                                 f"starting here has UPOS {tag!r}, not one of "
                                 f"{', '.join(labels)}")
    return [Sentence(s.words, s.upos, 0, s.line) for s in treebank]


def read_conll(path: str, labels: Sequence[str] | None = LABELS) -> list[Sentence]:
    """The sentences of a CoNLL-2003 file, in file order, tags converted to IOB2; or of a file in
    its layout with other columns: the word first, the tag last (a domain's "word<TAB>tag").

    Blank (or whitespace-only) lines end a sentence; runs of them, spaces or tabs at a line's
    end and a missing final newline are all read alike. A -DOCSTART- line (whatever its other
    columns) ends the sentence before it and starts a document; it is not a sentence.

    Raises:
      ConllError: "path:line: problem" for a missing or non-UTF-8 file, a line of one column or
        of another count than the file's first, a tag that is not O, B-TYPE or I-TYPE, a tag
        (in IOB2) outside `labels` (None: any such tag), or a file without sentences.
    """
    allowed = None if labels is None else set(labels)
    sentences = []
    for document, rows in _sentence_rows(path):
        numbers, words, file_tags = zip(*rows)
        tags = tuple(iob1_to_iob2(file_tags))
        for number, file_tag, tag in zip(numbers, file_tags, tags):
            if allowed is not None and tag not in allowed:
                as_iob2 = "" if tag == file_tag else f" ({tag} in IOB2)"
                raise ConllError(f"{path}:{number}: tag {file_tag!r}{as_iob2} is not one of "
                                 f"{', '.join(labels)}")
        sentences.append(Sentence(words, tags, document, numbers[0]))
    if not sentences:
        raise ConllError(f"{path}: no sentences")
    return sentences


# WikiANN's language prefix: a Wikipedia's code, as its files and folders name them: an ISO 639
# code of 2 or 3 letters, "-" subtags ("zh-min-nan", "be-x-old"), or "simple" (Simple English).
_LANGUAGE_CODE = re.compile(r"[a-z]{2,3}(?:-[a-z]+)*|simple")


def _wikiann_row(path: str, number: int, line: str,
                 labels: Sequence[str] | None) -> tuple[str, str]:
    """(word, tag) of one line "<language>:<word><TAB><tag>", checked."""
    fields = line.strip(" \t").split("\t")
    if len(fields) != 2:
        raise ConllError(f"{path}:{number}: {len(fields) - 1} tabs, expected one: "
                         "<language>:<word><TAB><tag>")
    prefixed, tag = fields
    language, colon, word = prefixed.partition(":")
    if not colon or not _LANGUAGE_CODE.fullmatch(language):
        raise ConllError(f"{path}:{number}: {prefixed!r} does not start with a language code "
                         "and ':' (as in en:Paris)")
    if not word:
        raise ConllError(f"{path}:{number}: no word after {language}:")
    if labels is None and not _TAG.fullmatch(tag):
        raise ConllError(f"{path}:{number}: tag {tag!r} is not O, B-TYPE or I-TYPE")
    if labels is not None and tag not in labels:
        raise ConllError(f"{path}:{number}: tag {tag!r} is not one of {', '.join(labels)}")
    return word, tag


def read_wikiann(path: str, labels: Sequence[str] | None = PANX_LABELS) -> list[Sentence]:
    """The sentences of a WikiANN file as Rahimi et al. (2019) split Pan et al.'s (2017) data and
    XTREME distributes it as PAN-X (each language's `<lang>.tar.gz` holds `train`, `dev` and
    `test`; XTREME's download script renames them `<lang>-train`, ...); one document.

    One word a line, "<language>:<word><TAB><tag>" ("de:Köln\tB-LOC"), IOB2 tags of persons,
    organisations and locations, a blank (or whitespace-only) line between sentences. The
    language prefix is dropped: it ends at the first ":", so a word may hold ":" itself
    ("en:Re:Zero"); it is the language of the file, or of the word in a mixed one. Tags are
    checked as the file gives them, then converted to IOB2 as CoNLL-2003's are (a file already
    in IOB2 reads unchanged).

    Raises:
      ConllError: "path:line: problem" for a missing or non-UTF-8 file, a line that is not one
        prefixed word, a tab and a tag, a prefix that is no language code, a tag outside
        `labels` (None: any of O, B-TYPE, I-TYPE), or a file without sentences.
    """
    sentences = []
    lines = utf8_lines(path, ConllError)
    for blank, group in itertools.groupby(lines, key=lambda numbered: not numbered[1].strip()):
        if not blank:
            rows = [(number, *_wikiann_row(path, number, line, labels))
                    for number, line in group]
            numbers, words, tags = zip(*rows)
            sentences.append(Sentence(words, tuple(iob1_to_iob2(tags)), 0, numbers[0]))
    if not sentences:
        raise ConllError(f"{path}: no sentences")
    return sentences


# run_ner's --data_format: the reader of each file format.
READERS = {"conll2003": read_conll, "conllu": read_conllu_tags, "panx": read_wikiann}


def tag_set(sentences: Sequence[Sentence], published: Sequence[str], scheme: str) -> list[str]:
    """The tags a run trains on, in label-id order, from its training sentences: one rule for
    every format.

    - `published`, the format's own set (CoNLL-2003's, PAN-X's, UD's 17 UPOS), whole and in its
      order when it holds every tag of the sentences: CoNLL-2003 runs keep the ids of every
      model fine-tuned on it, and a treebank whose training file lacks a rare part of speech
      still tags all 17;
    - else a set derived from the sentences' tags, the same whatever their order in the file:
      for entities (`scheme` "entities", IOB2 tags) O, then B- and I- of each type, types
      sorted (an I- even for a type whose every entity is one word, so that another file's
      longer one is a tag of the set); for tags ("tags", one per word) the tags sorted.

    Example (BC5CDR's types):
        >>> tag_set([Sentence(("Naloxone", "reverses", "hypotension"),
        ...                   ("B-Chemical", "O", "B-Disease"), 0, 1)], LABELS, "entities")
        ['O', 'B-Chemical', 'I-Chemical', 'B-Disease', 'I-Disease']
    """
    if scheme not in ("entities", "tags"):
        raise ValueError(f"scheme must be entities or tags, got {scheme!r}")
    tags = {tag for sentence in sentences for tag in sentence.tags}
    if tags <= set(published):
        return list(published)
    if scheme == "tags":
        return sorted(tags)
    types = sorted({tag[2:] for tag in tags if tag != "O"})
    return ["O"] + [f"{prefix}-{kind}" for kind in types for prefix in "BI"]


def convert_sentences(sentences: Sequence[Sentence], labels: Sequence[str],
                      max_seq_length: int, tokenizer: FullTokenizer) -> list[InputFeatures]:
    """The features of many sentences, in order: each sentence's windows in word order (none
    for a sentence without words).

    Each distinct word is tokenized once, in one op call for all: the tokenizer splits text at
    whitespace before anything else, so a word's pieces are the same alone as in its sentence.

    Args:
      sentences: the sentences; `sentence_index` is a position in this sequence.
      labels: the tag set (a tag's id is its index); every tag must be in it.
      max_seq_length: the length of every sequence, [CLS] and [SEP] included (at least 3).
      tokenizer: the checkpoint's tokenizer.
    """
    if max_seq_length < 3:
        raise ValueError(f"max_seq_length must be at least 3 ([CLS], a piece, [SEP]), got "
                         f"{max_seq_length}")
    label_map = {label: i for i, label in enumerate(labels)}
    cls_id, sep_id, unk_id = tokenizer.convert_tokens_to_ids(["[CLS]", "[SEP]", UNKNOWN_TOKEN])
    distinct = list(dict.fromkeys(w for s in sentences for w in s.words))
    pieces = {word: ids.tolist() or [unk_id]
              for word, ids in zip(distinct, tokenizer.tokenize_batch_ids(distinct))}
    budget = max_seq_length - 2
    sentence_pieces = [[pieces[w][:budget] for w in s.words] for s in sentences]
    # Every word's window in one call (the serving graph's rule), then each sentence's windows
    # as [start, end) word ranges.
    window_of_word = iter(greedy_windows(
        np.array([len(p) for word_pieces in sentence_pieces for p in word_pieces], np.int32),
        np.array([i for i, s in enumerate(sentences) for _ in s.words], np.int32),
        budget).numpy().tolist())
    features = []
    for sentence_index, (sentence, word_pieces) in enumerate(zip(sentences, sentence_pieces)):
        tag_ids = []
        for i, tag in enumerate(sentence.tags):
            if tag not in label_map:
                raise ValueError(f"line {sentence.line + i}: tag {tag!r} is not one of "
                                 f"{', '.join(labels)}")
            tag_ids.append(label_map[tag])
        windows = [next(window_of_word) for _ in sentence.words]
        ends = list(itertools.accumulate(len(list(run)) for _, run in itertools.groupby(windows)))
        for window_index, (start, end) in enumerate(zip([0] + ends, ends)):
            tokens, label_ids, word_ids = [cls_id], [0], [-1]
            for word in range(start, end):
                n = len(word_pieces[word])
                tokens += word_pieces[word]
                label_ids += [tag_ids[word]] + [0] * (n - 1)
                word_ids += [word] + [-1] * (n - 1)
            tokens.append(sep_id)
            pad = max_seq_length - len(tokens)
            features.append(InputFeatures(
                input_ids=tokens + [0] * pad, input_mask=[1] * len(tokens) + [0] * pad,
                segment_ids=[0] * max_seq_length, label_ids=label_ids + [0] * (pad + 1),
                word_ids=word_ids + [-1] * (pad + 1), sentence_index=sentence_index,
                window_index=window_index))
    return features


def convert_sentence(sentence: Sentence, labels: Sequence[str], max_seq_length: int,
                     tokenizer: FullTokenizer) -> list[InputFeatures]:
    """One sentence's windows (see `convert_sentences`); their sentence_index is 0."""
    return convert_sentences([sentence], labels, max_seq_length, tokenizer)


_SERIALIZER = ExampleSerializer(
    ["input_ids", "input_mask", "segment_ids", "label_ids", "sentence_index", "first_word"],
    ["label_weights"])


def write_tfrecord(sentences: Sequence[Sentence], labels: Sequence[str], max_seq_length: int,
                   tokenizer: FullTokenizer, output_file: str, pad_to_multiple: int = 1) -> int:
    """Writes one record per feature (the format in the module docstring); returns the count of
    features, padding records not included.

    Args:
      pad_to_multiple: append all-0 records until the record count is a multiple of this (the
        batch size, where every batch must be full).

    The file appears only when complete: a failure (a tag outside `labels`, say) leaves none.
    """
    if pad_to_multiple < 1:
        raise ValueError(f"pad_to_multiple must be at least 1, got {pad_to_multiple}")
    count = 0
    with atomic_path(output_file) as tmp, tf.io.TFRecordWriter(tmp) as writer:
        for start in range(0, len(sentences), _CHUNK):
            features = convert_sentences(sentences[start:start + _CHUNK], labels,
                                         max_seq_length, tokenizer)
            if not features:  # sentences without words
                continue
            batch = {key: np.array([getattr(f, key) for f in features], np.int64)
                     for key in ("input_ids", "input_mask", "segment_ids", "label_ids")}
            batch["label_weights"] = np.array([f.label_weights for f in features], np.float32)
            batch["sentence_index"] = np.array([[start + f.sentence_index] for f in features],
                                               np.int64)
            batch["first_word"] = np.array([[f.first_word] for f in features], np.int64)
            for record in _SERIALIZER.serialize(batch):
                writer.write(record)
            count += len(features)
        padding = -count % pad_to_multiple
        if padding:
            zeros = {key: np.zeros((padding, max_seq_length), np.int64)
                     for key in ("input_ids", "input_mask", "segment_ids", "label_ids")}
            zeros["label_weights"] = np.zeros((padding, max_seq_length), np.float32)
            zeros["sentence_index"] = zeros["first_word"] = np.zeros((padding, 1), np.int64)
            for record in _SERIALIZER.serialize(zeros):
                writer.write(record)
    return count


def parse_spec(max_seq_length: int) -> dict[str, tf.io.FixedLenFeature]:
    """The reader's side of the records (the format in the module docstring)."""
    seq = [max_seq_length]
    return {
        "input_ids": tf.io.FixedLenFeature(seq, tf.int64),
        "input_mask": tf.io.FixedLenFeature(seq, tf.int64),
        "segment_ids": tf.io.FixedLenFeature(seq, tf.int64),
        "label_ids": tf.io.FixedLenFeature(seq, tf.int64),
        "label_weights": tf.io.FixedLenFeature(seq, tf.float32),
        "sentence_index": tf.io.FixedLenFeature([1], tf.int64),
        "first_word": tf.io.FixedLenFeature([1], tf.int64),
    }


class Augmentation(Protocol):
    """What becomes of the training sentences before their records are made (code-switching,
    data_prep/code_switching.py): `copies` versions of them, one per epoch."""

    copies: int

    def apply(self, sentences: Sequence[Sentence]) -> list[Sentence]:
        """The sentences the records are made of."""

    def key(self) -> dict:
        """What the sentences depend on, JSON-serialisable (part of the cache key)."""


def cached_tfrecord(data_file: str, max_seq_length: int, tokenizer: FullTokenizer,
                    output_dir: str, labels: Sequence[str] = LABELS,
                    pad_to_multiple: int = 1, data_format: str = "conll2003",
                    prefix: str = "", augmentation: Augmentation | None = None
                    ) -> record_cache.CachedRecords:
    """The records of `data_file` in `output_dir/<prefix><its name>.tf_record`, made only when
    needed (a prefix keeps two sets' files apart when their names are alike).

    The key it is cached under (data_prep/record_cache.py) holds the labels, max_seq_length,
    do_lower_case, pad_to_multiple, the file's format (`READERS`), the records' format version,
    the augmentation's key and the sha256 of the vocab file and of the data file.

    Returns:
      the records, with facts data_file, num_sentences (the data file's sentences),
      num_features (the real records, windows), num_records (the features plus any padding
      records) and, with an augmentation, copies (its copies of the sentences: the windows one
      epoch reads, what sets the number of training steps, are num_features / copies).
    """
    if not os.path.isfile(data_file):
        raise ConllError(f"{data_file}: no such file")
    key = {"format": _FORMAT_VERSION, "data_format": data_format, "labels": list(labels),
           "max_seq_length": max_seq_length,
           "do_lower_case": tokenizer.do_lower_case, "pad_to_multiple": pad_to_multiple,
           "vocab_sha256": record_cache.sha256_of_file(tokenizer.vocab_file),
           "data_sha256": record_cache.sha256_of_file(data_file),
           **(augmentation.key() if augmentation else {})}
    path = os.path.join(output_dir, prefix + os.path.basename(data_file) + ".tf_record")

    def make() -> dict:
        sentences = READERS[data_format](data_file, labels)
        written = augmentation.apply(sentences) if augmentation else sentences
        num_features = write_tfrecord(written, labels, max_seq_length, tokenizer, path,
                                      pad_to_multiple)
        return {"data_file": data_file, "num_sentences": len(sentences),
                "num_features": num_features,
                "num_records": num_features + -num_features % pad_to_multiple,
                **({"copies": augmentation.copies} if augmentation else {})}

    return record_cache.cached(path, key, make)


class ConllData:
    """run_ner's data (`official.tasks.base.TaskData`): one CoNLL file per split, as cached
    records in `output_dir`. The count that sets the updates is the training file's windows
    (one copy's, when an augmentation writes several), known once its records are made; each
    split's `Records.examples` is its sentences.

    Args:
      files: {"train", "dev", "test": path}; only the splits asked for are read.
      labels: the tags (label ids are their indices); None: the training file's, which
        `choose_tags` reads before any split is.
      vocab_file, do_lower_case: the tokenizer's, read by `read` (after the run's checks).
      data_format: the files' format, a key of READERS (CoNLL-2003's columns, or CoNLL-U read
        as words and their universal part of speech).
      evaluation_sets: {name: path} of further labelled files, scored as dev is by the model
        the run keeps (official/tasks/base.py): other languages' test sets, zero-shot.
      augmentation: what becomes of the training sentences (code-switching), or None.
    """

    def __init__(self, files: dict[str, str], labels: Sequence[str] | None,
                 max_seq_length: int, vocab_file: str, do_lower_case: bool, output_dir: str,
                 data_format: str = "conll2003",
                 evaluation_sets: Mapping[str, str] | None = None,
                 augmentation: Augmentation | None = None):
        self.files = {**files, **(evaluation_sets or {})}
        self.evaluation_sets = tuple(evaluation_sets or ())
        self.labels = None if labels is None else list(labels)
        self.data_format = data_format
        self.max_seq_length, self.output_dir = max_seq_length, output_dir
        self.vocab_file, self.do_lower_case = vocab_file, do_lower_case
        self.augmentation = augmentation
        self._sentences: dict[str, list[Sentence]] = {}

    def choose_tags(self, published: Sequence[str], scheme: str) -> list[str]:
        """The training file's tag set (`tag_set`), which every other split is then read
        against; its sentences are kept for `read`.

        Raises:
          ConllError: see the format's reader.
        """
        train = READERS[self.data_format](self.files["train"], None)
        self._sentences["train"] = train
        self.labels = tag_set(train, published, scheme)
        return self.labels

    def source(self, split: str) -> str:
        return self.files[split]

    def read(self, splits: Sequence[str]) -> int | None:
        if self.labels is None:
            raise ValueError("the tags are the training file's: choose_tags reads them first")
        self.tokenizer = FullTokenizer(self.vocab_file, self.do_lower_case)
        # cached_tfrecord reads a file again only when its records are not cached yet.
        read = READERS[self.data_format]
        self._sentences = {split: self._sentences.get(split) or read(self.files[split],
                                                                      self.labels)
                           for split in splits}
        return None  # windows are counted as the records are made

    def records(self, split: str) -> Records:
        made = cached_tfrecord(
            self.files[split], self.max_seq_length, self.tokenizer, self.output_dir,
            self.labels, data_format=self.data_format,
            prefix=f"{split}." if split in self.evaluation_sets else "",
            augmentation=self.augmentation if split == "train" else None)
        facts = made.facts
        return Records(made.path, parse_spec(self.max_seq_length),
                       facts["num_features"] // facts.get("copies", 1), facts["num_records"],
                       self.files[split], made.reused, self._sentences[split])
