"""Settings given as text (a flag's value, a field of a file), parsed once with one-line errors.

    int_list("0,2,4", "--student_layers") -> (0, 2, 4)

Example:
    >>> int_list("-1, -2", "--layers")
    (-1, -2)
    >>> int_list("1,x", "--layers")
    Traceback (most recent call last):
    ...
    ValueError: --layers='1,x' is not a comma-separated list of integers
"""

from __future__ import annotations


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
