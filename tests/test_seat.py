"""official/robustness/seat.py: May et al.'s SEAT / Caliskan's WEAT.

The effect size is checked against a loop over hand-set vectors with the standard library's
sample standard deviation; the p-value against scipy.stats.permutation_test (every distinct
partition, one-sided "greater"), and the sampled test against the exact one. The test files here
are made up in SEAT's format: SEAT's own lists are CC BY-NC and stay out of the repo.
"""

import itertools
import json
import math
import statistics

import numpy as np
import pytest
from scipy import stats

from official.robustness import seat

# Hand-set vectors: X leans towards A, Y towards B, not perfectly.
X = np.array([[1.0, 0.2, 0.0], [0.9, 0.1, 0.3], [0.8, -0.2, 0.1], [0.3, 0.5, 0.2]])
Y = np.array([[0.1, 1.0, 0.2], [-0.2, 0.8, 0.4], [0.2, 0.9, -0.1], [0.6, 0.4, 0.3]])
A = np.array([[1.0, 0.0, 0.0], [0.7, 0.1, 0.2], [0.9, 0.3, -0.2]])
B = np.array([[0.0, 1.0, 0.0], [0.1, 0.8, 0.3]])


def cos(u, v):
    u, v = [float(a) for a in u], [float(b) for b in v]  # Python floats: float64 throughout
    return sum(a * b for a, b in zip(u, v)) / math.sqrt(sum(a * a for a in u) *
                                                          sum(b * b for b in v))


def s_reference(w, attr_a, attr_b):
    return (sum(cos(w, a) for a in attr_a) / len(attr_a)
            - sum(cos(w, b) for b in attr_b) / len(attr_b))


def effect_size_reference(x, y, attr_a, attr_b):
    s_x = [s_reference(w, attr_a, attr_b) for w in x]
    s_y = [s_reference(w, attr_a, attr_b) for w in y]
    return (statistics.mean(s_x) - statistics.mean(s_y)) / statistics.stdev(s_x + s_y)


def scipy_p_value(s_x, s_y):
    """Every distinct partition of X u Y into halves (C(2n, n): scipy's exact test when
    n_resamples is at least that), statistic sum_X - sum_Y, P(statistic >= observed)."""
    result = stats.permutation_test((s_x, s_y), lambda x, y: np.sum(x) - np.sum(y),
                                    permutation_type="independent", alternative="greater",
                                    n_resamples=10**6, vectorized=False)
    return result.pvalue


def test_effect_size_is_cohens_d_with_the_sample_standard_deviation():
    s_x = seat.associations(X, A, B)
    s_y = seat.associations(Y, A, B)
    np.testing.assert_allclose(s_x, [s_reference(w, A, B) for w in X], rtol=1e-12)
    assert seat.effect_size(s_x, s_y) == pytest.approx(effect_size_reference(X, Y, A, B),
                                                       rel=1e-12)
    assert seat.effect_size(s_x, s_y) > 1  # X is the A side, as the vectors were set
    assert seat.effect_size(s_y, s_x) == pytest.approx(-seat.effect_size(s_x, s_y))


def test_exact_p_value_equals_scipys_enumeration_of_every_partition():
    s_x = seat.associations(X, A, B)
    s_y = seat.associations(Y, A, B)
    p = seat.p_value(s_x, s_y, permutations=70, seed=0)
    assert p.method == "exact" and p.partitions == math.comb(8, 4) == 70
    assert p.p_value == pytest.approx(scipy_p_value(s_x, s_y), abs=1e-12)
    # And by hand: the share of the 70 halves whose sum reaches X's (X itself among them).
    s = np.concatenate([s_x, s_y])
    hand = sum(sum(s[list(c)]) >= sum(s_x) - 1e-12 for c in itertools.combinations(range(8), 4))
    assert p.p_value == hand / 70


def test_ties_count_as_exceeding_so_equal_associations_give_p_1():
    p = seat.p_value(np.full(3, 0.25), np.full(3, 0.25), permutations=1000, seed=0)
    assert p == seat.PValue(1.0, "exact", 20)


def test_sampled_p_value_counts_the_observed_partition_and_is_near_the_exact_one():
    rng = np.random.default_rng(5)
    s_x, s_y = rng.normal(0.1, 1.0, 7), rng.normal(0.0, 1.0, 7)  # C(14, 7) = 3432 partitions
    exact = seat.p_value(s_x, s_y, permutations=3432, seed=0)
    assert exact.method == "exact" and exact.p_value == pytest.approx(scipy_p_value(s_x, s_y))
    sampled = seat.p_value(s_x, s_y, permutations=2000, seed=3)
    assert sampled.method == "sampled" and sampled.partitions == 2000
    assert (sampled.p_value * 2000) == pytest.approx(round(sampled.p_value * 2000))
    se = math.sqrt(exact.p_value * (1 - exact.p_value) / 2000)
    assert abs(sampled.p_value - exact.p_value) < 4 * se + 1 / 2000
    assert seat.p_value(s_x, s_y, permutations=2000, seed=3) == sampled  # the seed decides
    # A statistic nothing reaches: sampled, the observed partition still counts once.
    far = seat.p_value(np.full(7, 5.0) + np.arange(7) * 1e-3, np.zeros(7), 100, seed=0)
    assert far == seat.PValue(1 / 100, "sampled", 100)


def _write(path, data):
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return str(path)


def made_up_test():
    return {"targ1": {"category": "Fruit", "examples": ["apple", "pear", "plum"]},
            "targ2": {"category": "Tools", "examples": ["hammer", "saw", "drill"]},
            "attr1": {"category": "Sweet", "examples": ["sugar", "honey"]},
            "attr2": {"category": "Hard", "examples": ["steel", "stone", "iron"]}}


def test_run_test_reads_a_file_and_reports_every_figure(tmp_path):
    path = _write(tmp_path / "fruit.jsonl", made_up_test())
    test = seat.read_test(path)
    assert test.name == "fruit" and test.categories["attr2"] == "Hard"
    assert test.texts[:4] == ["apple", "pear", "plum", "hammer"] and len(test.texts) == 11
    rng = np.random.default_rng(0)
    vectors = {t: rng.normal(size=5) for t in test.texts}
    result = seat.run_test(test, vectors.__getitem__, permutations=100, seed=0)
    x = [vectors[t] for t in test.examples["targ1"]]
    y = [vectors[t] for t in test.examples["targ2"]]
    a = [vectors[t] for t in test.examples["attr1"]]
    b = [vectors[t] for t in test.examples["attr2"]]
    assert result["effect_size"] == pytest.approx(effect_size_reference(x, y, a, b), rel=1e-9)
    s_x = [s_reference(w, a, b) for w in x]
    s_y = [s_reference(w, a, b) for w in y]
    assert result["p_value"] == pytest.approx(scipy_p_value(s_x, s_y), abs=1e-12)
    assert (result["p_value_method"], result["partitions"]) == ("exact", 20)
    assert result["sizes"] == {"targ1": 3, "targ2": 3, "attr1": 2, "attr2": 3}


@pytest.mark.parametrize("edit, error", [
    (lambda d: d.pop("attr2"), "no attr2 set"),
    (lambda d: d["targ1"].pop("examples"), "targ1 is not"),
    (lambda d: d["attr1"].update(examples=[]), "attr1 (Sweet) must list"),
    (lambda d: d["targ2"]["examples"].pop(), "the target sets differ in size (targ1 3, targ2 2)"),
])
def test_a_bad_test_file_is_one_line_naming_it(tmp_path, edit, error):
    data = made_up_test()
    edit(data)
    path = _write(tmp_path / "bad.jsonl", data)
    with pytest.raises(ValueError) as raised:
        seat.read_test(path)
    assert str(raised.value).startswith(f"{path}: ") and error in str(raised.value)
    assert "\n" not in str(raised.value)


def test_a_file_that_is_not_one_json_object_is_refused(tmp_path):
    lines = tmp_path / "lines.jsonl"
    lines.write_text('{"targ1": {}}\n{"targ2": {}}\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"lines\.jsonl: not one JSON object \(Extra data"):
        seat.read_test(str(lines))
    with pytest.raises(ValueError, match=r"missing\.jsonl: no such file"):
        seat.read_test(str(tmp_path / "missing.jsonl"))
