"""official/robustness/name_probe.py: the probe against scikit-learn's LogisticRegression, the
within / across accuracies on vectors built so that the answer is known (one gender direction
for both races: it carries over; one per race: it does not), the names found in the EEC's
sentences, and each name's vector picked out of a stub encoder's output by hand."""

import os

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from official.robustness import eec, name_probe

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EEC_FILE = os.path.join(REPO, "data", "eec_templates", "eec_templates.json")


@pytest.fixture(scope="module")
def found():
    return name_probe.occurrences(eec.read_template_set(EEC_FILE))


# (rows, features): more rows than features, and fewer (the probe fits in the rows' span).
@pytest.mark.parametrize("rows, features", [(300, 12), (40, 90)])
@pytest.mark.parametrize("l2", [1.0, 0.1])
def test_the_probe_is_scikit_learns_logistic_regression_on_standardised_features(l2, rows,
                                                                                  features):
    rng = np.random.default_rng(1)
    x = (rng.normal(size=(rows, features)) * rng.uniform(0.5, 3, features)
         + rng.normal(size=features))
    y = (x[:, 0] - x[:, 3] + rng.normal(0, 1.5, rows) > x[:, 0].mean()).astype(int)
    probe = name_probe.fit_probe(x, y, l2)
    standard = (x - x.mean(axis=0)) / x.std(axis=0)
    reference = LogisticRegression(C=1 / l2, tol=1e-12, max_iter=10000).fit(standard, y)
    np.testing.assert_allclose(probe.weights, reference.coef_[0], atol=1e-6)
    assert probe.bias == pytest.approx(reference.intercept_[0], abs=1e-6)
    test = rng.normal(size=(200, features)) * 2
    np.testing.assert_array_equal(probe.predict(test),
                                  reference.predict((test - x.mean(axis=0)) / x.std(axis=0)))


def test_every_name_in_every_sentence_with_its_position(found):
    assert len(found.words) == 40 * 144  # names x (7 templates x 20 words + 4)
    assert all(words[i] == name for words, i, name in zip(found.words, found.position,
                                                          found.name))
    assert found.words[0] == ["Ebony", "feels", "angry."]
    assert list(np.unique(found.race)) == ["African-American", "European-American"]
    assert np.count_nonzero((found.race == "European-American") & (found.gender == "male")) \
        == 10 * 144


def _vectors(found, directions, seed=0):
    """[1, occurrences, 8]: +-2 (female / male) along the gender direction of the name's race,
    N(0, 1) noise per occurrence on the axes no race uses. A race's names are 0 on the other
    race's axis, so a probe trained on them puts no weight there (its gradient is 0)."""
    rng = np.random.default_rng(seed)
    sign = np.where(found.gender == "female", 1.0, -1.0)
    x = rng.normal(0, 1.0, (len(found.name), 8))
    x[:, sorted(set(directions.values()))] = 0.0
    for race, axis in directions.items():
        x[found.race == race, axis] += 2 * sign[found.race == race]
    return x[None]


def test_one_gender_direction_for_both_races_carries_across(found):
    shared = _vectors(found, {"African-American": 0, "European-American": 0})
    row = name_probe.study(shared, found, folds=5)[0]
    for accuracy in [*row["gender"]["within"].values(), *row["gender"]["across"].values()]:
        assert accuracy > 0.99
    # Nothing in these vectors tells the races apart: every race probe is at chance.
    for accuracy in [*row["race"]["within"].values(), *row["race"]["across"].values()]:
        assert 0.45 < accuracy < 0.55
    assert row["layer"] == 0


def test_a_gender_direction_per_race_is_read_within_but_not_across(found):
    entangled = _vectors(found, {"African-American": 0, "European-American": 1})
    row = name_probe.study(entangled, found, folds=5)[0]
    assert min(row["gender"]["within"].values()) > 0.99
    # The other race's names do not move along the direction learnt: chance, give or take.
    assert all(0.45 < a < 0.55 for a in row["gender"]["across"].values())
    # Race, by construction, is read as +e0 - e1 for women and -e0 + e1 for men: a race probe
    # trained on one gender reads the other's races the wrong way round.
    assert min(row["race"]["within"].values()) > 0.99
    assert max(row["race"]["across"].values()) < 0.01


def test_name_vectors_are_the_means_of_the_names_pieces_at_every_layer(tmp_path):
    import tensorflow as tf

    from official.text.tokenizer import FullTokenizer

    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "i", "saw", "in", "the", "market", ".",
             "la", "##ki", "##sha", "adam", "feels", "sad"]
    path = tmp_path / "vocab.txt"
    path.write_text("\n".join(vocab) + "\n", encoding="utf-8")
    tokenizer = FullTokenizer(str(path), do_lower_case=True)

    def layers(ids, mask, type_ids):  # layer l: (id * (l + 1), position) per token
        positions = np.broadcast_to(np.arange(ids.shape[1]), ids.shape)
        return tf.constant(np.stack([np.stack([ids * (layer + 1), positions], -1)
                                     for layer in range(3)]), tf.float32)

    found = name_probe.Occurrences(
        [["I", "saw", "Lakisha", "in", "the", "market", "."], ["Adam", "feels", "sad", "."]],
        np.array([2, 0]), np.array(["Lakisha", "Adam"]), np.array(["female", "male"]),
        np.array(["A", "B"]))
    vectors = name_probe.name_vectors(found, tokenizer, layers, 3, 2, max_seq_length=16,
                                      batch_size=1, chunk=1)
    # [CLS] i saw la ##ki ##sha ...: Lakisha's pieces are ids 10, 11, 12 at positions 3, 4, 5.
    for layer in range(3):
        np.testing.assert_allclose(vectors[layer, 0], [11 * (layer + 1), 4])
        np.testing.assert_allclose(vectors[layer, 1], [13 * (layer + 1), 1])  # adam, position 1
