"""JSON-lines task files: one JSON object a line, UTF-8, gzip-compressed if the name ends in
".gz" (20 Newsgroups' posts, SciBERT's classification files, a domain's text for the vocab
tools). A file without that layout raises TsvError, "path:line: what is wrong"."""

from __future__ import annotations

import json
from typing import Iterator

from data_prep.input_errors import TsvError, utf8_lines


def read_json_lines(path: str) -> Iterator[tuple[int, dict]]:
    """(1-based line number, object) of each non-blank line of a JSON-lines file, UTF-8,
    gzip-compressed if its name ends in ".gz".

    Lines as `utf8_lines` reads them (JSON escapes every newline inside a string).
    """
    for number, line in utf8_lines(path, TsvError):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as e:
            raise TsvError(f"{path}:{number}: not JSON: {e.msg} (column {e.colno})") from None
        if not isinstance(record, dict):
            raise TsvError(f"{path}:{number}: a JSON {_json_type(record)}, expected an object")
        yield number, record


def json_string(record: dict, key: str, where: str) -> str:
    """record[key], which must be a string."""
    if key not in record:
        raise TsvError(f"{where}: no key {key!r} (keys: {', '.join(record) or 'none'})")
    value = record[key]
    if not isinstance(value, str):
        raise TsvError(f"{where}: {key!r} is a JSON {_json_type(value)}, expected a string")
    return value


def _json_type(value: object) -> str:
    """JSON's name of a decoded value's type ("array", not Python's "list")."""
    for python_type, name in ((bool, "boolean"), (int, "number"), (float, "number"),
                              (str, "string"), (list, "array"), (dict, "object")):
        if isinstance(value, python_type):
            return name
    return "null"
