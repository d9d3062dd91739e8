"""A domain's text for the vocabulary tools (vocab_report, extend_vocab): plain lines, or one
field of JSON lines (the SciBERT tasks' files, `{"text": ..., "label": ...}` a line).

    texts = read_texts(["chemprot/train.txt"], text_field="text")

Blank lines are skipped. A JSON line that is not an object, or lacks the field, is one InputError
"path:line: what is wrong" (data_prep/json_lines.py, which the classifier task reads the same
files with).
"""

from __future__ import annotations

from typing import Iterator

from data_prep.input_errors import InputError
from data_prep.json_lines import json_string, read_json_lines


def read_texts(files: list[str], text_field: str | None = None) -> Iterator[str]:
    """The texts of `files`, in order: each non-blank line (UTF-8; undecodable bytes dropped,
    as the original tokenizer's reader does), or with `text_field` each JSON line's field."""
    for path in files:
        if text_field:
            for number, record in read_json_lines(path):
                yield json_string(record, text_field, f"{path}:{number}")
            continue
        try:
            with open(path, "rb") as f:
                for line in f:
                    text = line.decode("utf-8", "ignore").strip()
                    if text:
                        yield text
        except FileNotFoundError:
            raise InputError(f"{path}: no such file") from None
