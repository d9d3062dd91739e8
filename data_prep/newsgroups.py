r"""How `data/20newsgroups/` was made: a small sample of 20 Newsgroups, long posts included.

    python -m data_prep.newsgroups --input_dir=../shared/data/20newsgroups \
      --output_dir=data/20newsgroups

Input: a task "20ng" data_dir (data_prep/glue.py's `newsgroups_processor`): labels.txt and
train.jsonl.gz and test.jsonl.gz (or uncompressed .jsonl), every line checked by that reader.

Output, the same bytes for the same input and flags:
  labels.txt        the input's labels (the same lines);
  train.jsonl.gz    for each label, --train_per_label posts of the input's train file, of which
                    --long_train_per_label have --long_words to --max_words words;
  test.jsonl.gz     the same of the test file, --test_per_label and --long_test_per_label.
Words are whitespace words of the whole post, headers included (`len(text.split())`). The other
posts of a label are shorter than --long_words. Never taken: posts over --max_words (FAQs, a
few over 10,000 words), to keep the sample small, and posts holding uuencoded files (more than
10 lines of uuencode's full line, "M" and 60 characters: 27 posts of the 18,846), whose few
hundred "words" are tens of thousands of WordPiece tokens, so that a test windowing every post
stays quick. The long posts are what a test of documents longer than max_seq_length needs:
600 words of a post are about 1,000 WordPiece tokens.

Selection: for each split, for each label in labels.txt's order, a sample of its long posts and
then one of its short ones, drawn by one `random.Random(--seed)` in that order. The posts chosen
keep the input's order (by label, then by post number), and each is written as the full files
were (`json.dumps(record, ensure_ascii=False)`, keys label, text, id), so every line of the
sample is a line of the full file, byte for byte. The gzip header holds no time and no file
name, so equal content gives equal files.
"""

from __future__ import annotations

import dataclasses
import gzip
import json
import os
import random
import re
import shutil

from absl import flags

from data_prep import glue
from data_prep.input_errors import InputError
from official import command_line
from official.atomic_files import atomic_path, open_atomically

SPLITS = ("train", "test")


@dataclasses.dataclass(frozen=True)
class Settings:
    """The flags of one run (see the module docstring and the flags' help)."""
    train_per_label: int = 10
    test_per_label: int = 5
    long_train_per_label: int = 4
    long_test_per_label: int = 2
    long_words: int = 600
    max_words: int = 2000
    seed: int = 20

    def per_label(self, split: str) -> tuple[int, int]:
        """(posts, long posts) of each label in `split`."""
        if split == "train":
            return self.train_per_label, self.long_train_per_label
        return self.test_per_label, self.long_test_per_label

    def validate(self) -> None:
        for split in SPLITS:
            posts, long_posts = self.per_label(split)
            if not 0 <= long_posts <= posts or posts < 1:
                raise ValueError(f"{split}: {long_posts} long posts of {posts} per label; "
                                 "need 0 <= long <= posts and posts >= 1")
        if not 0 < self.long_words <= self.max_words:
            raise ValueError(f"long_words {self.long_words} and max_words {self.max_words}: "
                             "need 0 < long_words <= max_words")


FLAGS = flags.FLAGS


def define_flags() -> None:
    """The entry point's flags; defined when it runs, not on import, so that a process that
    imports this module and another data maker (the tests) meets no flag twice."""
    flags.DEFINE_string("input_dir", None, "The full data set: labels.txt, train.jsonl.gz and "
                        "test.jsonl.gz (task 20ng's data_dir).")
    flags.DEFINE_string("output_dir", None, "Where the sample's labels.txt, train.jsonl.gz and "
                        "test.jsonl.gz are written.")
    defaults = Settings()
    flags.DEFINE_integer("train_per_label", defaults.train_per_label, "Train posts per label.")
    flags.DEFINE_integer("test_per_label", defaults.test_per_label, "Test posts per label.")
    flags.DEFINE_integer("long_train_per_label", defaults.long_train_per_label,
                         "Of a label's train posts, how many have --long_words to --max_words "
                         "words.")
    flags.DEFINE_integer("long_test_per_label", defaults.long_test_per_label,
                         "Of a label's test posts, how many have --long_words to --max_words "
                         "words.")
    flags.DEFINE_integer("long_words", defaults.long_words, "The fewest words of a long post.")
    flags.DEFINE_integer("max_words", defaults.max_words, "The most words of any post taken.")
    flags.DEFINE_integer("seed", defaults.seed, "Seed of the sample.")
    flags.mark_flags_as_required(["input_dir", "output_dir"])


# A full line of uuencoded data: "M" (45 bytes) and their 60 characters.
_UUENCODED_LINE = re.compile(r"^M.{60}$", re.MULTILINE)


def words(text: str) -> int:
    """Whitespace words, headers included: the measure of the sample's rule."""
    return len(text.split())


def is_uuencoded(text: str) -> bool:
    """Whether a post holds a uuencoded file (more than 10 full uuencoded lines)."""
    return len(_UUENCODED_LINE.findall(text)) > 10


def choose(examples: list[glue.InputExample], labels: tuple[str, ...], posts: int,
           long_posts: int, settings: Settings, rng: random.Random, source: str
           ) -> list[glue.InputExample]:
    """One split's sample: for each label, `long_posts` of its posts with long_words to
    max_words words and `posts - long_posts` with fewer than long_words, in the input's order;
    never a uuencoded file."""
    chosen = set()
    for label in labels:
        lengths = [(i, words(e.text_a)) for i, e in enumerate(examples)
                   if e.label == label and not is_uuencoded(e.text_a)]
        long = [i for i, n in lengths if settings.long_words <= n <= settings.max_words]
        short = [i for i, n in lengths if n < settings.long_words]
        for kind, pool, wanted in (("long", long, long_posts),
                                   ("short", short, posts - long_posts)):
            if len(pool) < wanted:
                span = (f"{settings.long_words} to {settings.max_words}" if kind == "long"
                        else f"fewer than {settings.long_words}")
                raise InputError(f"{source}: label {label}: {len(pool)} posts of {span} "
                                 f"words (uuencoded ones aside), {wanted} wanted")
            chosen.update(rng.sample(pool, wanted))
    return [examples[i] for i in sorted(chosen)]


def write_jsonl_gz(examples: list[glue.InputExample], path: str) -> None:
    """JSON lines as the full files have them, gzip without time or name in the header."""
    with open_atomically(path, "wb") as f:
        with gzip.GzipFile(filename="", mode="wb", fileobj=f, mtime=0) as gz:
            for e in examples:
                record = {"label": e.label, "text": e.text_a, "id": e.guid}
                gz.write((json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8"))


def make_sample(input_dir: str, output_dir: str, settings: Settings = Settings()
                ) -> dict[str, dict[str, int]]:
    """Writes the sample (see the module docstring); returns {split: {"posts", "long"}}."""
    settings.validate()
    if os.path.realpath(input_dir) == os.path.realpath(output_dir):
        raise InputError(f"{output_dir}: the output_dir is the input_dir; the sample would "
                         "replace the full files")
    processor = glue.newsgroups_processor(input_dir)
    labels = processor.labels
    rng = random.Random(settings.seed)
    samples = {}
    for split in SPLITS:
        examples = processor.get_examples(input_dir, split)
        samples[split] = choose(examples, labels, *settings.per_label(split), settings, rng,
                                processor.path(input_dir, split))
    with atomic_path(os.path.join(output_dir, glue.LABELS_FILE)) as tmp:
        shutil.copyfile(os.path.join(input_dir, glue.LABELS_FILE), tmp)
    for split, examples in samples.items():
        write_jsonl_gz(examples, os.path.join(output_dir, f"{split}.jsonl.gz"))
    return {split: {"posts": len(examples),
                    "long": sum(words(e.text_a) >= settings.long_words for e in examples)}
            for split, examples in samples.items()}


def prepare() -> Settings:
    return Settings(FLAGS.train_per_label, FLAGS.test_per_label, FLAGS.long_train_per_label,
                    FLAGS.long_test_per_label, FLAGS.long_words, FLAGS.max_words, FLAGS.seed)


def job(settings: Settings) -> None:
    counts = make_sample(FLAGS.input_dir, FLAGS.output_dir, settings)
    print("newsgroups: " + ", ".join(f"{split} {c['posts']} posts ({c['long']} long)"
                                     for split, c in counts.items()))


if __name__ == "__main__":
    define_flags()
    command_line.main("newsgroups", prepare, job, tensorflow=False)
