"""Gender and race in the contextual vectors of first names: is the gender a linear probe reads
from one race's names the gender of the other race's names?

    occurrences(template_set) -> Occurrences
                                    every name of a template set (official/robustness/eec.py)
                                    in every one of its sentences, as words, with the name's
                                    position, gender and race
    name_vectors(occurrences, tokenizer, layers, num_layers, hidden, max_seq_length,
                 batch_size) -> float32 [num_layers, occurrences, hidden]
                                    each occurrence's vector at every layer (TensorFlow)
    fit_probe(x, y, l2) -> Probe    L2-regularised logistic regression, by Newton's method
    study(vectors, occurrences, folds, l2) -> [per-layer dict]
    markdown(rows, races) -> str    the accuracy table by layer

The vectors are probing's (official/probing/word_vectors.py): layer 0 the embedding layer's
output, layer l transformer layer l's; a name of several word pieces is their mean (a name is
one word here, and its first piece alone, "las" of "Lakisha", says little about it).

The probes, per layer, each an occurrence's vector to a label (gender, or race), accuracy over
the held-out occurrences:
  - within: k-fold cross-validation over one group's names (the names of each gender, or race,
    in file order, the i-th to fold i mod k), so that no name is both trained and tested on;
  - across: trained on every name of one group, tested on every name of the other.
For gender the groups are the two races; for race, the two genders. Features are standardised
with the training rows' mean and standard deviation.

The claim. If a layer encodes gender the same way for both races' names, a gender probe
trained on one race's names reads the other's as well as held-out names of its own race
(across = within); a drop from within to across means the gender the probe learned from one
race's names is partly the race's own: gender and race are entangled in the names' vectors
there. The published finding this looks at: contextualized word embeddings hold intersectional
biases (Guo & Caliskan 2021, "Detecting Emergent Intersectional Biases: Contextualized Word
Embeddings Contain a Distribution of Human-like Biases", AIES: CEAT finds evidence of every
bias tested, African-American women's intersectional biases among them; Tan & Celis 2019
found intersectional minorities' bias effects exacerbated beyond their constituent identities).
Neither paper probes names across races, so no published figure stands beside these accuracies:
the comparison is the direction of the finding only (`PUBLISHED`).

The probe. Minimise sum_i [log(1 + exp(z_i)) - y_i z_i] + (l2 / 2) ||w||^2 with
z_i = w . x_i + b (the bias unpenalised): scikit-learn's LogisticRegression with C = 1 / l2.
Newton's method with a halving step converges in a few dozen steps at these sizes (thousands of
rows, hundreds of features), deterministically; the l2 term keeps the optimum finite when the
classes are separable, as a few names' vectors usually are. With fewer rows than features (a
sample of names: 384 occurrences of BERT-Base's 768 features) the optimum's w lies in the span of
the rows (at the optimum l2 w = -sum_i (p_i - y_i) x_i), so Newton's method runs on the rows'
coordinates in an orthonormal basis of that span (the SVD's, at most rows wide) and w is mapped
back: the same optimum, each step's cost cubic in the rows instead of the features.

This module loads no TensorFlow until `name_vectors` is called.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from official.robustness.eec import GENDERS, TemplateSet, sentences

PUBLISHED = {
    "source": "Guo & Caliskan (2021), Detecting Emergent Intersectional Biases: Contextualized "
              "Word Embeddings Contain a Distribution of Human-like Biases, AIES "
              "(arXiv:2006.03955)",
    "finding": "abstract: CEAT finds evidence of all tested biases, intersectional ones among "
               "them, and all the models trained on English corpora studied contain biased "
               "representations",
    "figure": "none to compare: the paper reports CEAT effect sizes and IBD/EIBD detection "
              "accuracies over attribute words, not a gender probe carried across races' "
              "names; this test's claim is the direction only (across below within means "
              "entangled)",
}
_MAX_STEPS = 100
_GRADIENT_TOLERANCE = 1e-8


@dataclasses.dataclass(frozen=True)
class Occurrences:
    """Names in sentences: `words` [occurrences] (each a sentence's words), `position` int
    [occurrences] (the name's word), and the name, gender and race of each."""
    words: list[list[str]]
    position: np.ndarray
    name: np.ndarray
    gender: np.ndarray
    race: np.ndarray


def occurrences(template_set: TemplateSet) -> Occurrences:
    """Every name of the set in every one of its sentences (eec.sentences' order)."""
    named = [s for s in sentences(template_set) if s.race is not None]
    words = [s.before.split() + [s.person] + s.after.split() for s in named]
    return Occurrences(words, np.array([len(s.before.split()) for s in named]),
                       np.array([s.person for s in named]), np.array([s.gender for s in named]),
                       np.array([s.race for s in named]))


def name_vectors(found: Occurrences, tokenizer, layers, num_layers: int, hidden: int,
                 max_seq_length: int, batch_size: int, chunk: int = 256) -> np.ndarray:
    """float32 [num_layers, occurrences, hidden]: each name's vector (its pieces' mean) at every
    layer, `layers` being official/probing/word_vectors.layer_function of the encoder. The
    sentences are read `chunk` at a time: only the names' rows are kept."""
    from official.probing.word_vectors import word_vectors

    out = np.zeros((num_layers, len(found.words), hidden), np.float32)
    for start in range(0, len(found.words), chunk):
        batch = found.words[start:start + chunk]
        every = np.zeros((num_layers, sum(len(w) for w in batch), hidden), np.float32)
        word_vectors(batch, tokenizer, layers, every, max_seq_length,
                     doc_stride=max(1, (max_seq_length - 2) // 2), batch_size=batch_size,
                     subword_pool="mean")
        firsts = np.concatenate([[0], np.cumsum([len(w) for w in batch])[:-1]]).astype(int)
        out[:, start:start + len(batch)] = every[:, firsts + found.position[start:start + chunk]]
    return out


@dataclasses.dataclass(frozen=True)
class Probe:
    """A fitted probe: weights [features], bias, and the standardisation it was fitted under
    (mean and scale [features])."""
    weights: np.ndarray
    bias: float
    mean: np.ndarray
    scale: np.ndarray

    def predict(self, x: np.ndarray) -> np.ndarray:
        """Labels 0 / 1 of rows x [rows, features]."""
        z = ((np.asarray(x, np.float64) - self.mean) / self.scale) @ self.weights + self.bias
        return (z > 0).astype(int)


def _objective(a: np.ndarray, y: np.ndarray, theta: np.ndarray, l2: float) -> float:
    z = a @ theta
    return float(np.sum(np.logaddexp(0.0, z) - y * z) + 0.5 * l2 * theta[:-1] @ theta[:-1])


def fit_probe(x: np.ndarray, y: np.ndarray, l2: float = 1.0) -> Probe:
    """The probe of the module docstring on rows x [rows, features] and labels y [rows] (0 / 1),
    features standardised first."""
    x = np.asarray(x, np.float64)
    y = np.asarray(y, np.float64)
    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale[scale == 0] = 1.0  # a constant feature stays 0 after centring
    standard = (x - mean) / scale
    basis = None
    if len(x) < x.shape[1]:  # w in the rows' span: fit in its coordinates (module docstring)
        _, _, basis = np.linalg.svd(standard, full_matrices=False)  # [rows, features]
        standard = standard @ basis.T
    a = np.hstack([standard, np.ones((len(x), 1))])  # the bias as a last column
    penalty = np.full(a.shape[1], l2)
    penalty[-1] = 0.0
    theta = np.zeros(a.shape[1])
    value = _objective(a, y, theta, l2)
    for _ in range(_MAX_STEPS):
        p = 1.0 / (1.0 + np.exp(-(a @ theta)))
        gradient = a.T @ (p - y) + penalty * theta
        if np.max(np.abs(gradient)) < _GRADIENT_TOLERANCE * len(y):
            break
        hessian = (a * (p * (1 - p))[:, None]).T @ a + np.diag(penalty + 1e-12)
        step, size = np.linalg.solve(hessian, gradient), 1.0
        while (new := _objective(a, y, theta - size * step, l2)) > value and size > 1e-10:
            size /= 2
        theta, value = theta - size * step, new
    weights = theta[:-1] if basis is None else basis.T @ theta[:-1]
    return Probe(weights, float(theta[-1]), mean, scale)


def _accuracy(x, y, train, test, l2: float) -> float:
    probe = fit_probe(x[train], y[train], l2)
    return float(np.mean(probe.predict(x[test]) == y[test]))


def _folds(found: Occurrences, rows: np.ndarray, labels: np.ndarray, folds: int) -> np.ndarray:
    """The fold of each row: per label, its names in order of first occurrence, the i-th name's
    rows in fold i mod folds."""
    fold = np.zeros(len(found.name), int)
    for label in np.unique(labels[rows]):
        chosen = rows & (labels == label)
        for i, name in enumerate(dict.fromkeys(found.name[chosen])):
            fold[chosen & (found.name == name)] = i % folds
    return fold


def _attribute(x, found: Occurrences, target: np.ndarray, positive: str, split: np.ndarray,
               groups: tuple[str, str], folds: int, l2: float) -> dict:
    """One attribute's probes at one layer: within each group (cross-validated by name) and
    across the groups, both ways."""
    y = (target == positive).astype(int)
    within = {}
    for group in groups:
        rows = split == group
        fold = _folds(found, rows, target, folds)
        correct = 0
        for k in range(folds):
            test = rows & (fold == k)
            correct += _accuracy(x, y, rows & (fold != k), test, l2) * np.count_nonzero(test)
        within[str(group)] = float(correct / np.count_nonzero(rows))
    across = {f"{a} -> {b}": _accuracy(x, y, split == a, split == b, l2)
              for a, b in (groups, groups[::-1])}
    return {"within": within, "across": across}


def study(vectors: np.ndarray, found: Occurrences, folds: int = 5, l2: float = 1.0) -> list[dict]:
    """Per layer of vectors [layers, occurrences, hidden]: {"layer", "gender": {"within": {race:
    accuracy}, "across": {"race -> race": accuracy}}, "race": the same with genders}."""
    races = tuple(str(r) for r in dict.fromkeys(found.race))
    rows = []
    for layer, x in enumerate(vectors):
        x = np.asarray(x, np.float64)
        rows.append({"layer": layer,
                     "gender": _attribute(x, found, found.gender, GENDERS[0], found.race, races,
                                          folds, l2),
                     "race": _attribute(x, found, found.race, races[0], found.gender, GENDERS,
                                        folds, l2)})
    return rows


def markdown(rows: list[dict], races: tuple[str, str]) -> str:
    """The accuracies (%) as a Markdown table: a probe per line, a layer per column (chance is
    50).

    Example:
        >>> row = {"within": {"A": 1.0, "B": 0.9}, "across": {"A -> B": 0.6, "B -> A": 0.7}}
        >>> rows = [{"layer": 0, "gender": row, "race": {
        ...     "within": {"female": 0.8, "male": 0.8},
        ...     "across": {"female -> male": 0.75, "male -> female": 0.5}}}]
        >>> print(markdown(rows, ("A", "B")))
        | probe | layer 0 |
        |---|---|
        | gender within A | 100.0 |
        | gender within B | 90.0 |
        | gender A -> B | 60.0 |
        | gender B -> A | 70.0 |
        | race within female | 80.0 |
        | race within male | 80.0 |
        | race female -> male | 75.0 |
        | race male -> female | 50.0 |
    """
    probes = [("gender", "within", r) for r in races]
    probes += [("gender", "across", f"{a} -> {b}") for a, b in (races, races[::-1])]
    probes += [("race", "within", g) for g in GENDERS]
    probes += [("race", "across", f"{a} -> {b}") for a, b in (GENDERS, GENDERS[::-1])]
    lines = ["| probe | " + " | ".join(f"layer {row['layer']}" for row in rows) + " |",
             "|---|" + "---|" * len(rows)]
    for attribute, kind, group in probes:
        name = f"{attribute} {kind} {group}" if kind == "within" else f"{attribute} {group}"
        lines.append(f"| {name} | " + " | ".join(
            f"{100 * row[attribute][kind][group]:.1f}" for row in rows) + " |")
    return "\n".join(lines)
