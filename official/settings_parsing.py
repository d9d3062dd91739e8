"""Settings given as text (a flag's value, a field of a file), parsed once with one-line errors.

    int_list("0,2,4", "--student_layers") -> (0, 2, 4)
    shares("0.8,0.1,0.1", "--masking_mix", 3) -> (0.8, 0.1, 0.1)
    named_values("de=de.conllu,es=es.conllu", "--eval_languages")
        -> {"de": "de.conllu", "es": "es.conllu"}

Example:
    >>> int_list("-1, -2", "--layers")
    (-1, -2)
    >>> int_list("1,x", "--layers")
    Traceback (most recent call last):
    ...
    ValueError: --layers='1,x' is not a comma-separated list of integers
    >>> shares("1,0,0", "--masking_mix", 3)
    (1.0, 0.0, 0.0)
    >>> shares("0.8,0.1,0.2", "--masking_mix", 3)
    Traceback (most recent call last):
    ...
    ValueError: --masking_mix=0.8,0.1,0.2: the shares must sum to 1, they sum to 1.1
    >>> named_values("de=a.conllu, es=b.conllu", "--eval_languages")
    {'de': 'a.conllu', 'es': 'b.conllu'}
    >>> named_values("de=a.conllu,de=b.conllu", "--eval_languages")
    Traceback (most recent call last):
    ...
    ValueError: --eval_languages: de is named twice
"""

from __future__ import annotations

import math
from typing import Sequence

# How far from 1 a sum of shares may be: room for thirds written out by hand ("0.3333333" three
# times sums to 0.9999999) and for floating-point sums, none for a real mistake.
SHARES_TOLERANCE = 1e-6


def int_list(text: str, name: str) -> tuple[int, ...]:
    """The integers of a comma-separated `text` (spaces around them allowed); `name` (the flag)
    is named in the error.

    Raises:
      ValueError: a part that is not an integer, or no part at all.
    """
    try:
        values = tuple(int(part) for part in text.split(","))
    except ValueError:
        raise ValueError(f"{name}={text!r} is not a comma-separated list of integers") from None
    return values


def shares(text: str, name: str, count: int) -> tuple[float, ...]:
    """`count` shares of a whole from a comma-separated `text` (spaces around them allowed):
    finite numbers, none negative, summing to 1 within SHARES_TOLERANCE (`check_shares`).

    Raises:
      ValueError: another number of parts, a part that is not a number, or shares that are not
        shares; the message names `name` (the flag) and the text.
    """
    parts = text.split(",")
    if len(parts) != count:
        raise ValueError(f"{name}={text}: {count} comma-separated numbers are needed, got "
                         f"{len(parts)}")
    try:
        values = tuple(float(part) for part in parts)
    except ValueError:
        raise ValueError(f"{name}={text}: not {count} comma-separated numbers") from None
    check_shares(values, f"{name}={text}")
    return values


def check_shares(values: Sequence[float], name: str) -> None:
    """Raises ValueError naming `name` unless `values` are finite numbers (not booleans), none
    negative, whose sum is within SHARES_TOLERANCE of 1."""
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
               for v in values):
        raise ValueError(f"{name}: the shares must be finite numbers, got "
                         f"{', '.join(map(str, values))}")
    negative = [v for v in values if v < 0]
    if negative:
        raise ValueError(f"{name}: the shares must not be negative, got {negative[0]:g}")
    total = math.fsum(values)
    if abs(total - 1.0) > SHARES_TOLERANCE:
        raise ValueError(f"{name}: the shares must sum to 1, they sum to {total:g}")


def named_values(text: str, name: str) -> dict[str, str]:
    """{name: value} of a comma-separated `text` of name=value parts, in their order (spaces
    around a part allowed); `name` (the flag) is named in the error.

    Raises:
      ValueError: a part without "=", an empty name or value, a name given twice.
    """
    found: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, equals, value = (piece.strip() for piece in part.partition("="))
        if not equals or not key or not value:
            raise ValueError(f"{name}: {part!r} is not NAME=VALUE")
        if key in found:
            raise ValueError(f"{name}: {key} is named twice")
        found[key] = value
    if not found:
        raise ValueError(f"{name}={text!r}: no NAME=VALUE given")
    return found
