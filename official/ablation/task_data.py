"""The task data an ablation study makes from the files it is given: an SST-2 subset, a SQuAD
split. Both are fixed by their inputs and sizes alone (never by a run's seed), so every row and
seed fine-tunes and evaluates on the same examples.

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
