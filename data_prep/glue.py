"""GLUE, XNLI and PAWS-X task data: the TSV files of their downloads, read into `InputExample`s.

Each task is one `TaskProcessor`, named by google-research/bert's `--task_name` ("cola", "mnli",
"mrpc", "xnli") or, for the tasks the original did not ship, by GLUE's name ("sst-2", "qqp", ...).
The multilingual tasks (`LANGUAGE_TASKS`) are named with their language: "xnli-de" is XNLI in
German (bare "xnli" is the original's Chinese), "pawsx-ja" PAWS-X in Japanese (bare "pawsx" is
English); `in_language` gives the same task in another language, for a zero-shot evaluation.
`data_dir` is the task's own folder of GLUE's download (`glue_data/MRPC`), as in the original.
Task "tsv" is a classification task of one's own (`tsv_processor`): its labels and columns are
read from its data_dir. Task "20ng" is 20 Newsgroups, whole posts in JSON lines
(`newsgroups_processor`); task "scibert_jsonl" reads SciBERT's classification files (ChemProt,
ACL-ARC: `scibert_processor`).

    processor = get_processor("mrpc")
    examples = processor.get_examples("glue_data/MRPC", "train")  # or "dev", "test"
    labels = processor.get_labels()  # ["0", "1"]; None for STS-B, a regression task

The files' quirks, each handled where its task is defined (see `PROCESSORS`):
- fields are split on tabs only; a `"` is text, never CSV quoting (the original read with
  `csv.reader(f, delimiter="\\t", quotechar=None)`: the same split);
- CoLA's train and dev have no header (source, label, original mark, sentence) and its test has
  one (index, sentence); every other file has a header, and its columns are found by name;
- MRPC's files start with a UTF-8 byte-order mark, which is dropped;
- MNLI has two dev and two test sets: task "mnli" reads the matched ones, "mnli-mm" the
  mismatched ones (both train on train.tsv), as GLUE scores them separately;
- QQP's real train.tsv has rows broken by a newline inside a question: rows whose column count
  differs from the header's are skipped, as the readers of its time (Hugging Face's processors,
  TFDS) skip them, and a warning counts them; every other task refuses a short row, since
  there it means a wrong or damaged file;
- test sets are unlabelled: their examples have label None (the original put a placeholder
  label, the first of the list, in their place; `classifier_features` gives None the same id).

A file the reader cannot use raises `TsvError` with one line, "path:line: what is wrong"
(JSON-lines files too).
`read_tfds` reads the same tasks from TensorFlow Datasets' prepared `glue/*` data instead.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import os
import re
from typing import Iterator, Mapping

import numpy as np

from data_prep.input_errors import TsvError, utf8_lines
from data_prep.json_lines import json_string, read_json_lines

SPLITS = ("train", "dev", "test")
JSON_LINES_SUFFIXES = (".jsonl", ".jsonl.gz")

# Label lists, in the original's order (a label's id is its index).
_BINARY = ("0", "1")
_NLI = ("contradiction", "entailment", "neutral")
_ENTAILMENT = ("entailment", "not_entailment")


@dataclasses.dataclass(frozen=True)
class InputExample:
    """One example of a sentence or sentence-pair task, as the original's `InputExample`.

    Attributes:
      guid: "<split>-<row>", row the 0-based line of the file, the header's included (the
        original's ids for CoLA, MRPC and XNLI); the file's own id where it has one (20ng's
        "train/alt.atheism/49960").
      text_a: the first (or only) text, untokenized.
      text_b: the second text; None for single-sentence tasks.
      label: a string of the task's `get_labels()` (for STS-B a number, "3.800"); None for
        unlabelled test examples.
    """
    guid: str
    text_a: str
    text_b: str | None = None
    label: str | None = None


@dataclasses.dataclass(frozen=True)
class Columns:
    """Where one split's fields are in its file.

    A str names a header column; an int is a 0-based position (for files without a header, and
    where the original read by position). `label` None: the split is read unlabelled.
    `where`: (column, value) that a row must have to be read (XNLI's dev set mixes languages).
    A file named `*.jsonl` or `*.jsonl.gz` is JSON lines, one object a line: the fields are
    keys (str), and `has_header` and `where` do not apply; `json_lines` says so for a file of
    another name. `guid`: the field that holds each
    example's id; None: "<split>-<row>".
    """
    file: str
    text_a: str | int
    text_b: str | int | None = None
    label: str | int | None = None
    has_header: bool = True
    where: tuple[str | int, str] | None = None
    guid: str | int | None = None
    json_lines: bool = False  # JSON lines whatever the name (SciBERT's files are *.txt)

    @property
    def is_json_lines(self) -> bool:
        return self.json_lines or self.file.endswith(JSON_LINES_SUFFIXES)


@dataclasses.dataclass(frozen=True)
class TaskProcessor:
    """How one task's files are read.

    Attributes:
      name: the task's name in `PROCESSORS`, also used in cache keys and file names.
      labels: the label strings in the original's order (a label's id is its index); None for
        a regression task, whose labels are numbers.
      splits: "train" / "dev" / "test" -> where that split's fields are.
      submission_name: the stem of the task's GLUE leaderboard file (`submission_file`).
      skip_malformed: skip rows whose column count differs from the header's (QQP).
      label_aliases: label spellings mapped to `labels` (XNLI's translated train says
        "contradictory").
      language: the language of a multilingual task's data ("de" for "xnli-de"); None for a
        task of one language.
    """
    name: str
    labels: tuple[str, ...] | None
    splits: Mapping[str, Columns]
    submission_name: str | None = None
    skip_malformed: bool = False
    label_aliases: Mapping[str, str] = dataclasses.field(default_factory=dict)
    language: str | None = None

    @property
    def is_regression(self) -> bool:
        return self.labels is None

    @property
    def is_pair(self) -> bool:
        """Whether the task's texts come in pairs (text_a and text_b)."""
        return any(columns.text_b is not None for columns in self.splits.values())

    def get_labels(self) -> list[str] | None:
        """The label strings; a label's id is its index. None: regression (float labels)."""
        return None if self.labels is None else list(self.labels)

    def path(self, data_dir: str, split: str) -> str:
        """The file that holds `split`."""
        if split not in self.splits:
            raise ValueError(f"task {self.name} has no split {split!r}; it has "
                             f"{', '.join(self.splits)}")
        return os.path.join(data_dir, self.splits[split].file)

    def get_examples(self, data_dir: str, split: str) -> list[InputExample]:
        """Reads `split` ("train", "dev" or "test") from `data_dir`, in file order."""
        path = self.path(data_dir, split)
        columns = self.splits[split]
        if columns.is_json_lines:
            return self._json_lines_examples(path, split)
        rows = _read_rows(path)
        header = next(rows, None) if columns.has_header else None
        if columns.has_header and header is None:
            raise TsvError(f"{path}:1: empty file, expected a header")
        position = {field: _position(path, header, getattr(columns, field))
                    for field in ("text_a", "text_b", "label")
                    if getattr(columns, field) is not None}
        where = None
        if columns.where is not None:
            where = _position(path, header, columns.where[0]), columns.where[1]
        needed = 1 + max([*position.values(), where[0] if where else 0])
        examples, skipped, values = [], [], set()
        for number, fields in rows:
            if self.skip_malformed and len(fields) != len(header[1]):
                skipped.append(number)
                continue
            if len(fields) < needed:
                raise TsvError(f"{path}:{number}: {len(fields)} columns, expected at least "
                               f"{needed}")
            if where and fields[where[0]] != where[1]:
                values.add(fields[where[0]])
                continue
            label = fields[position["label"]] if "label" in position else None
            examples.append(InputExample(
                guid=f"{split}-{number - 1}",
                text_a=fields[position["text_a"]],
                text_b=fields[position["text_b"]] if "text_b" in position else None,
                label=None if label is None else self._checked_label(label, f"{path}:{number}")))
        if skipped:
            logging.warning("%s: skipped %d rows without the header's %d columns (lines %s)",
                            path, len(skipped), len(header[1]), ", ".join(map(str, skipped[:10])))
        if where and not examples:
            # XNLI's dev file without the language asked for: say which it holds.
            column = header[1][where[0]] if header else f"column {where[0]}"
            raise TsvError(f"{path}: no rows with {column} {where[1]!r}; it has "
                           f"{', '.join(sorted(values)) or 'no rows'}")
        if not examples:
            raise TsvError(f"{path}: no examples"
                           + (" after its header" if columns.has_header else ""))
        return examples

    def _json_lines_examples(self, path: str, split: str) -> list[InputExample]:
        """`get_examples` of a JSON-lines file: every line an object with the split's keys,
        string values, a listed label and an id no earlier line has."""
        columns = self.splits[split]
        keys = {field: getattr(columns, field) for field in ("guid", "text_a", "text_b", "label")
                if getattr(columns, field) is not None}
        examples, line_of_id = [], {}
        for number, record in read_json_lines(path):
            where = f"{path}:{number}"
            values = {field: json_string(record, key, where) for field, key in keys.items()}
            guid = values.get("guid", f"{split}-{number - 1}")
            if guid in line_of_id:
                raise TsvError(f"{where}: id {guid!r} already on line {line_of_id[guid]}")
            line_of_id[guid] = number
            label = values.get("label")
            examples.append(InputExample(
                guid=guid, text_a=values["text_a"], text_b=values.get("text_b"),
                label=None if label is None else self._checked_label(label, where)))
        if not examples:
            raise TsvError(f"{path}: no examples")
        return examples

    # The original's three methods, for code written against its processors.
    def get_train_examples(self, data_dir: str) -> list[InputExample]:
        return self.get_examples(data_dir, "train")

    def get_dev_examples(self, data_dir: str) -> list[InputExample]:
        return self.get_examples(data_dir, "dev")

    def get_test_examples(self, data_dir: str) -> list[InputExample]:
        return self.get_examples(data_dir, "test")

    def _checked_label(self, label: str, where: str) -> str:
        label = self.label_aliases.get(label, label)
        if self.labels is None:
            try:
                score = float(label)
            except ValueError:
                raise TsvError(f"{where}: label {label!r} is not a number") from None
            if not math.isfinite(score):  # a nan target is a nan loss; a nan dev score, nan metrics
                raise TsvError(f"{where}: label {label!r} is not a finite number")
        elif label not in self.labels:
            raise TsvError(f"{where}: label {label!r} is not one of {', '.join(self.labels)}")
        return label


def _read_rows(path: str) -> Iterator[tuple[int, list[str]]]:
    """(1-based line number, tab-separated fields) of each non-blank line of a UTF-8 file
    (lines as `utf8_lines` reads them: a stray "\\r" or U+2028 inside a text stays text)."""
    for number, line in utf8_lines(path, TsvError):
        if line:
            yield number, line.split("\t")


def _position(path: str, header: tuple[int, list[str]] | None, column: str | int) -> int:
    """The 0-based position of `column`: itself if an int, else looked up in the header
    (line number, names)."""
    if isinstance(column, int):
        return column
    number, names = header
    if column not in names:
        raise TsvError(f"{path}:{number}: no column {column!r} in the header "
                       f"({', '.join(names)})")
    return names.index(column)


def _glue_splits(text_a: str, text_b: str | None, label: str, dev: str = "dev.tsv",
                 test: str = "test.tsv") -> dict[str, Columns]:
    """train.tsv, dev.tsv and test.tsv with headers naming the same text columns; test has no
    labels."""
    return {"train": Columns("train.tsv", text_a, text_b, label),
            "dev": Columns(dev, text_a, text_b, label),
            "test": Columns(test, text_a, text_b)}


def xnli_processor(language: str = "zh") -> TaskProcessor:
    """XNLI for one language, as the original's `XnliProcessor` (whose language is "zh").

    Layout of the XNLI downloads, read by position as the original does: train is MultiNLI
    machine-translated, `<data_dir>/multinli/multinli.train.<language>.tsv` (premise, hypo,
    label); dev is `<data_dir>/xnli.dev.tsv`, every language in one file (language, gold_label,
    ..., sentence1 at 6, sentence2 at 7). Test (not in the original) is `xnli.test.tsv`, laid
    out like dev and labelled.
    """
    dev_like = dict(text_a=6, text_b=7, label=1, where=(0, language))
    return TaskProcessor(
        name=f"xnli-{language}", labels=_NLI,
        splits={"train": Columns(f"multinli/multinli.train.{language}.tsv", 0, 1, 2),
                "dev": Columns("xnli.dev.tsv", **dev_like),
                "test": Columns("xnli.test.tsv", **dev_like)},
        label_aliases={"contradictory": "contradiction"}, language=language)


def pawsx_processor(language: str = "en") -> TaskProcessor:
    """PAWS-X (Yang et al. 2019): whether two sentences are paraphrases ("1") or not ("0"), in
    one language.

    Layout of the released `x-final` folder (data_dir): `<language>/train.tsv` for English (PAWS'
    Wikipedia pairs), `<language>/translated_train.tsv` for the others (machine-translated),
    and `<language>/dev_2k.tsv` and `<language>/test_2k.tsv` (human-translated, labelled), each
    with the header `id, sentence1, sentence2, label`. The files are read as released: a
    sentence whose machine translation failed is an empty text, and the few dev and test
    sentences left untranslated read "NS".
    """
    pair = dict(text_a="sentence1", text_b="sentence2", label="label")
    train = "train.tsv" if language == "en" else "translated_train.tsv"
    return TaskProcessor(
        name=f"pawsx-{language}", labels=_BINARY,
        splits={"train": Columns(f"{language}/{train}", **pair),
                "dev": Columns(f"{language}/dev_2k.tsv", **pair),
                "test": Columns(f"{language}/test_2k.tsv", **pair)},
        language=language)


# The multilingual tasks: "<name>-<language>" is the task in that language.
LANGUAGE_TASKS = {"xnli": xnli_processor, "pawsx": pawsx_processor}


_COLA = TaskProcessor(
    "cola", _BINARY, submission_name="CoLA",
    splits={"train": Columns("train.tsv", text_a=3, label=1, has_header=False),
            "dev": Columns("dev.tsv", text_a=3, label=1, has_header=False),
            "test": Columns("test.tsv", text_a="sentence")})
_SST2 = TaskProcessor("sst-2", _BINARY, _glue_splits("sentence", None, "label"), "SST-2")
_STSB = TaskProcessor("sts-b", None, _glue_splits("sentence1", "sentence2", "score"), "STS-B")
_MNLI = TaskProcessor(
    "mnli", _NLI, _glue_splits("sentence1", "sentence2", "gold_label", dev="dev_matched.tsv",
                               test="test_matched.tsv"), "MNLI-m")

PROCESSORS: dict[str, TaskProcessor] = {
    "cola": _COLA,
    "sst-2": _SST2,
    "sst2": _SST2,
    "mrpc": TaskProcessor("mrpc", _BINARY, _glue_splits("#1 String", "#2 String", "Quality"),
                          "MRPC"),
    "sts-b": _STSB,
    "stsb": _STSB,
    "qqp": TaskProcessor("qqp", _BINARY, _glue_splits("question1", "question2", "is_duplicate"),
                         "QQP", skip_malformed=True),
    "mnli": _MNLI,
    "mnli-mm": TaskProcessor(
        "mnli-mm", _NLI, _glue_splits("sentence1", "sentence2", "gold_label",
                                      dev="dev_mismatched.tsv", test="test_mismatched.tsv"),
        "MNLI-mm"),
    "qnli": TaskProcessor("qnli", _ENTAILMENT, _glue_splits("question", "sentence", "label"),
                          "QNLI"),
    "rte": TaskProcessor("rte", _ENTAILMENT, _glue_splits("sentence1", "sentence2", "label"),
                         "RTE"),
    "wnli": TaskProcessor("wnli", _BINARY, _glue_splits("sentence1", "sentence2", "label"),
                          "WNLI"),
    # GLUE's diagnostic set (data_dir: glue_data/diagnostic): test only, predicted by an MNLI
    # model, its labels MNLI's.
    "ax": TaskProcessor("ax", _NLI, {"test": Columns("diagnostic.tsv", "sentence1", "sentence2")},
                        "AX"),
    "xnli": xnli_processor("zh"),
    "pawsx": pawsx_processor("en"),
}


TSV_TASK = "tsv"
NEWSGROUPS_TASK = "20ng"
SCIBERT_TASK = "scibert_jsonl"
LABELS_FILE = "labels.txt"


def read_labels(data_dir: str) -> tuple[str, ...]:
    """`data_dir/labels.txt`: one label a line (a label's id is its line), each once."""
    path = os.path.join(data_dir, LABELS_FILE)
    labels = [fields[0] for _, fields in _read_rows(path)]
    if not labels:
        raise TsvError(f"{path}: no labels")
    repeated = sorted({label for label in labels if labels.count(label) > 1})
    if repeated:
        raise TsvError(f"{path}: labels listed twice: {', '.join(repeated)}")
    return tuple(labels)


def tsv_processor(data_dir: str) -> TaskProcessor:
    """Task "tsv": sentence or sentence-pair classification on files laid out as GLUE's.

    `data_dir` holds `labels.txt` (the labels, one per line; a label's id is its line) and
    train.tsv, dev.tsv and test.tsv, each with a header naming its columns: `sentence` and
    `label` for single sentences, `sentence1`, `sentence2` and `label` for pairs. test.tsv may
    leave out the label column; when it has one, its labels are read too (for scoring the
    predictions elsewhere: run_classifier's test predictions never look at them). Whether the
    task takes pairs is read from the header of the first of those files that exists.
    """
    labels = read_labels(data_dir)
    headers = {}
    for split in SPLITS:
        split_path = os.path.join(data_dir, f"{split}.tsv")
        if os.path.isfile(split_path):
            headers[split] = next(_read_rows(split_path), (0, []))[1]
    pair = "sentence2" in next(iter(headers.values()), [])
    text_a, text_b = ("sentence1", "sentence2") if pair else ("sentence", None)
    splits = _glue_splits(text_a, text_b, "label")
    if "label" in headers.get("test", []):
        splits["test"] = Columns("test.tsv", text_a, text_b, "label")
    return TaskProcessor(TSV_TASK, labels, splits)


def newsgroups_processor(data_dir: str) -> TaskProcessor:
    """Task "20ng": 20 Newsgroups ("bydate" split), a whole Usenet post classified by the
    newsgroup it was posted to.

    `data_dir` holds `labels.txt` (the newsgroups, one a line, a label's id its line; a
    subset of the 20 makes a smaller task) and the posts as JSON lines, one
    `{"label": newsgroup, "text": post, "id": "train/<newsgroup>/<n>"}` a line, gzip-compressed
    as distributed here (`train.jsonl.gz`, `test.jsonl.gz`; `data/20newsgroups/` is a sample) or
    uncompressed (`train.jsonl`, `test.jsonl`). A folder that holds both forms of one file is
    refused: which one was meant (an edited copy, a stale one) would be a guess.

    An example is InputExample(id, post, None, newsgroup). The post is the raw text, headers,
    quotes and signatures included, nothing stripped: many posts are longer than any
    max_seq_length (a quarter of them over 510 WordPiece tokens), which is what the task is
    for. The label is the record's own, never read from the text.

    20 Newsgroups has no dev split: "dev" and "test" both read the test file, as run_squad's
    --predict_file serves both. So the checkpoint kept in best/ is chosen on the posts the
    test figures are measured on, and those figures are optimistic; for an unbiased test
    score, choose the checkpoint on training posts held out by oneself.
    """
    labels = read_labels(data_dir)
    files = {split: _json_lines_file(data_dir, split) for split in ("train", "test")}
    post = dict(text_a="text", label="label", guid="id")
    return TaskProcessor(NEWSGROUPS_TASK, labels,
                         {"train": Columns(files["train"], **post),
                          "dev": Columns(files["test"], **post),
                          "test": Columns(files["test"], **post)})


def scibert_processor(data_dir: str) -> TaskProcessor:
    """Task "scibert_jsonl": SciBERT's text-classification files (ChemProt, ACL-ARC, SciCite),
    as allenai/scibert released them: `train.txt`, `dev.txt` and `test.txt` in `data_dir`, JSON
    lines `{"text": ..., "label": ..., "metadata": ...}` (metadata not read).

    The labels are `data_dir/labels.txt` when there is one (a label's id is its line), else every
    label of train.txt sorted, so a released folder is a task as it is. The text is read as
    released: ChemProt's entity markers (`<< >>`, `[[ ]]`) stay in it, as SciBERT fed them.
    Scored by micro-F1 (ChemProt's metric; accuracy, one gold label each) and macro-F1
    (ACL-ARC's), both in eval_results.txt (official/tasks/glue_metrics.py).
    """
    files = {split: Columns(f"{split}.txt", "text", label="label", json_lines=True)
             for split in SPLITS}
    if os.path.isfile(os.path.join(data_dir, LABELS_FILE)):
        labels = read_labels(data_dir)
    else:
        train = os.path.join(data_dir, files["train"].file)
        labels = tuple(sorted({json_string(record, "label", f"{train}:{number}")
                               for number, record in read_json_lines(train)}))
        if not labels:
            raise TsvError(f"{train}: no examples")
    return TaskProcessor(SCIBERT_TASK, labels, files)


def _json_lines_file(data_dir: str, stem: str) -> str:
    """`<stem>.jsonl.gz` or `<stem>.jsonl`, whichever `data_dir` holds (the first if neither,
    so that reading names the file expected); an error if it holds both."""
    names = [stem + suffix for suffix in reversed(JSON_LINES_SUFFIXES)]
    present = [name for name in names if os.path.isfile(os.path.join(data_dir, name))]
    if len(present) > 1:
        raise TsvError(f"{data_dir}: holds both {' and '.join(present)}; keep one")
    return present[0] if present else names[0]


# Tasks whose files (labels.txt) are read when the processor is made.
_DATA_DIR_TASKS = {TSV_TASK: tsv_processor, NEWSGROUPS_TASK: newsgroups_processor,
                   SCIBERT_TASK: scibert_processor}


def get_processor(task_name: str, data_dir: str | None = None) -> TaskProcessor:
    """The processor of `task_name`, case-insensitive ("MRPC", "mnli-mm", "xnli-de", ...). Tasks
    "tsv" and "20ng" need their `data_dir` (`tsv_processor`, `newsgroups_processor`)."""
    make = _DATA_DIR_TASKS.get(task_name.lower())
    if make is not None:
        if data_dir is None:
            raise ValueError(f"task {task_name.lower()!r} needs the data_dir that holds "
                             f"{LABELS_FILE}")
        return make(data_dir)
    if task_name.lower() in PROCESSORS:
        return PROCESSORS[task_name.lower()]
    family, _, language = task_name.lower().partition("-")
    if family in LANGUAGE_TASKS and language:
        # The language names a folder (PAWS-X) and a file (XNLI's train): no path in it.
        if not re.fullmatch(r"[a-z0-9_-]+", language):
            raise ValueError(f"task {task_name!r}: a language is letters, digits, '-' and '_', "
                             f"as the data names it (de, zh)")
        return LANGUAGE_TASKS[family](language)
    raise ValueError(f"unknown task {task_name!r}; known: {', '.join(PROCESSORS)}, "
                     f"{', '.join(_DATA_DIR_TASKS)}, "
                     f"{', '.join(name + '-<language>' for name in LANGUAGE_TASKS)}")


def in_language(processor: TaskProcessor, language: str) -> TaskProcessor:
    """The multilingual task of `processor` read in `language` ("xnli-en" in "de": "xnli-de").

    Raises:
      ValueError: the task has one language (GLUE's, a TSV task's).
    """
    if processor.language is None:
        raise ValueError(f"task {processor.name} has no languages; the multilingual tasks are "
                         f"{', '.join(LANGUAGE_TASKS)}")
    return get_processor(f"{processor.name.removesuffix(processor.language)}{language}")


def submission_file(task_name: str) -> str:
    """The file name GLUE's leaderboard expects for the task's test predictions ("MNLI-m.tsv").

    Its lines are "index<TAB>prediction" after an "index\\tprediction" header, in test-file
    order; a prediction is a label string of `get_labels()`, or the score for STS-B.
    """
    processor = get_processor(task_name)
    if processor.submission_name is None:
        raise ValueError(f"task {task_name!r} is not part of GLUE's leaderboard")
    return f"{processor.submission_name}.tsv"


@dataclasses.dataclass(frozen=True)
class _TfdsConfig:
    """A task's TensorFlow Datasets `glue/<config>`: its text features and split names."""
    config: str
    text_features: tuple[str, ...]
    dev: str = "validation"
    test: str = "test"


_TFDS = {
    "cola": _TfdsConfig("cola", ("sentence",)),
    "sst-2": _TfdsConfig("sst2", ("sentence",)),
    "mrpc": _TfdsConfig("mrpc", ("sentence1", "sentence2")),
    "sts-b": _TfdsConfig("stsb", ("sentence1", "sentence2")),
    "qqp": _TfdsConfig("qqp", ("question1", "question2")),
    "mnli": _TfdsConfig("mnli", ("premise", "hypothesis"), "validation_matched", "test_matched"),
    "mnli-mm": _TfdsConfig("mnli", ("premise", "hypothesis"), "validation_mismatched",
                           "test_mismatched"),
    "qnli": _TfdsConfig("qnli", ("question", "sentence")),
    "rte": _TfdsConfig("rte", ("sentence1", "sentence2")),
    "wnli": _TfdsConfig("wnli", ("sentence1", "sentence2")),
    "ax": _TfdsConfig("ax", ("premise", "hypothesis")),
}


def read_tfds(task_name: str, split: str, data_dir: str | None) -> list[InputExample]:
    """The task's split from TensorFlow Datasets' prepared `glue/*` data (never downloads).

    Gives what the TSV reader gives: examples in the file's order (TFDS's `idx`; shards may be
    read in another order), label strings of `get_labels()` and None on test sets (TFDS
    writes -1 there). TFDS names its classes ("not_equivalent", "equivalent"): where those are
    not the task's label strings, its class i is label i ("0", "1"), as the GLUE files number
    them.
    """
    processor = get_processor(task_name)
    if processor.name not in _TFDS:
        raise ValueError(f"task {task_name!r} has no TensorFlow Datasets GLUE config")
    if split not in SPLITS:
        raise ValueError(f"split must be one of {', '.join(SPLITS)}, got {split!r}")
    tfds_config = _TFDS[processor.name]
    tfds_split = {"train": "train", "dev": tfds_config.dev, "test": tfds_config.test}[split]
    # Imported here: TFDS takes seconds to import and only this reader needs it.
    import tensorflow_datasets as tfds

    dataset, info = tfds.load(f"glue/{tfds_config.config}", split=tfds_split, data_dir=data_dir,
                              download=False, with_info=True, shuffle_files=False)
    rows = sorted(tfds.as_numpy(dataset), key=lambda row: int(row["idx"]))
    if not rows:
        raise ValueError(f"{data_dir}: TensorFlow Datasets' glue/{tfds_config.config} "
                         f"{tfds_split} split holds no examples")
    labels = processor.labels
    names = None if labels is None else info.features["label"].names
    examples = []
    for row in rows:
        text_a, *text_b = (row[key].decode("utf-8") for key in tfds_config.text_features)
        label = None
        if split != "test":
            if labels is None:
                label = str(np.float32(row["label"]))  # float32's shortest form: "3.8"
                processor._checked_label(label, f"{data_dir}: glue/{tfds_config.config} "
                                                f"{tfds_split} idx {int(row['idx'])}")
            else:
                index = int(row["label"])
                label = names[index] if names[index] in labels else labels[index]
        examples.append(InputExample(f"{split}-{int(row['idx'])}", text_a,
                                     text_b[0] if text_b else None, label))
    return examples
