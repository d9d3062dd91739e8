"""The data an ablation study makes from the files it is given: its corpus as plain text, an SST-2
subset, a QNLI split, a SQuAD split; and the majority class of each dev set. All are fixed by
their inputs and sizes alone (never by a run's seed), so every row and seed pretrains,
fine-tunes and evaluates on the same text and examples.

    plain_corpus(files, path)
        the corpus files (gzip-compressed when named .gz) one after another in one plain text
        file, as create_pretraining_data and build_vocab read it; each file's documents end
        with a blank line, so none runs into the next file's
    qnli_split(glue_dir, dev_examples, folder)
        QNLI's released dev.tsv (its train set is not offline) in a seeded shuffle:
        `dev_examples` pairs in folder/dev.tsv, the others in folder/train.tsv
    majority_share(path, column) / majority_tag_share(conllu_path)
        the most frequent label's share of a dev set (%): a classifier that learnt nothing
        but the label distribution scores this

    sst2_subset(glue_dir, examples, folder)
        folder/train.tsv: `examples` rows of SST-2's train.tsv, a sample drawn by a shuffle
        seeded with SUBSET_SEED; folder/dev.tsv: SST-2's dev.tsv as it is
    squad_split(squad_file, train_questions, eval_questions, folder)
        SQuAD v1.1 JSON split by article, so that no paragraph is on both sides: the first
        TRAIN_SHARE of the articles train (their first `train_questions` questions, each with
        its first answer only: run_squad trains on one answer, as SQuAD's train set has one),
        the others evaluate (their first `eval_questions`, every answer kept, as the official
        evaluation reads them). The offline copy of SQuAD is its dev set alone
        (../shared/data/squad/PROVENANCE.md), so both halves come from it.

A file is written atomically, and only when its bytes would change.
"""

from __future__ import annotations

import collections
import gzip
import json
import os
import random

from official.atomic_files import open_atomically

SUBSET_SEED = 0
TRAIN_SHARE = 0.8


def _write_if_changed(path: str, text: str) -> None:
    if os.path.isfile(path):
        with open(path, encoding="utf-8", newline="") as f:
            if f.read() == text:
                return
    with open_atomically(path) as f:
        f.write(text)


def plain_corpus(files: tuple[str, ...], path: str) -> None:
    """Writes the corpus files as one plain text file at `path` (see the module docstring),
    only when its bytes would change."""
    parts = []
    for name in files:
        opener = gzip.open if name.endswith(".gz") else open
        with opener(name, "rt", encoding="utf-8", newline="") as f:
            text = f.read()
        parts.append(text if text.endswith("\n\n") or not text else
                     text + ("\n" if text.endswith("\n") else "\n\n"))
    _write_if_changed(path, "".join(parts))


def qnli_split(glue_dir: str, dev_examples: int, folder: str) -> tuple[int, int]:
    """Writes folder/train.tsv and folder/dev.tsv (see the module docstring); returns (training
    pairs, dev pairs).

    Raises:
      ValueError: a dev.tsv without QNLI's header, or with no more pairs than `dev_examples`.
    """
    source = os.path.join(glue_dir, "QNLI", "dev.tsv")
    with open(source, encoding="utf-8", newline="") as f:
        lines = f.read().splitlines(keepends=True)
    if not lines or lines[0].rstrip("\r\n").split("\t") != ["index", "question", "sentence",
                                                           "label"]:
        raise ValueError(f"{source}: not QNLI's dev.tsv (its header is index, question, "
                         "sentence, label)")
    rows = lines[1:]
    if len(rows) <= dev_examples:
        raise ValueError(f"{source}: {len(rows)} pairs, not more than the {dev_examples} held "
                         "out: nothing would train")
    random.Random(SUBSET_SEED).shuffle(rows)
    _write_if_changed(os.path.join(folder, "dev.tsv"), lines[0] + "".join(rows[:dev_examples]))
    _write_if_changed(os.path.join(folder, "train.tsv"), lines[0] + "".join(rows[dev_examples:]))
    return len(rows) - dev_examples, dev_examples


def majority_share(path: str, column: str) -> float:
    """The most frequent value's share (%) of a TSV's `column` (a dev set's labels)."""
    with open(path, encoding="utf-8-sig", newline="") as f:
        lines = f.read().splitlines()
    index = lines[0].split("\t").index(column)
    labels = collections.Counter(line.split("\t")[index] for line in lines[1:] if line)
    return 100.0 * max(labels.values()) / sum(labels.values())


def majority_tag_share(path: str) -> float:
    """The most frequent universal part of speech's share (%) of a CoNLL-U file's syntactic
    words (multiword tokens' lines and empty nodes left out, as run_ner reads them), gzip-
    compressed when named .gz."""
    tags: collections.Counter = collections.Counter()
    with (gzip.open if path.endswith(".gz") else open)(path, "rt", encoding="utf-8") as f:
        for line in f:
            fields = line.rstrip("\n").split("\t")
            if len(fields) == 10 and fields[0].isdigit():
                tags[fields[3]] += 1
    return 100.0 * max(tags.values()) / sum(tags.values())


def sst2_subset(glue_dir: str, examples: int, folder: str) -> tuple[int, int]:
    """Writes folder/train.tsv (a seeded sample of `examples` training rows, or all of them in
    a seeded order) and folder/dev.tsv (SST-2's); returns (rows kept, rows in SST-2's train).

    Raises:
      ValueError: a train.tsv without the header and rows of SST-2's.
    """
    source = os.path.join(glue_dir, "SST-2")
    with open(os.path.join(source, "train.tsv"), encoding="utf-8", newline="") as f:
        lines = f.read().splitlines(keepends=True)
    if not lines or lines[0].rstrip("\r\n").split("\t") != ["sentence", "label"]:
        raise ValueError(f"{os.path.join(source, 'train.tsv')}: not SST-2's train.tsv (its header "
                         "is sentence<TAB>label)")
    rows = lines[1:]
    random.Random(SUBSET_SEED).shuffle(rows)
    _write_if_changed(os.path.join(folder, "train.tsv"), lines[0] + "".join(rows[:examples]))
    with open(os.path.join(source, "dev.tsv"), encoding="utf-8", newline="") as f:
        _write_if_changed(os.path.join(folder, "dev.tsv"), f.read())
    return min(examples, len(rows)), len(rows)


def _first_questions(articles: list[dict], limit: int, first_answer_only: bool) -> dict:
    """The articles' paragraphs with their first `limit` questions in order (paragraphs and
    articles left without a question dropped)."""
    kept, left = [], limit
    for article in articles:
        paragraphs = []
        for paragraph in article["paragraphs"]:
            qas = paragraph["qas"][:left]
            left -= len(qas)
            if first_answer_only:
                qas = [dict(qa, answers=qa["answers"][:1]) for qa in qas]
            if qas:
                paragraphs.append(dict(paragraph, qas=qas))
        if paragraphs:
            kept.append(dict(article, paragraphs=paragraphs))
    return {"data": kept, "version": "1.1"}


def read_articles(squad_file: str) -> list[dict]:
    """The articles of a SQuAD JSON file.

    Raises:
      ValueError: not SQuAD JSON, or fewer than two articles (nothing to split).
    """
    try:
        with open(squad_file, encoding="utf-8") as f:
            articles = json.load(f)["data"]
        paragraphs = [p["qas"] for article in articles for p in article["paragraphs"]]
    except (json.JSONDecodeError, UnicodeDecodeError, KeyError, TypeError):
        raise ValueError(f"--squad_file={squad_file}: not SQuAD JSON (data > articles > "
                         "paragraphs > qas)") from None
    if len(articles) < 2 or not paragraphs:
        raise ValueError(f"--squad_file={squad_file}: {len(articles)} article(s); the sample "
                         "is split by article, so it needs two or more")
    return articles


def squad_split(squad_file: str, train_questions: int, eval_questions: int,
                folder: str) -> dict[str, tuple[int, int]]:
    """Writes folder/train.json and folder/dev.json (the module docstring's split); returns
    {"train": (articles, questions), "dev": (articles, questions)} as written."""
    articles = read_articles(squad_file)
    cut = min(max(round(TRAIN_SHARE * len(articles)), 1), len(articles) - 1)
    counts = {}
    for split, part, limit, first_only in (("train", articles[:cut], train_questions, True),
                                           ("dev", articles[cut:], eval_questions, False)):
        kept = _first_questions(part, limit, first_only)
        _write_if_changed(os.path.join(folder, f"{split}.json"), json.dumps(kept))
        counts[split] = (len(kept["data"]), sum(len(p["qas"]) for a in kept["data"]
                                                for p in a["paragraphs"]))
    return counts
