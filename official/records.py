"""JSON records: the small settings files written beside checkpoints and data, read back with
every field checked.

A record is a frozen dataclass; its file is a JSON object of the dataclass's fields. Reading one
checks each field against the dataclass's type hints, so a hand-edited or foreign file fails with
one line naming the file and the field rather than misbehaving later: `"normalize": "false"` is a
string where a bool is wanted, not a true value.

    to_json(record)                 the file's text: fields sorted, None fields left out
    write(path, record)             that text, written atomically
    from_dict(cls, values, source)  a record of `cls` from decoded JSON, every field checked
    read(path, cls)                 the record in `path`, None when there is no such file

Example:
    >>> import dataclasses
    >>> @dataclasses.dataclass(frozen=True)
    ... class Pooling:
    ...     pooling: str
    ...     normalize: bool | None = None
    >>> to_json(Pooling("mean"))
    '{\\n  "pooling": "mean"\\n}\\n'
    >>> from_dict(Pooling, {"pooling": "mean", "normalize": "false"}, "pooling.json")
    Traceback (most recent call last):
    ...
    ValueError: pooling.json: field normalize must be a bool or null, got 'false'
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import types
import typing
from typing import Any, TypeVar

from official.atomic_files import open_atomically

R = TypeVar("R")


def to_json(record: Any) -> str:
    """The record's file text: its fields that are not None, keys sorted, two-space indent."""
    values = {k: v for k, v in dataclasses.asdict(record).items() if v is not None}
    return json.dumps(values, indent=2, sort_keys=True) + "\n"


def write(path: str, record: Any) -> None:
    """Writes `to_json(record)` to `path` atomically (official/atomic_files.py)."""
    with open_atomically(path) as f:
        f.write(to_json(record))


def read_json(path: str) -> Any:
    """The decoded JSON in `path`.

    Raises:
      ValueError: not JSON, or not UTF-8 (one line naming the file and the line).
    """
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: line {e.lineno}: invalid JSON ({e.msg})") from None
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not a UTF-8 text file") from None


def read(path: str, cls: type[R]) -> R | None:
    """The record of dataclass `cls` in `path`; None when there is no such file.

    Raises:
      ValueError: not JSON, not an object, a field unknown to `cls`, a required one missing, or
        one of the wrong type (one line naming the file and the field).
    """
    if not os.path.isfile(path):
        return None
    return from_dict(cls, read_json(path), path)


def from_dict(cls: type[R], values: Any, source: str) -> R:
    """`cls(**values)` once every field is checked against `cls`'s type hints; `source` (a
    file, or a file and a key) is named in errors. The dataclass's own `__post_init__` checks
    (ranges, choices) then run as usual; their ValueErrors are prefixed with `source`.

    Raises:
      ValueError: see `read`.
    """
    if not isinstance(values, dict):
        raise ValueError(f"{source}: expected a JSON object, got {type(values).__name__}")
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
    unknown = sorted(set(values) - set(fields))
    if unknown:
        raise ValueError(f"{source}: unknown field {unknown[0]} (the fields are "
                         f"{', '.join(fields)})")
    missing = [name for name, f in fields.items() if name not in values
               and f.default is dataclasses.MISSING
               and f.default_factory is dataclasses.MISSING]
    if missing:
        raise ValueError(f"{source}: field {missing[0]} is missing")
    checked = {}
    for name, value in values.items():
        ok, converted = _conform(value, hints[name])
        if not ok:
            raise ValueError(f"{source}: field {name} must be {_describe(hints[name])}, got "
                             f"{value!r}")
        checked[name] = converted
    try:
        return cls(**checked)
    except ValueError as e:
        raise ValueError(f"{source}: {e}") from None


def _conform(value: Any, hint: Any) -> tuple[bool, Any]:
    """(whether `value`, decoded from JSON, is of type `hint`, the value as the field holds it:
    a list as a tuple for a tuple field, an integer as a float for a float field)."""
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        for option in typing.get_args(hint):
            ok, converted = _conform(value, option)
            if ok:
                return True, converted
        return False, value
    if hint is type(None):
        return value is None, value
    if hint is Any:
        return True, value
    if hint is bool:
        return isinstance(value, bool), value
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool), value
    if hint is float:
        ok = (isinstance(value, (int, float)) and not isinstance(value, bool)
              and math.isfinite(value))
        return ok, float(value) if ok else value
    if hint is str:
        return isinstance(value, str), value
    if origin in (tuple, list):
        if not isinstance(value, list):
            return False, value
        args = typing.get_args(hint)
        item = args[0] if args else Any
        parts = [_conform(v, item) for v in value]
        if not all(ok for ok, _ in parts):
            return False, value
        items = [v for _, v in parts]
        return True, tuple(items) if origin is tuple else items
    if origin is dict or hint is dict:
        return isinstance(value, dict), value
    raise TypeError(f"records cannot check a field of type {hint!r}")


def _describe(hint: Any) -> str:
    """"a bool or null", "a list of int", ...: the type a field wants, in JSON's words."""
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_describe(option) for option in typing.get_args(hint))
    if hint is type(None):
        return "null"
    if origin in (tuple, list):
        args = typing.get_args(hint)
        return f"a list of {_describe(args[0]).removeprefix('a ').removeprefix('an ')}"
    names = {bool: "a bool", int: "an integer", float: "a number", str: "a string",
             dict: "an object"}
    return names.get(hint, names.get(origin, str(hint)))
