"""Byte-range shards own every document exactly once, whatever the shard count."""

import random

import pytest

from data_prep import corpus_shards
from data_prep.input_errors import InputError


def write_corpus(tmp_path, rnd, name):
    """A file of random documents with the irregularities real files have; returns its docs."""
    lines, docs = [], []
    for _ in range(rnd.randint(0, 6)):
        doc = [f"{name} s{rnd.randint(0, 999)}" + "x" * rnd.randint(0, 30)
               for _ in range(rnd.randint(1, 4))]
        docs.append(doc)
        lines += doc + [" " * rnd.randint(0, 2)] * rnd.randint(1, 3)  # blank or spaces only
    if rnd.random() < 0.5:
        lines = [""] * rnd.randint(1, 2) + lines
    if rnd.random() < 0.5:
        while lines and not lines[-1].strip():
            lines.pop()
    path = tmp_path / f"{name}.txt"
    path.write_text("\n".join(lines) + ("\n" if rnd.random() < 0.5 else ""))
    return str(path), docs


def test_every_document_read_once_in_order(tmp_path):
    rnd = random.Random(0)
    for trial in range(150):
        files, expected = [], []
        for index in range(rnd.randint(1, 3)):
            path, docs = write_corpus(tmp_path, rnd, f"t{trial}f{index}")
            files.append(path)
            expected += docs
        for num_shards in (1, 2, 3, 7, 50):
            documents = []
            for ranges in corpus_shards.plan_shards(files, num_shards):
                documents += corpus_shards.iter_documents(ranges, corpus_shards.ReadStats())
            assert documents == expected, (trial, num_shards)


def test_invalid_utf8_is_replaced_and_counted(tmp_path):
    path = tmp_path / "latin1.txt"
    path.write_bytes("caf\xe9 au lait\n\nna\xefve\n".encode("latin-1"))
    stats = corpus_shards.ReadStats()
    documents = list(corpus_shards.iter_documents(
        corpus_shards.plan_shards([str(path)], 1)[0], stats))
    assert documents == [["caf\ufffd au lait"], ["na\ufffdve"]]
    assert stats.invalid_utf8 == {str(path): 2}
    assert stats.documents == 2


def test_globs_expand_sorted_and_a_typo_is_an_error(tmp_path):
    for name in ("b.txt", "a.txt", "c.md"):
        (tmp_path / name).write_text("x\n")
    pattern = f"{tmp_path}/*.txt, {tmp_path}/c.md"
    assert corpus_shards.expand_input_files(pattern) == [
        str(tmp_path / "a.txt"), str(tmp_path / "b.txt"), str(tmp_path / "c.md")]
    with pytest.raises(InputError, match=r"nothing\*.txt: no file matches"):
        corpus_shards.expand_input_files(f"{tmp_path}/a.txt,{tmp_path}/nothing*.txt")
