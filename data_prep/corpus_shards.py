"""Splits text corpora into shards of whole documents by byte range, and streams their documents.

Input format (the original's): one sentence per line, blank lines between documents. A shard is a
set of byte ranges; it owns every document whose separating blank line starts inside one of its
ranges (and the first document of each file owns by range start 0). So shards are found without
reading the corpus first, each document belongs to exactly one shard, and the split depends only
on the corpus and the shard count, never on how many workers read it. Every file ends its last
document (unlike the original, whose last document of one file runs on into the next file).
"""

from __future__ import annotations

import dataclasses
import glob as glob_lib
import os
from typing import Callable, Iterator

from data_prep.input_errors import InputError


@dataclasses.dataclass(frozen=True)
class ByteRange:
    """Bytes [start, end) of one file."""
    path: str
    start: int
    end: int


@dataclasses.dataclass
class ReadStats:
    """What reading a shard met: documents, and bytes that were not UTF-8, per file."""
    documents: int = 0
    invalid_utf8: dict[str, int] = dataclasses.field(default_factory=dict)


def _sorted_glob(pattern: str) -> list[str]:
    return sorted(glob_lib.glob(pattern))


def expand_input_files(input_file: str,
                       glob: Callable[[str], list[str]] = _sorted_glob) -> list[str]:
    """The original's --input_file: a comma list of globs, each expanded by `glob` (by default
    in sorted order, so the file order depends on the names alone).

    Raises InputError naming the first pattern that matches nothing, so a typo is not read as
    "no data", or a folder it matches (which would fail only once reading starts).
    """
    files = []
    for pattern in filter(None, (p.strip() for p in input_file.split(","))):
        matches = glob(pattern)
        if not matches:
            raise InputError(f"{pattern}: no file matches")
        for match in matches:
            if os.path.isdir(match):
                raise InputError(f"{match}: is a directory, not a text file")
        files.extend(matches)
    if not files:
        raise InputError("input_file: no file given")
    return files


def check_has_text(files: list[str], block_bytes: int = 1 << 16) -> None:
    """Raises InputError unless some file has a byte other than whitespace.

    Cheap (it stops at the first such byte), so a generator can refuse an empty corpus before it
    touches its output folder; text that tokenises to nothing is found only while generating.
    """
    for path in files:
        with open(path, "rb") as f:
            while block := f.read(block_bytes):
                if block.strip():
                    return
    raise InputError(f"{', '.join(files)}: no document with any text")


def plan_shards(files: list[str], num_shards: int) -> list[list[ByteRange]]:
    """Cuts the concatenated files into `num_shards` spans of about equal bytes.

    A span crossing a file boundary becomes one range per file. Shards of a tiny corpus may own no
    document at all; their output is then an empty (valid) TFRecord file.
    """
    sizes = [os.path.getsize(path) for path in files]
    total = sum(sizes)
    cuts = [total * i // num_shards for i in range(num_shards + 1)]
    shards: list[list[ByteRange]] = [[] for _ in range(num_shards)]
    offset = 0
    for path, size in zip(files, sizes):
        for shard in range(num_shards):
            start, end = max(cuts[shard], offset), min(cuts[shard + 1], offset + size)
            if start < end or (size == 0 and cuts[shard] <= offset < cuts[shard + 1]):
                shards[shard].append(ByteRange(path, start - offset, end - offset))
        offset += size
    return shards


def iter_documents(ranges: list[ByteRange], stats: ReadStats) -> Iterator[list[str]]:
    """Yields the documents the ranges own, each a list of non-blank, stripped lines."""
    for byte_range in ranges:
        yield from _documents_in(byte_range, stats)


def _documents_in(byte_range: ByteRange, stats: ReadStats) -> Iterator[list[str]]:
    with open(byte_range.path, "rb") as f:
        if byte_range.start == 0:
            position, reading = 0, True
        else:
            # Step back one byte so that a range starting exactly at a line start keeps that line.
            f.seek(byte_range.start - 1)
            position = byte_range.start - 1 + len(f.readline())
            reading = False  # Inside someone else's document until a blank line.
        document: list[str] = []
        for raw in f:
            line_start, position = position, position + len(raw)
            text = _decode(raw, byte_range.path, stats).strip()
            if text:
                if reading:
                    document.append(text)
                continue
            # A blank line: it ends the current document, and the next one belongs to whoever owns
            # this line's start.
            if document:
                stats.documents += 1
                yield document
                document = []
            if line_start >= byte_range.end:
                break
            reading = True
        if document:
            stats.documents += 1
            yield document


def _decode(raw: bytes, path: str, stats: ReadStats) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        # Undecodable bytes become U+FFFD, which the tokenizer drops as the original does;
        # they are counted so the user learns which files are not UTF-8.
        valid = len(raw.decode("utf-8", errors="ignore").encode("utf-8"))
        stats.invalid_utf8[path] = stats.invalid_utf8.get(path, 0) + len(raw) - valid
        return raw.decode("utf-8", errors="replace")
