"""Tests for official/embeddings/counter_fitting.py and run_scripts/counter_fit_vectors: the cost
against the paper's formula written out in numpy with loops, one descent step against numpy's
finite-difference gradient of it, the fitted vectors' geometry, the entry point, and the bad
vectors and lists it refuses (a nan or inf, a word twice, a list none of whose pairs counts)."""

import numpy as np
import pytest

from official.embeddings import counter_fitting as cf
from official.embeddings.counter_fitting_settings import CounterFitting
from official.embeddings.word2vec_files import read_word2vec, write_word2vec_file
from official.robustness.candidates import VectorCandidates
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
    # Of the listed pairs: no "cinema" among the words, "odd odd" is no pair, "quick fast" is
    # "fast quick" again.
    assert "4 synonym and 2 antonym pairs used (both words among the vectors)" in result.stderr
    (tmp_path / "bad.txt").write_text("fast quick\nslow\n")
    cli.refused(cli.run_module(
        "run_scripts.counter_fit_vectors", f"--vectors_file={source}",
        f"--synonyms_file={tmp_path / 'bad.txt'}", f"--output_file={tmp_path / 'x.txt'}"),
        f"{tmp_path / 'bad.txt'}:2: 1 fields, expected two words")
    assert not (tmp_path / "x.txt").exists()


def _write_vectors(path, lines, count=None):
    """A word2vec text file of `lines` ("word v1 ... v6"), its header `count` (default: the
    lines') vectors of 6 values."""
    path.write_text(f"{len(lines) if count is None else count} 6\n" + "".join(
        line + "\n" for line in lines))
    return path


def _fit(tmp_path, vectors_file, *flags):
    (tmp_path / "syn.txt").write_text("".join(f"{a} {b}\n" for a, b in SYNONYMS))
    return cli.run_module("run_scripts.counter_fit_vectors", f"--vectors_file={vectors_file}",
                          f"--synonyms_file={tmp_path / 'syn.txt'}",
                          f"--output_file={tmp_path / 'fitted.txt'}", *flags)


def _lines(table):
    return [w + " " + " ".join(map(str, v)) for w, v in zip(WORDS, table)]


def test_a_vector_that_is_not_finite_is_refused_naming_its_line_and_word(tmp_path):
    lines = _lines(vectors())
    lines[2] = "quick 0.5 inf 0.1 0.1 0.1 0.1"  # fast's synonym: fitting would spread it
    result = _fit(tmp_path, _write_vectors(tmp_path / "inf.txt", lines))
    cli.refused(result, f"counter_fit_vectors: {tmp_path / 'inf.txt'}:4: the vector of 'quick' "
                "holds 'inf', not a finite float32")
    assert not (tmp_path / "fitted.txt").exists()
    # Nor do such vectors reach an attack's candidates through the Python API.
    table = dict(zip(WORDS, vectors()))
    table["movie"] = np.full(6, np.nan, np.float32)
    with pytest.raises(ValueError, match="the vector of 'movie' holds nan"):
        VectorCandidates(table)


def test_no_vector_that_is_not_finite_is_written(tmp_path):
    fitted = cf.unit(vectors())
    fitted[WORDS.index("rapid"), 3] = -np.inf
    with pytest.raises(ValueError, match=r"out.txt: not written: the vector of 'rapid' holds "
                                         r"-inf, not a finite number"):
        write_word2vec_file(str(tmp_path / "out.txt"), WORDS, fitted)
    assert not (tmp_path / "out.txt").exists()


def test_a_list_with_no_pair_among_the_vectors_is_refused(tmp_path):
    source = _write_vectors(tmp_path / "vectors.txt", _lines(vectors()))
    (tmp_path / "ant.txt").write_text("hot cold\nfast fast\n")  # unknown words; a word alone
    result = _fit(tmp_path, source, f"--antonyms_files={tmp_path / 'ant.txt'}")
    cli.refused(result, f"counter_fit_vectors: {tmp_path / 'ant.txt'}: none of its 2 pairs has "
                f"two different words both in --vectors_file {source}")
    assert not (tmp_path / "fitted.txt").exists()


def test_a_word_given_twice_is_refused_naming_both_lines(tmp_path):
    lines = _lines(vectors()) + ["film 1 0 0 0 0 0"]
    for name, count in (("header_true.txt", len(lines)), ("header_distinct.txt", len(WORDS))):
        result = _fit(tmp_path, _write_vectors(tmp_path / name, lines, count))
        cli.refused(result, f"{tmp_path / name}:{len(lines) + 1}: the word 'film' again (first "
                    f"on line {WORDS.index('film') + 2})")
    assert not (tmp_path / "fitted.txt").exists()
