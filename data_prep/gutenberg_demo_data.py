r"""How `data/gutenberg/` was made: the demo's pretraining corpus and its authorship task.

    python -m data_prep.gutenberg_demo_data \
      --sentences_file=../shared/data/pretraining_text/gutenberg_sentences.txt \
      --books_dir=../shared/data/pretraining_text/gutenberg_nltk --output_dir=data/gutenberg

Input: a corpus in the pretraining format (one sentence per line, a blank line between documents)
made from Project Gutenberg books, and the books themselves (`<author>-<title>.txt`), which say
who wrote each document: a document belongs to the author of the one book its longest sentence
is found in (whitespace aside). A document found in no book or in books of several authors, and
every line that mentions Project Gutenberg or an e-text (notes of the e-text's makers), is left
out.

Output, the same bytes for the same inputs and flags:
  corpus.txt              documents of the chosen authors, at most --corpus_bytes_per_author
                          each, in a seeded order (so that a chunk of the file holds every
                          author), for build_vocab, create_pretraining_data and run_pretraining;
  authorship/labels.txt   the authors, one per line (a label's id is its line);
  authorship/train.tsv    "sentence<TAB>label" with a header: --train_per_author sentences each;
  authorship/dev.tsv,     --eval_per_author sentences each, from documents held out of both
  authorship/test.tsv     corpus.txt and train.tsv (dev and test from different documents), so
                          no evaluated sentence was seen in pretraining or fine-tuning.
The task's sentences have --min_words to --max_words words and some lower-case letters (chapter
headings and speakers' names of plays are not sentences to attribute). The authorship folder is
`run_classifier --task_name=tsv` data (data_prep/glue.py).
"""

from __future__ import annotations

import collections
import dataclasses
import os
import random
import re
import sys

from absl import app
from absl import flags

from data_prep.input_errors import InputError
from official.atomic_files import open_atomically

flags.DEFINE_string("sentences_file", None, "The corpus: one sentence per line, documents "
                    "separated by blank lines.")
flags.DEFINE_string("books_dir", None, "The Project Gutenberg books, <author>-<title>.txt.")
flags.DEFINE_string("output_dir", None, "Where corpus.txt and authorship/ are written.")


@dataclasses.dataclass(frozen=True)
class Settings:
    """The flags of one run (see the module docstring and the flags' help)."""
    authors: tuple[str, ...] = ("austen", "chesterton", "milton", "shakespeare", "whitman")
    corpus_bytes_per_author: int = 300_000
    train_per_author: int = 600
    eval_per_author: int = 150
    min_words: int = 6
    max_words: int = 60
    seed: int = 12345


_S = Settings
flags.DEFINE_list("authors", list(_S.authors), "The authors kept, in label order.")
flags.DEFINE_integer("corpus_bytes_per_author", _S.corpus_bytes_per_author,
                     "Documents of an author are added to corpus.txt until this many bytes.")
flags.DEFINE_integer("train_per_author", _S.train_per_author, "Training sentences per author.")
flags.DEFINE_integer("eval_per_author", _S.eval_per_author,
                     "Dev sentences, and test sentences, per author.")
flags.DEFINE_integer("min_words", _S.min_words, "The fewest words of a task sentence.")
flags.DEFINE_integer("max_words", _S.max_words, "The most words of a task sentence.")
flags.DEFINE_integer("seed", _S.seed, "Seed of every random choice.")
FLAGS = flags.FLAGS

# Notes of the e-text's preparers, not the author's words.
_EDITORIAL = re.compile(r"gutenberg|e-?text", re.IGNORECASE)


@dataclasses.dataclass(frozen=True)
class Document:
    """One document of the corpus (its lines, editorial ones removed) and who wrote it."""
    author: str
    sentences: tuple[str, ...]


def read_books(books_dir: str) -> dict[str, str]:
    """{file stem: text with every whitespace run made one space}; UTF-8, else Latin-1."""
    books = {}
    for name in sorted(os.listdir(books_dir)):
        if name.endswith(".txt"):
            with open(os.path.join(books_dir, name), "rb") as f:
                raw = f.read()
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                text = raw.decode("latin-1")
            books[name[:-len(".txt")]] = " ".join(text.split())
    if not books:
        raise InputError(f"{books_dir}: no <author>-<title>.txt books")
    return books


def read_documents(sentences_file: str, books: dict[str, str]) -> list[Document]:
    """The corpus's documents with their authors, editorial lines and unattributed ones left out."""
    with open(sentences_file, encoding="utf-8") as f:
        blocks = f.read().split("\n\n")
    documents = []
    for block in blocks:
        lines = [line.strip() for line in block.split("\n")]
        lines = [line for line in lines if line and not _EDITORIAL.search(line)]
        if not lines:
            continue
        probe = " ".join(max(lines, key=len).split())
        authors = {stem.split("-")[0] for stem, text in books.items() if probe in text}
        if len(authors) == 1:
            documents.append(Document(authors.pop(), tuple(lines)))
    if not documents:
        raise InputError(f"{sentences_file}: no document is found in any book")
    return documents


def is_task_sentence(sentence: str, settings: Settings) -> bool:
    """Whether a line is a sentence worth attributing: not a heading, a speaker's name, a stub."""
    words = len(sentence.split())
    return (settings.min_words <= words <= settings.max_words
            and sum(c.islower() for c in sentence) >= len(sentence) // 2)


def split_author(documents: list[Document], settings: Settings, rng: random.Random
                 ) -> tuple[list[Document], list[str], list[str], list[str]]:
    """One author's (corpus documents, train, dev, test sentences).

    Documents are taken in a seeded order: first for test until it has eval_per_author
    sentences, then for dev likewise; the rest feed training and the corpus.
    """
    order = list(documents)
    rng.shuffle(order)
    held_out = {"test": [], "dev": []}
    rest = []
    for document in order:
        for split in ("test", "dev"):
            if len(held_out[split]) < settings.eval_per_author:
                held_out[split].extend(s for s in document.sentences
                                       if is_task_sentence(s, settings))
                break
        else:
            rest.append(document)
    pool = [s for document in rest for s in document.sentences if is_task_sentence(s, settings)]
    author = documents[0].author
    for split, sentences in [*held_out.items(), ("train", pool)]:
        wanted = settings.eval_per_author if split != "train" else settings.train_per_author
        if len(sentences) < wanted:
            raise InputError(f"author {author}: {len(sentences)} {split} sentences, "
                             f"{wanted} wanted")
    corpus, size = [], 0
    for document in rest:
        if size >= settings.corpus_bytes_per_author:
            break
        corpus.append(document)
        size += sum(len(s.encode("utf-8")) + 1 for s in document.sentences)
    return (corpus, rng.sample(pool, settings.train_per_author),
            rng.sample(held_out["dev"], settings.eval_per_author),
            rng.sample(held_out["test"], settings.eval_per_author))


def make(documents: list[Document], settings: Settings, output_dir: str) -> dict[str, int]:
    """Writes corpus.txt and authorship/ (see the module docstring); returns their row counts."""
    rng = random.Random(settings.seed)
    by_author = collections.defaultdict(list)
    for document in documents:
        by_author[document.author].append(document)
    corpus, rows = [], {"train": [], "dev": [], "test": []}
    for author in settings.authors:
        if author not in by_author:
            raise InputError(f"author {author}: no document; found {', '.join(sorted(by_author))}")
        docs, *splits = split_author(by_author[author], settings, rng)
        corpus.extend(docs)
        for split, sentences in zip(("train", "dev", "test"), splits):
            rows[split].extend((sentence, author) for sentence in sentences)
    rng.shuffle(corpus)
    with open_atomically(os.path.join(output_dir, "corpus.txt")) as f:
        f.write("\n\n".join("\n".join(document.sentences) for document in corpus) + "\n")
    task_dir = os.path.join(output_dir, "authorship")
    with open_atomically(os.path.join(task_dir, "labels.txt")) as f:
        f.write("".join(author + "\n" for author in settings.authors))
    for split, split_rows in rows.items():
        rng.shuffle(split_rows)
        with open_atomically(os.path.join(task_dir, f"{split}.tsv")) as f:
            f.write("sentence\tlabel\n")
            f.writelines(f"{sentence}\t{author}\n" for sentence, author in split_rows)
    return {"corpus documents": len(corpus), **{split: len(r) for split, r in rows.items()}}


def main(argv: list[str]) -> int:
    del argv  # Unused.
    settings = Settings(tuple(FLAGS.authors), FLAGS.corpus_bytes_per_author,
                        FLAGS.train_per_author, FLAGS.eval_per_author, FLAGS.min_words,
                        FLAGS.max_words, FLAGS.seed)
    try:
        counts = make(read_documents(FLAGS.sentences_file, read_books(FLAGS.books_dir)),
                      settings, FLAGS.output_dir)
    except InputError as e:
        print(f"gutenberg_demo_data: {e}", file=sys.stderr)
        return 1
    print("gutenberg_demo_data: " + ", ".join(f"{n} {what}" for what, n in counts.items()))
    return 0


if __name__ == "__main__":
    flags.mark_flags_as_required(["sentences_file", "books_dir", "output_dir"])
    app.run(main)
