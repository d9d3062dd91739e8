"""A measure over seeds: its mean and sample standard deviation, and how the report writes them.

The standard deviation is the sample one (ddof=1, numpy's `np.std(values, ddof=1)`): the seeds
are a sample of the runs one could make, and a spread is asked of the next seed, not of these.
With one seed there is no spread to estimate: `std` is None and the report writes "n/a".

Example:
    >>> s = summarize([71.0, 73.0, 72.0])
    >>> s.mean, s.std, s.n
    (72.0, 1.0, 3)
    >>> format_summary(s, 1), format_summary(summarize([5.0]), 2)
    ('72.0 ± 1.0', '5.00 ± n/a')
"""

from __future__ import annotations

import dataclasses
import math
from typing import Sequence


@dataclasses.dataclass(frozen=True)
class Summary:
    """mean and sample standard deviation (None with one value) of `n` values."""
    mean: float
    std: float | None
    n: int


def summarize(values: Sequence[float]) -> Summary:
    """The mean and sample standard deviation of `values` (at least one).

    Raises:
      ValueError: no values.
    """
    if not values:
        raise ValueError("no values to summarize")
    n = len(values)
    mean = math.fsum(values) / n
    if n == 1:
        return Summary(mean, None, 1)
    return Summary(mean, math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (n - 1)), n)


def format_summary(summary: Summary, digits: int, plus_minus: str = "±") -> str:
    """"72.0 ± 1.0" (`digits` after the point); "72.0 ± n/a" with one seed."""
    spread = "n/a" if summary.std is None else f"{summary.std:.{digits}f}"
    return f"{summary.mean:.{digits}f} {plus_minus} {spread}"
