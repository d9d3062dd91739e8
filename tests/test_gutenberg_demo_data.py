"""Tests for data_prep/gutenberg_demo_data.py on books and a corpus written here, and of the files
it made in data/gutenberg: who wrote what, held-out documents, the same bytes twice."""

import collections
import os

import pytest

from data_prep import gutenberg_demo_data as demo_data
from data_prep.input_errors import InputError

SHIPPED = os.path.join(os.path.dirname(__file__), "..", "data", "gutenberg")


def sentence(author, document, number):
    return f"This is sentence {number} of document {document} by {author} here."


def write_inputs(tmp_path, documents_per_author=6, sentences_per_document=8):
    """Books <author>-<title>.txt holding their documents' sentences (hard-wrapped, as e-texts
    are), and a corpus of those documents with an editorial line and an unattributable one."""
    books = tmp_path / "books"
    books.mkdir()
    blocks = []
    for author in ("austen", "milton", "blake"):
        book_text = []
        for document in range(documents_per_author):
            lines = [sentence(author, document, n) for n in range(sentences_per_document)]
            book_text.extend(lines)
            blocks.append(lines)
        wrapped = " ".join(book_text).replace(" of document", "\nof document")
        (books / f"{author}-works.txt").write_text(wrapped)
    blocks[0].append("This Project Gutenberg etext was prepared by a volunteer reader.")
    blocks.append(["A document that no book holds, written by nobody at all."])
    corpus = tmp_path / "sentences.txt"
    corpus.write_text("\n\n".join("\n".join(block) for block in blocks) + "\n")
    return str(corpus), str(books)


def document_of(text):
    """"7 by milton" for a sentence of `sentence(...)`."""
    return text.split(" of document ")[1].removesuffix(" here.")


def read_tsv(path):
    with open(path, encoding="utf-8") as f:
        assert f.readline() == "sentence\tlabel\n"
        return [tuple(line.rstrip("\n").split("\t")) for line in f]


def test_documents_are_attributed_by_their_books(tmp_path):
    corpus, books = write_inputs(tmp_path)
    documents = demo_data.read_documents(corpus, demo_data.read_books(books))
    assert collections.Counter(d.author for d in documents) == {"austen": 6, "milton": 6,
                                                                "blake": 6}
    assert not any("Gutenberg" in s for d in documents for s in d.sentences)


def test_dev_and_test_come_from_documents_held_out_of_everything_else(tmp_path):
    corpus, books = write_inputs(tmp_path)
    settings = demo_data.Settings(authors=("milton", "austen"), corpus_bytes_per_author=10 ** 6,
                                  train_per_author=12, eval_per_author=5, min_words=3)
    out = tmp_path / "out"
    counts = demo_data.make(demo_data.read_documents(corpus, demo_data.read_books(books)),
                            settings, str(out))
    assert counts == {"corpus documents": 8, "train": 24, "dev": 10, "test": 10}
    assert (out / "authorship" / "labels.txt").read_text() == "milton\nausten\n"
    splits = {split: read_tsv(out / "authorship" / f"{split}.tsv")
              for split in ("train", "dev", "test")}
    for split, rows in splits.items():
        assert collections.Counter(label for _, label in rows) == {
            "milton": len(rows) // 2, "austen": len(rows) // 2}
        for text, label in rows:
            assert f" by {label} here." in text  # each sentence carries its true author
    held_out = {split: {document_of(t) for t, _ in splits[split]} for split in ("dev", "test")}
    train_documents = {document_of(t) for t, _ in splits["train"]}
    corpus_lines = set((out / "corpus.txt").read_text().splitlines())
    corpus_documents = {document_of(line) for line in corpus_lines if line}
    assert not held_out["dev"] & held_out["test"]
    for documents in held_out.values():
        assert not documents & (train_documents | corpus_documents)
    assert "blake" not in (out / "corpus.txt").read_text()

    again = tmp_path / "again"
    demo_data.make(demo_data.read_documents(corpus, demo_data.read_books(books)), settings,
                   str(again))
    for name in ("corpus.txt", "authorship/train.tsv", "authorship/dev.tsv",
                 "authorship/test.tsv"):
        assert (again / name).read_bytes() == (out / name).read_bytes()


def test_too_few_sentences_is_an_error_naming_the_author(tmp_path):
    corpus, books = write_inputs(tmp_path, documents_per_author=3)
    documents = demo_data.read_documents(corpus, demo_data.read_books(books))
    with pytest.raises(InputError, match="author austen: 8 train sentences, 100 wanted"):
        demo_data.make(documents, demo_data.Settings(authors=("austen",), eval_per_author=5,
                                                     train_per_author=100, min_words=3),
                       str(tmp_path / "out"))
    with pytest.raises(InputError, match="author whitman: no document"):
        demo_data.make(documents, demo_data.Settings(authors=("whitman",)),
                       str(tmp_path / "out"))


def test_the_shipped_task_never_evaluates_a_sentence_seen_before():
    labels = open(os.path.join(SHIPPED, "authorship", "labels.txt")).read().split()
    splits = {split: read_tsv(os.path.join(SHIPPED, "authorship", f"{split}.tsv"))
              for split in ("train", "dev", "test")}
    assert labels == list(demo_data.Settings.authors)
    for split, rows in splits.items():
        per_author = (demo_data.Settings.train_per_author if split == "train"
                      else demo_data.Settings.eval_per_author)
        assert collections.Counter(label for _, label in rows) == {a: per_author for a in labels}
    with open(os.path.join(SHIPPED, "corpus.txt"), encoding="utf-8") as f:
        seen = set(f.read().splitlines()) | {text for text, _ in splits["train"]}
    for split in ("dev", "test"):
        assert not {text for text, _ in splits[split]} & seen
    assert not {t for t, _ in splits["dev"]} & {t for t, _ in splits["test"]}
