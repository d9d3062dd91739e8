"""Tests for data_prep/gutenberg_demo_data.py on books and a corpus written here, and of the files
it made in data/gutenberg: who wrote what, held-out documents, passages' lengths, the same bytes
twice."""

import collections
import os
import random

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
                                  train_per_author=12, eval_per_author=5, min_words=3,
                                  **SHORT_PASSAGES)
    out = tmp_path / "out"
    counts = demo_data.make(demo_data.read_documents(corpus, demo_data.read_books(books)),
                            settings, str(out))
    assert counts == {"corpus documents": 8, "train": 24, "dev": 10, "test": 10,
                      "train passages": 8, "dev passages": 4, "test passages": 4}
    assert (out / "authorship" / "labels.txt").read_text() == "milton\nausten\n"
    splits = {split: read_tsv(out / "authorship" / f"{split}.tsv")
              for split in ("train", "dev", "test")}
    for rows in splits.values():
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
                 "authorship/test.tsv", "authorship_passages/labels.txt",
                 "authorship_passages/train.tsv", "authorship_passages/dev.tsv",
                 "authorship_passages/test.tsv"):
        assert (again / name).read_bytes() == (out / name).read_bytes()


# Passages of the test books' 80-word documents: 20 to 60 words, so a document gives one to
# four, and a held-out split (one document here) fewer than the 3 wanted.
SHORT_PASSAGES = dict(train_passages_per_author=4, eval_passages_per_author=3,
                      passage_min_words=20, passage_max_words=60)


def test_passages_are_consecutive_sentences_of_the_splits_own_documents(tmp_path):
    corpus, books = write_inputs(tmp_path)
    settings = demo_data.Settings(authors=("milton", "austen"), corpus_bytes_per_author=10 ** 6,
                                  train_per_author=12, eval_per_author=5, min_words=3,
                                  **SHORT_PASSAGES)
    out = tmp_path / "out"
    demo_data.make(demo_data.read_documents(corpus, demo_data.read_books(books)), settings,
                   str(out))
    sentences = {split: read_tsv(out / "authorship" / f"{split}.tsv")
                 for split in ("train", "dev", "test")}
    passages = {split: read_tsv(out / "authorship_passages" / f"{split}.tsv")
                for split in ("train", "dev", "test")}
    assert (out / "authorship_passages" / "labels.txt").read_text() == "milton\nausten\n"
    corpus_text = (out / "corpus.txt").read_text()
    for split, rows in passages.items():
        per_author = collections.Counter(label for _, label in rows)
        if split == "train":
            assert per_author == {"milton": 4, "austen": 4}
        else:
            assert set(per_author) == {"milton", "austen"} and max(per_author.values()) <= 3
        split_documents = {document_of(t) for t, _ in sentences[split]}
        for text, label in rows:
            assert 20 <= len(text.split()) <= 60
            parts = [part + " here." for part in text.split(" here. ") if part]
            parts[-1] = parts[-1].removesuffix(" here.")
            numbers = [int(part.split()[3]) for part in parts]
            assert numbers == list(range(numbers[0], numbers[0] + len(numbers)))  # consecutive
            assert {document_of(part) for part in parts} == {document_of(parts[0])}  # one
            assert document_of(parts[0]).endswith(f" by {label}")
            if split != "train":
                assert document_of(parts[0]) in split_documents
                assert parts[0] not in corpus_text


def test_a_split_without_a_passage_is_an_error(tmp_path):
    corpus, books = write_inputs(tmp_path)
    documents = demo_data.read_documents(corpus, demo_data.read_books(books))
    with pytest.raises(InputError, match="author milton: no train passage of 100 to 300 words"):
        demo_data.make(documents, demo_data.Settings(
            authors=("milton",), train_per_author=12, eval_per_author=5, min_words=3,
            passage_min_words=100, passage_max_words=300), str(tmp_path / "out"))


def test_cut_passages_draws_lengths_and_never_overflows():
    document = demo_data.Document("a", tuple(" ".join(["w"] * n) for n in
                                             [50] * 40 + [400] + [10] * 30 + [90, 5]))
    settings = demo_data.Settings(passage_min_words=100, passage_max_words=300)
    passages = demo_data.cut_passages(document, settings, random.Random(0))
    lengths = [len(p.split()) for p in passages]
    assert all(100 <= n <= 300 for n in lengths)
    assert len(set(lengths)) > 3  # drawn, not one length
    assert sum(lengths) <= 50 * 40 + 10 * 30 + 95  # all but the 400-word line, at most
    again = demo_data.cut_passages(document, settings, random.Random(0))
    assert passages == again
    tabbed = demo_data.Document("a", tuple("a\tb c" for _ in range(40)))
    assert "\t" not in "".join(demo_data.cut_passages(tabbed, settings, random.Random(0)))


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


def test_the_shipped_passages_are_long_and_never_seen_before():
    settings = demo_data.Settings
    folder = os.path.join(SHIPPED, "authorship_passages")
    assert open(os.path.join(folder, "labels.txt")).read().split() == list(settings.authors)
    splits = {split: read_tsv(os.path.join(folder, f"{split}.tsv"))
              for split in ("train", "dev", "test")}
    counts = {split: collections.Counter(label for _, label in rows)
              for split, rows in splits.items()}
    # As the README says: the held-out documents give fewer than the 10 wanted.
    assert counts == {
        "train": {"austen": 40, "chesterton": 39, "milton": 29, "shakespeare": 40, "whitman": 40},
        "dev": {"austen": 4, "chesterton": 3, "milton": 10, "shakespeare": 4, "whitman": 5},
        "test": {"austen": 5, "chesterton": 2, "milton": 10, "shakespeare": 3, "whitman": 7}}
    for rows in splits.values():
        for text, _ in rows:
            assert settings.passage_min_words <= len(text.split()) <= settings.passage_max_words
    with open(os.path.join(SHIPPED, "corpus.txt"), encoding="utf-8") as f:
        corpus = f.read()
    train_text = " ".join(text for text, _ in splits["train"])
    train_sentences = {text for text, _ in read_tsv(os.path.join(SHIPPED, "authorship",
                                                                 "train.tsv"))}
    for split in ("dev", "test"):
        held_out = {text for text, _ in read_tsv(os.path.join(SHIPPED, "authorship",
                                                              f"{split}.tsv"))}
        for text, _ in splits[split]:
            # Every 12-word stretch is new: no passage text is in corpus.txt or the train rows.
            words = text.split()
            for start in range(0, len(words) - 12, 12):
                stretch = " ".join(words[start:start + 12])
                assert stretch not in corpus and stretch not in train_text
            assert not any(sentence in text for sentence in train_sentences)
        # ... and the split's sentences come from the same documents as its passages.
        passages_text = " ".join(text for text, _ in splits[split])
        assert sum(sentence in passages_text for sentence in held_out) > len(held_out) // 4
