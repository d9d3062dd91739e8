"""Tests for data_prep/newsgroups.py on posts written here, and of the sample it made in
data/20newsgroups: its counts and long posts, its README's figures, task 20ng reading it, and
its records as run_classifier makes them."""

import collections
import dataclasses
import gzip
import hashlib
import json
import os

import pytest

from data_prep import glue, newsgroups
from data_prep.input_errors import InputError
from tests.test_glue import post

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHIPPED = os.path.join(REPO, "data", "20newsgroups")
VOCAB = os.path.join(REPO, "data", "vocab", "uncased_vocab.txt")
SETTINGS = newsgroups.Settings()


def text_of(words, label="sci.space"):
    """A post of exactly `words` whitespace words, headers included."""
    body = " ".join(["word"] * (words - 4))
    return f"From: a@b.edu\nSubject: {label}\n\n{body}"


def write_input(root, posts):
    """A task 20ng data_dir: labels.txt and {split: [(label, words, id)]} as .jsonl.gz files."""
    root.mkdir(parents=True)
    (root / "labels.txt").write_text("sci.space\nrec.autos\n")
    for split, rows in posts.items():
        lines = "".join(post(label, text_of(n, label), id_) for label, n, id_ in rows)
        (root / f"{split}.jsonl.gz").write_bytes(gzip.compress(lines.encode(), mtime=0))
    return str(root)


def read_lines(path):
    with gzip.open(path, "rb") as f:
        return f.read().splitlines(keepends=True)


SMALL = newsgroups.Settings(train_per_label=3, test_per_label=2, long_train_per_label=1,
                            long_test_per_label=1, long_words=10, max_words=20, seed=7)


def test_the_sample_is_every_post_the_rule_allows_when_there_is_no_choice(tmp_path):
    """Each label has exactly the posts wanted (1 long + 2 short train, 1 + 1 test) beside a post
    over max_words and a uuencoded one: the sample is those posts, in the input's order, and
    each line is the input's line, byte for byte."""
    uuencoded = ("begin 644 a.zip\n" + ("M" + "A" * 60 + "\n") * 11 + "end\n")  # 15 words
    assert newsgroups.is_uuencoded(uuencoded)
    posts = {"train": [("sci.space", 12, "s/1"), ("sci.space", 30, "s/2"),
                       ("sci.space", 5, "s/3"), ("sci.space", 9, "s/4"),
                       ("rec.autos", 6, "a/1"), ("rec.autos", 20, "a/2"),
                       ("rec.autos", 7, "a/3")],
             "test": [("rec.autos", 10, "a/9"), ("rec.autos", 8, "a/8"),
                      ("sci.space", 11, "s/9"), ("sci.space", 4, "s/8")]}
    input_dir = write_input(tmp_path / "in", posts)
    train = tmp_path / "in" / "train.jsonl.gz"
    lines = read_lines(train) + [post("rec.autos", uuencoded, "a/uu").encode()]
    train.write_bytes(gzip.compress(b"".join(lines)))
    out = tmp_path / "out"
    counts = newsgroups.make_sample(input_dir, str(out), SMALL)
    assert counts == {"train": {"posts": 6, "long": 2}, "test": {"posts": 4, "long": 2}}
    expected = {"train": ["s/1", "s/3", "s/4", "a/1", "a/2", "a/3"],
                "test": ["a/9", "a/8", "s/9", "s/8"]}
    for split, ids in expected.items():
        sample = read_lines(out / f"{split}.jsonl.gz")
        assert [json.loads(line)["id"] for line in sample] == ids
        assert set(sample) <= set(read_lines(tmp_path / "in" / f"{split}.jsonl.gz"))
    assert (out / "labels.txt").read_bytes() == (tmp_path / "in" / "labels.txt").read_bytes()


def test_the_sample_is_seeded_and_the_same_bytes_twice(tmp_path):
    posts = {split: [(label, n, f"{split}/{label}/{i}")
                     for label in ("sci.space", "rec.autos")
                     for i, n in enumerate([5, 15, 6, 16, 7, 17, 8, 18, 9, 19])]
             for split in ("train", "test")}
    input_dir = write_input(tmp_path / "in", posts)
    made = {}
    for name, seed in (("a", 7), ("again", 7), ("other", 8)):
        newsgroups.make_sample(input_dir, str(tmp_path / name),
                               dataclasses.replace(SMALL, seed=seed))
        made[name] = {split: (tmp_path / name / f"{split}.jsonl.gz").read_bytes()
                      for split in ("train", "test")}
    assert made["a"] == made["again"]
    assert made["a"] != made["other"]
    for split, per_label in (("train", 3), ("test", 2)):
        records = [json.loads(line) for line in read_lines(tmp_path / "a" / f"{split}.jsonl.gz")]
        assert collections.Counter(r["label"] for r in records) == {"sci.space": per_label,
                                                                    "rec.autos": per_label}
        assert sum(len(r["text"].split()) >= 10 for r in records) == 2  # one long per label
        order = [r["id"] for r in records]
        assert order == [r[2] for r in posts[split] if r[2] in order]  # the input's order


def test_too_few_posts_of_a_kind_and_a_bad_output_dir_are_errors(tmp_path):
    input_dir = write_input(tmp_path / "in", {
        "train": [("sci.space", 12, "s/1"), ("sci.space", 5, "s/2"), ("sci.space", 5, "s/3"),
                  ("rec.autos", 5, "a/1"), ("rec.autos", 5, "a/2"), ("rec.autos", 5, "a/3")],
        "test": []})
    with pytest.raises(InputError, match=r"train.jsonl.gz: label rec.autos: 0 posts of 10 to 20 "
                                         r"words \(uuencoded ones aside\), 1 wanted$"):
        newsgroups.make_sample(input_dir, str(tmp_path / "out"), SMALL)
    with pytest.raises(InputError, match="the output_dir is the input_dir"):
        newsgroups.make_sample(input_dir, input_dir, SMALL)
    with pytest.raises(ValueError, match="train: 4 long posts of 3 per label"):
        newsgroups.make_sample(input_dir, str(tmp_path / "out"),
                               newsgroups.Settings(train_per_label=3, long_train_per_label=4))


def test_task_20ng_reads_the_shipped_sample():
    processor = glue.get_processor("20ng", SHIPPED)
    labels = processor.get_labels()
    assert len(labels) == 20 and labels[0] == "alt.atheism" and labels[-1] == "talk.religion.misc"
    assert labels == sorted(labels)
    for split, per_label, long_per_label in (("train", 10, 4), ("dev", 5, 2), ("test", 5, 2)):
        examples = processor.get_examples(SHIPPED, split)
        assert collections.Counter(e.label for e in examples) == {label: per_label
                                                                  for label in labels}
        long = collections.Counter(e.label for e in examples
                                   if 600 <= len(e.text_a.split()) <= 2000)
        assert long == {label: long_per_label for label in labels}
        assert max(len(e.text_a.split()) for e in examples) <= 2000
        assert all(e.guid.startswith(f"{'train' if split == 'train' else 'test'}/{e.label}/")
                   for e in examples)
        assert not any(newsgroups.is_uuencoded(e.text_a) for e in examples)
    first = processor.get_train_examples(SHIPPED)[0]
    assert first.guid == "train/alt.atheism/51135"
    assert first.text_a.startswith("Subject: Re: Ancient islamic rituals\n"
                                   "From: bobbe@vice.ICO.TEK.COM (Robert Beauchaine)\n")


def test_the_shipped_sample_is_what_the_maker_makes_of_it(tmp_path):
    """Every shipped post passes the rule and each label has exactly the posts wanted, so the
    maker run on the sample itself with the shipped settings gives it back unchanged."""
    newsgroups.make_sample(SHIPPED, str(tmp_path), SETTINGS)
    for name in ("train.jsonl.gz", "test.jsonl.gz"):
        assert read_lines(tmp_path / name) == read_lines(os.path.join(SHIPPED, name))


def test_the_readme_states_the_shipped_counts_sizes_and_hashes():
    with open(os.path.join(SHIPPED, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    rows = [[cell.strip().strip("`").replace(",", "") for cell in line.strip("|").split("|")]
            for line in readme.splitlines() if line.startswith("| `")]
    assert [row[0] for row in rows] == ["labels.txt", "train.jsonl.gz", "test.jsonl.gz"]
    processor = glue.get_processor("20ng", SHIPPED)
    for name, posts, per_label, long, size, sha256 in rows:
        path = os.path.join(SHIPPED, name)
        assert int(size) == os.path.getsize(path)
        with open(path, "rb") as f:
            assert sha256 == hashlib.sha256(f.read()).hexdigest()
        if name == "labels.txt":
            continue
        examples = processor.get_examples(SHIPPED, name.split(".")[0])
        assert int(posts) == len(examples) == 20 * int(per_label)
        assert int(long) == sum(len(e.text_a.split()) >= 600 for e in examples)


def test_the_sample_as_run_classifier_records_it(tmp_path):
    """What run_classifier's data makes of --task_name=20ng: records of every dev post, cached
    under a key that hashes the .jsonl.gz file path() names."""
    from data_prep import classifier_features as cf
    from official.text.tokenizer import FullTokenizer

    processor = glue.get_processor("20ng", SHIPPED)
    tokenizer = FullTokenizer(VOCAB, do_lower_case=True)
    made = cf.cached_tfrecord(processor, SHIPPED, "dev", 32, tokenizer, str(tmp_path))
    assert (made.facts["num_examples"], made.reused) == (100, False)
    assert made.path == os.path.join(tmp_path, "20ng-dev.tf_record")
    with open(made.path + ".json", encoding="utf-8") as f:
        key = json.load(f)["key"]
    with open(os.path.join(SHIPPED, "test.jsonl.gz"), "rb") as f:
        assert key["data_sha256"] == hashlib.sha256(f.read()).hexdigest()
    assert key["task"] == "20ng" and key["labels"] == processor.get_labels()
