"""Tests for official/embeddings/counter_fitting.py and run_scripts/counter_fit_vectors: the cost
against the paper's formula written out in numpy with loops, one descent step against numpy's
finite-difference gradient of it, the fitted vectors' geometry, and the entry point."""

import numpy as np
import pytest

from official.embeddings import counter_fitting as cf
from official.embeddings.counter_fitting_settings import CounterFitting
from official.embeddings.word2vec_files import read_word2vec
from tests import cli

WORDS = ["slow", "fast", "quick", "rapid", "sluggish", "film", "movie", "odd"]
SYNONYMS = [("fast", "quick"), ("quick", "fast"), ("fast", "rapid"), ("slow", "sluggish"),
            ("film", "movie"), ("film", "cinema"), ("odd", "odd")]
ANTONYMS = [("slow", "fast"), ("fast", "slow"), ("sluggish", "rapid")]


def vectors(seed=0, dim=6):
    rng = np.random.default_rng(seed)
    base = rng.normal(size=(len(WORDS), dim))
    base[WORDS.index("movie")] = base[WORDS.index("film")] + 0.1 * rng.normal(size=dim)
    # Antonyms that fill the same slots start close, as in a contextual model's vectors.
    base[WORDS.index("fast")] = base[WORDS.index("slow")] + 0.3 * rng.normal(size=dim)
    return base.astype(np.float32)


def paper_cost(new, old, settings):
    """Mrkšić et al.'s C, written from the paper with a loop per term, in float64."""
    def d(u, v):
        return 1 - u @ v / np.linalg.norm(u) / np.linalg.norm(v)

    new, old = np.asarray(new, np.float64), np.asarray(old, np.float64)
    row = {w: i for i, w in enumerate(WORDS)}
    known = lambda pairs: {frozenset((row[a], row[b])) for a, b in pairs  # noqa: E731
                           if a in row and b in row and a != b}
    ar = sum(max(0, settings.delta - d(new[i], new[j])) for i, j in map(sorted, known(ANTONYMS)))
    sa = sum(max(0, d(new[i], new[j]) - settings.gamma) for i, j in map(sorted, known(SYNONYMS)))
    vsp = sum(max(0, d(new[i], new[j]) - d(old[i], old[j]))
              for i in range(len(WORDS)) for j in range(i + 1, len(WORDS))
              if d(old[i], old[j]) < settings.rho)
    return settings.k_antonyms * ar + settings.k_synonyms * sa + settings.k_preservation * vsp


def test_the_cost_is_the_papers_formula():
    settings = CounterFitting(rho=0.5)
    old = cf.unit(vectors())
    new = cf.unit(vectors(seed=1))
    rows = {name: cf.pair_rows(WORDS, pairs) for name, pairs in
            (("synonyms", SYNONYMS), ("antonyms", ANTONYMS))}
    neighbours = cf.neighbour_rows(old, settings.rho)
    assert len(neighbours) >= 1  # film and movie at least
    cost = cf.objective(new, old, rows["synonyms"], rows["antonyms"], neighbours, settings)
    assert float(cost) == pytest.approx(paper_cost(new, old, settings), rel=1e-5)


def test_pairs_keep_known_different_words_once():
    rows = cf.pair_rows(WORDS, SYNONYMS)
    assert [(WORDS[i], WORDS[j]) for i, j in rows] == [
        ("slow", "sluggish"), ("fast", "quick"), ("fast", "rapid"), ("film", "movie")]


def test_neighbours_are_every_pair_closer_than_rho():
    unit = cf.unit(vectors(seed=3, dim=3))
    for rho in (0.1, 0.5, 1.0, 2.5):
        expected = [(i, j) for i in range(len(WORDS)) for j in range(i + 1, len(WORDS))
                    if 1 - unit[i] @ unit[j] < rho]
        assert [tuple(r) for r in cf.neighbour_rows(unit, rho, chunk=3)] == expected


def test_one_step_descends_the_papers_cost_by_its_gradient():
    # The first step starts at the original vectors, where every VSP term sits on its hinge
    # (a distance minus itself): a subgradient 0 there, which a central difference would
    # halve. So no neighbourhoods here; test_the_cost_is_the_papers_formula covers VSP.
    settings = CounterFitting(rho=0.0, epochs=1, learning_rate=0.05)
    old = cf.unit(vectors())
    fitted = cf.counter_fit(WORDS, old, SYNONYMS, ANTONYMS, settings)
    gradient = np.zeros_like(old, np.float64)
    step = 1e-5
    for index in np.ndindex(*old.shape):
        up, down = old.astype(np.float64), old.astype(np.float64)
        up[index] += step
        down[index] -= step
        gradient[index] = (paper_cost(up, old, settings)
                           - paper_cost(down, old, settings)) / (2 * step)
    expected = cf.unit(old - settings.learning_rate * gradient)
    np.testing.assert_allclose(fitted, expected, atol=2e-4)


def test_fitting_pulls_synonyms_together_pushes_antonyms_apart_and_is_deterministic():
    settings = CounterFitting()
    old = cf.unit(vectors())
    fitted = cf.counter_fit(WORDS, old, SYNONYMS, ANTONYMS, settings)
    cos = lambda v, a, b: v[WORDS.index(a)] @ v[WORDS.index(b)]  # noqa: E731
    for a, b in (("fast", "quick"), ("fast", "rapid"), ("slow", "sluggish")):
        assert cos(fitted, a, b) > cos(old, a, b) + 0.3
    # delta = 1 asks antonyms to be orthogonal; VSP holds back "slow" and "fast", neighbours
    # at the start.
    assert cos(old, "slow", "fast") > 0.8 and cos(fitted, "slow", "fast") < 0.15
    assert cos(fitted, "sluggish", "rapid") < 0.05
    np.testing.assert_allclose(np.linalg.norm(fitted, axis=1), 1, atol=1e-6)
    odd = WORDS.index("odd")  # in no pair and no neighbourhood: untouched
    np.testing.assert_allclose(fitted[odd], old[odd], atol=1e-6)
    np.testing.assert_array_equal(fitted, cf.counter_fit(WORDS, old, SYNONYMS, ANTONYMS,
                                                         settings))


def test_the_entry_point_writes_the_same_words_fitted_and_scores_them(tmp_path):
    table = vectors()
    source = tmp_path / "layer_06.txt"
    source.write_text(f"{len(WORDS)} 6\n" + "".join(
        w + " " + " ".join(map(str, v)) + "\n" for w, v in zip(WORDS, table)))
    (tmp_path / "syn.txt").write_text("".join(f"{a} {b}\n" for a, b in SYNONYMS))
    (tmp_path / "ant.txt").write_text("".join(f"{a} {b}\n" for a, b in ANTONYMS))
    (tmp_path / "sim.tsv").write_text("fast\tquick\t9\nslow\tfast\t1\nfilm\tmovie\t8\n")
    output = tmp_path / "fitted.txt"
    result = cli.succeeded(cli.run_module(
        "run_scripts.counter_fit_vectors", f"--vectors_file={source}",
        f"--synonyms_file={tmp_path / 'syn.txt'}", f"--antonyms_files={tmp_path / 'ant.txt'}",
        f"--output_file={output}", f"--evaluate={tmp_path / 'sim.tsv'}"))
    fitted = read_word2vec(str(output))
    assert list(fitted) == WORDS
    np.testing.assert_allclose(
        np.stack(list(fitted.values())),
        cf.counter_fit(WORDS, table, SYNONYMS, ANTONYMS, CounterFitting()), atol=1e-6)
    assert "sim.tsv: Spearman " in result.stdout and "(3 pairs, 0 out of vocabulary)" in \
        result.stdout
    (tmp_path / "bad.txt").write_text("fast quick\nslow\n")
    cli.refused(cli.run_module(
        "run_scripts.counter_fit_vectors", f"--vectors_file={source}",
        f"--synonyms_file={tmp_path / 'bad.txt'}", f"--output_file={tmp_path / 'x.txt'}"),
        f"{tmp_path / 'bad.txt'}:2: 1 fields, expected two words")
    assert not (tmp_path / "x.txt").exists()
