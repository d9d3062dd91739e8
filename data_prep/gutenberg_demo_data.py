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
  authorship_passages/    the same task on passages: labels.txt as above, train.tsv, dev.tsv
                          and test.tsv ("sentence<TAB>label" with a header), a passage a row,
                          --train_passages_per_author and --eval_passages_per_author of each
                          author (all there are where the documents hold fewer).
The task's sentences have --min_words to --max_words words and some lower-case letters (chapter
headings and speakers' names of plays are not sentences to attribute). A passage is consecutive
lines of one document (every line, headings included), joined by spaces, of
--passage_min_words to --passage_max_words words: long inputs, for classifying documents longer
than max_seq_length. Each split's passages come from that split's documents of the sentence
task (test passages from its test documents, dev from its dev documents, train from the rest),
so no dev or test passage is in corpus.txt or either train.tsv. Both folders are
`run_classifier --task_name=tsv` data (data_prep/glue.py).

How passages are cut: each document of a split, in the seeded order above, is walked from its
first line; a passage's length is drawn uniformly from --passage_min_words to
--passage_max_words and it takes lines until it has that many words, or ends before a line
that would take it over --passage_max_words (a line longer than that is skipped); a document's
last passage is what is left, kept if it has --passage_min_words. So passages never overlap
and never cross documents. Of an author's passages in a split, a seeded sample of the number
wanted is kept. Passages draw from their own `random.Random`, seeded by --seed too, so that
the sentence task's files are the same bytes with or without them.
"""

from __future__ import annotations

import collections
import dataclasses
import os
import random
import re

from absl import flags

from data_prep.input_errors import InputError
from official import command_line
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
    train_passages_per_author: int = 40
    eval_passages_per_author: int = 10
    passage_min_words: int = 300
    passage_max_words: int = 3000


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
flags.DEFINE_integer("train_passages_per_author", _S.train_passages_per_author,
                     "Training passages per author (fewer if the documents hold fewer).")
flags.DEFINE_integer("eval_passages_per_author", _S.eval_passages_per_author,
                     "Dev passages, and test passages, per author (fewer if the documents hold "
                     "fewer).")
flags.DEFINE_integer("passage_min_words", _S.passage_min_words, "The fewest words of a passage.")
flags.DEFINE_integer("passage_max_words", _S.passage_max_words, "The most words of a passage.")
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


@dataclasses.dataclass(frozen=True)
class AuthorSplit:
    """One author's share of the outputs.

    Attributes:
      corpus: the documents written to corpus.txt (some of documents["train"]).
      documents: "train" / "dev" / "test" -> the documents that split draws from.
      sentences: "train" / "dev" / "test" -> the split's task sentences.
    """
    corpus: list[Document]
    documents: dict[str, list[Document]]
    sentences: dict[str, list[str]]


def split_author(documents: list[Document], settings: Settings, rng: random.Random
                 ) -> AuthorSplit:
    """One author's corpus documents and the documents and sentences of each split.

    Documents are taken in a seeded order: first for test until it has eval_per_author
    sentences, then for dev likewise; the rest feed training and the corpus.
    """
    order = list(documents)
    rng.shuffle(order)
    held_out = {"test": [], "dev": []}
    held_out_documents = {"test": [], "dev": []}
    rest = []
    for document in order:
        for split in ("test", "dev"):
            if len(held_out[split]) < settings.eval_per_author:
                held_out[split].extend(s for s in document.sentences
                                       if is_task_sentence(s, settings))
                held_out_documents[split].append(document)
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
    sentences = {"train": rng.sample(pool, settings.train_per_author),
                 "dev": rng.sample(held_out["dev"], settings.eval_per_author),
                 "test": rng.sample(held_out["test"], settings.eval_per_author)}
    return AuthorSplit(corpus, {"train": rest, **held_out_documents}, sentences)


def cut_passages(document: Document, settings: Settings, rng: random.Random) -> list[str]:
    """The document cut into passages (see the module docstring), each its lines joined by
    spaces, tabs made spaces (a passage is one TSV field)."""
    low, high = settings.passage_min_words, settings.passage_max_words
    passages, lines, words = [], [], 0
    target = rng.randint(low, high)
    for line in document.sentences:
        count = len(line.split())
        if words + count > high:  # the passage ends before this line
            if words >= low:
                passages.append(lines)
            lines, words, target = [], 0, rng.randint(low, high)
            if count > high:
                continue
        lines.append(line)
        words += count
        if words >= target:
            passages.append(lines)
            lines, words, target = [], 0, rng.randint(low, high)
    if words >= low:
        passages.append(lines)
    return [" ".join(lines).replace("\t", " ") for lines in passages]


def author_passages(author: AuthorSplit, name: str, settings: Settings, rng: random.Random
                    ) -> dict[str, list[str]]:
    """split -> the author's passages: a seeded sample of those its documents give, at most
    the number wanted; an error if a split has none."""
    chosen = {}
    for split, documents in author.documents.items():
        passages = [p for document in documents for p in cut_passages(document, settings, rng)]
        wanted = (settings.train_passages_per_author if split == "train"
                  else settings.eval_passages_per_author)
        if not passages:
            raise InputError(f"author {name}: no {split} passage of {settings.passage_min_words} "
                             f"to {settings.passage_max_words} words")
        chosen[split] = rng.sample(passages, min(wanted, len(passages)))
    return chosen


def make(documents: list[Document], settings: Settings, output_dir: str) -> dict[str, int]:
    """Writes corpus.txt, authorship/ and authorship_passages/ (see the module docstring);
    returns their row counts."""
    rng = random.Random(settings.seed)
    passage_rng = random.Random(f"{settings.seed} passages")
    by_author = collections.defaultdict(list)
    for document in documents:
        by_author[document.author].append(document)
    corpus = []
    rows = {"train": [], "dev": [], "test": []}
    passage_rows = {"train": [], "dev": [], "test": []}
    for author in settings.authors:
        if author not in by_author:
            raise InputError(f"author {author}: no document; found {', '.join(sorted(by_author))}")
        split = split_author(by_author[author], settings, rng)
        corpus.extend(split.corpus)
        for name, sentences in split.sentences.items():
            rows[name].extend((sentence, author) for sentence in sentences)
        for name, passages in author_passages(split, author, settings, passage_rng).items():
            passage_rows[name].extend((passage, author) for passage in passages)
    rng.shuffle(corpus)
    with open_atomically(os.path.join(output_dir, "corpus.txt")) as f:
        f.write("\n\n".join("\n".join(document.sentences) for document in corpus) + "\n")
    for folder, folder_rows, shuffle in (("authorship", rows, rng.shuffle),
                                         ("authorship_passages", passage_rows,
                                          passage_rng.shuffle)):
        task_dir = os.path.join(output_dir, folder)
        with open_atomically(os.path.join(task_dir, "labels.txt")) as f:
            f.write("".join(author + "\n" for author in settings.authors))
        for split, split_rows in folder_rows.items():
            shuffle(split_rows)
            with open_atomically(os.path.join(task_dir, f"{split}.tsv")) as f:
                f.write("sentence\tlabel\n")
                f.writelines(f"{text}\t{author}\n" for text, author in split_rows)
    return {"corpus documents": len(corpus), **{split: len(r) for split, r in rows.items()},
            **{f"{split} passages": len(r) for split, r in passage_rows.items()}}


def prepare() -> Settings:
    return Settings(tuple(FLAGS.authors), FLAGS.corpus_bytes_per_author, FLAGS.train_per_author,
                    FLAGS.eval_per_author, FLAGS.min_words, FLAGS.max_words, FLAGS.seed,
                    FLAGS.train_passages_per_author, FLAGS.eval_passages_per_author,
                    FLAGS.passage_min_words, FLAGS.passage_max_words)


def job(settings: Settings) -> None:
    counts = make(read_documents(FLAGS.sentences_file, read_books(FLAGS.books_dir)), settings,
                  FLAGS.output_dir)
    print("gutenberg_demo_data: " + ", ".join(f"{n} {what}" for what, n in counts.items()))


if __name__ == "__main__":
    command_line.main("gutenberg_demo_data", prepare, job,
                      required=["sentences_file", "books_dir", "output_dir"], tensorflow=False)
