"""The paired two-sample t-test, in numpy and the standard library (scipy is a test-only
dependency here): what the Equity Evaluation Corpus's paper applies to a system's scores of
sentence pairs (Kiritchenko & Mohammad 2018, two-sided, alpha 0.05).

    paired_t_test(first, second) -> PairedTTest
        d = first - second per pair; t = mean(d) / (sd(d) / sqrt(n)) with the sample standard
        deviation (ddof=1), n - 1 degrees of freedom, the two-sided p-value
    two_sided_p_value(t, df)     P(|T| >= |t|) for Student's t with df degrees of freedom
    regularized_beta(a, b, x)    I_x(a, b), the regularised incomplete beta function

Student's t tail as a beta function: for T with df degrees of freedom,
P(|T| >= |t|) = I_{df / (df + t^2)}(df / 2, 1 / 2). I_x(a, b) is computed by its continued
fraction (the standard one for the incomplete beta, evaluated by the modified Lentz method), on
x < (a + 1) / (a + b + 2) where it converges fast, and through I_x(a, b) = 1 - I_{1-x}(b, a)
on the other side.

Degenerate pairs, decided rather than left to a division by zero: fewer than two pairs have no
test (t and p None); every difference equal has no spread: p = 1 when they are all zero (no
difference at all), p = 0 and t = +-inf otherwise (a difference with no noise).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

_TINY = 1e-300  # keeps the Lentz recurrence off an exact zero
_EPSILON = 1e-15  # the continued fraction stops when a step changes it by less
_MAX_TERMS = 10000


class PairedTTest(NamedTuple):
    """One paired test: pairs, mean of first - second, t, degrees of freedom, two-sided p."""
    pairs: int
    mean_difference: float | None
    t: float | None
    df: int | None
    p_value: float | None


def _beta_continued_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of I_x(a, b) without its prefactor, by the modified Lentz method:
    1 / (1 + d_1 / (1 + d_2 / (1 + ...))) with d_{2m+1} = -(a+m)(a+b+m) x / ((a+2m)(a+2m+1))
    and d_{2m} = m (b-m) x / ((a+2m-1)(a+2m))."""
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    fraction = d
    for m in range(1, _MAX_TERMS):
        for numerator in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                          -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > _TINY else _TINY)
            c = 1.0 + numerator / c
            c = c if abs(c) > _TINY else _TINY
            step = c * d
            fraction *= step
        if abs(step - 1.0) < _EPSILON:
            return fraction
    raise ArithmeticError(f"the incomplete beta's fraction did not converge (a={a}, b={b}, "
                          f"x={x})")


def regularized_beta(a: float, b: float, x: float) -> float:
    """I_x(a, b) for a, b > 0 and 0 <= x <= 1 (the module docstring)."""
    if not 0.0 <= x <= 1.0:
        raise ValueError(f"x must be in [0, 1], got {x}")
    if x in (0.0, 1.0):
        return x
    # x^a (1-x)^b / (a B(a, b)), the fraction's prefactor, through logarithms.
    log_front = (math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x)
                 + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _beta_continued_fraction(a, b, x) / a
    return 1.0 - math.exp(log_front) * _beta_continued_fraction(b, a, 1.0 - x) / b


def two_sided_p_value(t: float, df: int) -> float:
    """P(|T| >= |t|) for Student's t with `df` degrees of freedom."""
    if math.isinf(t):
        return 0.0
    return regularized_beta(df / 2.0, 0.5, df / (df + t * t))


def paired_t_test(first, second) -> PairedTTest:
    """The paired test of `first` against `second`, float [pairs] each (the module docstring).

    Example:
        >>> test = paired_t_test([0.9, 0.8, 0.7, 0.9], [0.8, 0.8, 0.5, 0.6])
        >>> test.pairs, round(test.mean_difference, 4), round(test.t, 4), test.df
        (4, 0.15, 2.3238, 3)
        >>> round(test.p_value, 4)
        0.1027
    """
    d = np.asarray(first, np.float64) - np.asarray(second, np.float64)
    if d.ndim != 1:
        raise ValueError(f"paired scores must be two vectors of one length, got shape {d.shape}")
    n = len(d)
    if n < 2:
        return PairedTTest(n, float(d.mean()) if n else None, None, None, None)
    mean, sd = float(d.mean()), float(d.std(ddof=1))
    if sd == 0.0:  # every difference the same: no spread to divide by
        if mean == 0.0:
            return PairedTTest(n, 0.0, 0.0, n - 1, 1.0)
        return PairedTTest(n, mean, math.copysign(math.inf, mean), n - 1, 0.0)
    t = mean / (sd / math.sqrt(n))
    return PairedTTest(n, mean, t, n - 1, two_sided_p_value(t, n - 1))
