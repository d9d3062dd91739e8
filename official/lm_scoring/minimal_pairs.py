"""Minimal pairs in BLiMP's format, and the figures published for them; no TensorFlow.

    read_pairs(paths, per_paradigm=None) -> [MinimalPair]
        JSON lines (gzip-compressed when the name ends in .gz), one pair a line:
        {"sentence_good": ..., "sentence_bad": ..., "UID": paradigm,
         "linguistics_term": phenomenon, "field": ...}; only the two sentences are required
        (the paradigm defaults to the file's name, the others to "other"); with `per_paradigm`,
        each paradigm's first pairs in file order
    read_published(path) -> Published        BLiMP's models_summary.jsonl: accuracy of a 5-gram
                                             model, an LSTM, Transformer-XL and GPT-2 per
                                             paradigm, per phenomenon and overall
    read_human(path) -> {paradigm: accuracy}  BLiMP's human_validation_summary.csv

BLiMP (Warstadt et al. 2020) is 67 paradigms of 1,000 pairs, each pair a grammatical and an
ungrammatical sentence that differ in one place; a language model gets a pair right when it
gives the good sentence the higher log-probability (the paper's "simple LM method", whole
sentences; official/lm_scoring/sentence_scores.py). Every error names the file and line.

Example:
    >>> import gzip, json, os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "anaphor_number_agreement.jsonl.gz")
    >>> rows = [{"sentence_good": "Susan revealed herself.",
    ...          "sentence_bad": "Susan revealed themselves.",
    ...          "UID": "anaphor_number_agreement", "linguistics_term": "anaphor_agreement",
    ...          "field": "morphology"},
    ...         {"sentence_good": "The boys saw themselves.",
    ...          "sentence_bad": "The boys saw himself."}]
    >>> with gzip.open(path, "wt", encoding="utf-8") as f:
    ...     _ = f.write("".join(json.dumps(row) + "\\n" for row in rows))
    >>> first, second = read_pairs([path])
    >>> first.paradigm, first.term, first.where.endswith(".jsonl.gz:1")
    ('anaphor_number_agreement', 'anaphor_agreement', True)
    >>> second.paradigm, second.term, second.field
    ('anaphor_number_agreement', 'other', 'other')
    >>> [pair.good for pair in read_pairs([path], per_paradigm=1)]
    ['Susan revealed herself.']
"""

from __future__ import annotations

import csv
import dataclasses
import gzip
import json
import os
from typing import Iterator, Sequence

UNNAMED = "other"  # the phenomenon and field of a pair that names none
# models_summary.jsonl's columns, in the order the paper's table gives them.
PUBLISHED_MODELS = {"ngram": "5-gram", "lstm": "LSTM", "txl": "Transformer-XL",
                    "gpt2": "GPT-2"}
OVERALL = "overall"  # models_summary.jsonl's name for a phenomenon's and the benchmark's figure
HUMAN = "human"


@dataclasses.dataclass(frozen=True)
class MinimalPair:
    """A grammatical sentence and its ungrammatical twin; `where` is "file:line"."""
    where: str
    good: str
    bad: str
    paradigm: str
    term: str
    field: str


def _json_rows(path: str) -> Iterator[tuple[str, object]]:
    """("file:line", the line's JSON value) for every non-blank line of a JSON-lines file,
    gzip-compressed or not; a line that is not JSON is a ValueError naming it."""
    opener = gzip.open if path.endswith(".gz") else open
    try:
        with opener(path, "rt", encoding="utf-8") as f:
            for number, line in enumerate(f, start=1):
                if not line.strip():
                    continue
                where = f"{path}:{number}"
                try:
                    yield where, json.loads(line)
                except json.JSONDecodeError as e:
                    raise ValueError(f"{where}: not JSON ({e.msg})") from None
    except FileNotFoundError:
        raise ValueError(f"{path}: no such file") from None
    except UnicodeDecodeError as e:
        raise ValueError(f"{path}: not UTF-8 (byte {e.start} of a line)") from None
    except (OSError, EOFError) as e:  # gzip's "Not a gzipped file", a cut-short stream
        raise ValueError(f"{path}: not gzip-compressed JSON lines ({e})") from None


def _paradigm_of(path: str) -> str:
    name = os.path.basename(path)
    for suffix in (".gz", ".jsonl", ".json"):
        name = name.removesuffix(suffix)
    return name


def _text(row: dict, key: str, where: str, default: str | None = None) -> str:
    value = row.get(key, default)
    if value is None:
        raise ValueError(f"{where}: no {key}")
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{where}: {key} is {json.dumps(value)[:60]}, not a sentence" if
                         key.startswith("sentence") else f"{where}: {key} is not a name")
    return value


def read_pairs(paths: Sequence[str], per_paradigm: int | None = None) -> list[MinimalPair]:
    """The pairs of every file in order (see the module docstring).

    Raises:
      ValueError: "file:line: problem" for a line that is not a JSON object or lacks a
        sentence; "file: no pairs" for a file without one.
    """
    if per_paradigm is not None and per_paradigm < 1:
        raise ValueError(f"pairs per paradigm must be at least 1, got {per_paradigm}")
    pairs, kept = [], {}
    for path in paths:
        found = 0
        for where, row in _json_rows(path):
            if not isinstance(row, dict):
                raise ValueError(f"{where}: not a JSON object")
            found += 1
            pair = MinimalPair(where, _text(row, "sentence_good", where),
                               _text(row, "sentence_bad", where),
                               _text(row, "UID", where, _paradigm_of(path)),
                               _text(row, "linguistics_term", where, UNNAMED),
                               _text(row, "field", where, UNNAMED))
            if per_paradigm is None or kept.get(pair.paradigm, 0) < per_paradigm:
                kept[pair.paradigm] = kept.get(pair.paradigm, 0) + 1
                pairs.append(pair)
        if not found:
            raise ValueError(f"{path}: no pairs (a BLiMP file has one JSON object a line)")
    return pairs


@dataclasses.dataclass(frozen=True)
class Published:
    """Accuracy (0-1) by model column of PUBLISHED_MODELS: `paradigms[uid][model]`,
    `terms[term][model]` and `overall[model]`."""
    paradigms: dict[str, dict[str, float]]
    terms: dict[str, dict[str, float]]
    overall: dict[str, float]


def read_published(path: str) -> Published:
    """BLiMP's models_summary.jsonl (UID "overall" rows are a phenomenon's figures, the row whose
    phenomenon is also "overall" the benchmark's).

    Raises:
      ValueError: "file:line: problem" for a row without its names or a model's figure.
    """
    paradigms, terms, overall = {}, {}, {}
    for where, row in _json_rows(path):
        try:
            uid, term = row["UID"], row["linguistics_term"]
            figures = {model: float(row[model]) for model in PUBLISHED_MODELS}
        except (KeyError, TypeError, ValueError):
            raise ValueError(f"{where}: not a models_summary row (UID, linguistics_term and "
                             f"{', '.join(PUBLISHED_MODELS)} as numbers)") from None
        if uid != OVERALL:
            paradigms[uid] = figures
        elif term != OVERALL:
            terms[term] = figures
        else:
            overall = figures
    if not paradigms:
        raise ValueError(f"{path}: no paradigm's figures")
    return Published(paradigms, terms, overall)


def read_human(path: str) -> dict[str, float]:
    """{paradigm: the share of human raters agreeing} from human_validation_summary.csv
    (columns Condition and total_mean).

    Raises:
      ValueError: "file:line: problem" for a row without a paradigm or a number.
    """
    try:
        with open(path, encoding="utf-8", newline="") as f:
            rows = list(csv.DictReader(f))
    except FileNotFoundError:
        raise ValueError(f"{path}: no such file") from None
    except UnicodeDecodeError as e:
        raise ValueError(f"{path}: not UTF-8 (byte {e.start})") from None
    human = {}
    for number, row in enumerate(rows, start=2):
        try:
            human[row["Condition"]] = float(row["total_mean"])
        except (KeyError, TypeError, ValueError):
            raise ValueError(f"{path}:{number}: not a human_validation_summary row (Condition, "
                             "total_mean)") from None
    if not human:
        raise ValueError(f"{path}: no rows after the header")
    return human
