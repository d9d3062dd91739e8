"""official/robustness/paired_t_test.py: the paired t-test against scipy.stats.ttest_rel, the
incomplete beta against scipy.special.betainc, a case worked by hand and the degenerate cases
decided in its docstring."""

import math

import numpy as np
import pytest
from scipy import special, stats

from official.robustness.paired_t_test import (
    PairedTTest,
    paired_t_test,
    regularized_beta,
    two_sided_p_value,
)


@pytest.mark.parametrize("n, shift", [(2, 0.3), (5, 0.0), (40, 0.05), (1440, 0.01)])
def test_the_test_is_scipys_ttest_rel(n, shift):
    rng = np.random.default_rng(n)
    first = rng.uniform(size=n)
    second = first - shift + rng.normal(0, 0.1, n)
    ours = paired_t_test(first, second)
    theirs = stats.ttest_rel(first, second)
    assert ours.pairs == n and ours.df == n - 1
    assert ours.mean_difference == pytest.approx(float(np.mean(first - second)), abs=1e-15)
    assert ours.t == pytest.approx(float(theirs.statistic), rel=1e-10)
    assert ours.p_value == pytest.approx(float(theirs.pvalue), rel=1e-9, abs=1e-300)


def test_a_case_worked_by_hand():
    # d = 0.1, 0.0, 0.2, 0.3: mean 0.15; sample variance (0.05^2 + 0.15^2 + 0.05^2 + 0.15^2) / 3
    # = 0.05 / 3; t = 0.15 / sqrt(0.05 / 3 / 4) = 0.15 / 0.0645497 = 2.3237900.
    test = paired_t_test([0.9, 0.8, 0.7, 0.9], [0.8, 0.8, 0.5, 0.6])
    assert test.t == pytest.approx(0.15 / math.sqrt(0.05 / 3 / 4), rel=1e-12)
    assert test.t == pytest.approx(2.3237900, abs=1e-7)
    # Student's t with 3 degrees of freedom has a closed-form CDF:
    # P(|T| >= t) = 1 - (2 / pi) (atan(t / sqrt 3) + sqrt(3) t / (3 + t^2)).
    t = test.t
    closed = 1 - (2 / math.pi) * (math.atan(t / math.sqrt(3)) + math.sqrt(3) * t / (3 + t * t))
    assert test.p_value == pytest.approx(closed, rel=1e-12)


def test_one_degree_of_freedom_is_the_cauchy_tail():
    for t in (0.1, 1.0, 12.7062):  # 12.706: the 0.05 two-sided critical value at df 1
        assert two_sided_p_value(t, 1) == pytest.approx(1 - 2 * math.atan(t) / math.pi,
                                                        rel=1e-12)
    assert two_sided_p_value(12.7062, 1) == pytest.approx(0.05, abs=1e-5)


def test_regularized_beta_is_scipys_on_both_sides_of_the_switch():
    rng = np.random.default_rng(0)
    for a, b, x in zip(rng.uniform(0.05, 800, 300), rng.uniform(0.05, 30, 300),
                       rng.uniform(0, 1, 300)):
        assert regularized_beta(a, b, x) == pytest.approx(special.betainc(a, b, x), abs=1e-12)
    assert regularized_beta(2.0, 3.0, 0.0) == 0.0 and regularized_beta(2.0, 3.0, 1.0) == 1.0
    with pytest.raises(ValueError, match="x must be in"):
        regularized_beta(1.0, 1.0, 1.5)


def test_degenerate_pairs_are_decided_not_divided_by_zero():
    assert paired_t_test([0.5, 0.2, 0.1], [0.5, 0.2, 0.1]) == PairedTTest(3, 0.0, 0.0, 2, 1.0)
    assert paired_t_test([0.6, 0.3], [0.5, 0.2]) == PairedTTest(
        2, pytest.approx(0.1), math.inf, 1, 0.0)
    assert paired_t_test([0.1], [0.3]) == PairedTTest(1, pytest.approx(-0.2), None, None, None)
    assert paired_t_test([], []) == PairedTTest(0, None, None, None, None)
