"""Counter-fitting (Mrkšić et al., NAACL 2016): word vectors pulled toward their synonyms and
pushed from their antonyms, their other neighbourhoods kept.

    fitted = counter_fit(words, vectors, synonyms, antonyms, CounterFitting())
    objective(vectors, original, synonym_rows, antonym_rows, neighbour_rows, settings)

Static vectors from a contextual model (build_static_embeddings) put "slow" next to "swiftly":
words that fill the same slots, whatever they mean. An attack that swaps a word for its nearest
neighbours then changes the meaning it must keep. TextFooler (Jin et al. 2020) took its
candidates from counter-fitted vectors for that reason; this is the same procedure, on the
project's own vectors and the same PPDB / WordNet lists (../shared/data/robustness/synonyms).

With d(u, v) = 1 - cos(u, v) and tau(x) = max(0, x), the paper's cost (section 3) over the new
vectors V' (the old ones V):
  AR   antonym repel        sum over antonym pairs (u, w):  tau(delta - d(v'_u, v'_w))
  SA   synonym attract      sum over synonym pairs (u, w):  tau(d(v'_u, v'_w) - gamma)
  VSP  space preservation   sum over the pairs of words (i, j), each pair once, that are
                            neighbours in V (d(v_i, v_j) < rho):  tau(d(v'_i, v'_j) - d(v_i, v_j))
  C = k1 AR + k2 SA + k3 VSP, with the paper's delta = 1, gamma = 0, rho = 0.2 and
  k1 = k2 = k3 = 0.1.
It is minimised by full-batch gradient descent for `epochs` steps (the paper: 20 epochs of SGD)
from the unit-length vectors, which are returned unit-length again. The authors' released code
steps differently (each word's update divided by its number of constraints, the vectors
renormalised after every step); here a word with many synonyms takes larger steps, and
bench/attack.py reports what the result scores on SimLex-999. Pairs with a word outside the
table, and a word paired with itself, are dropped; a pair listed both ways counts once.
"""

from __future__ import annotations

from typing import Iterable

import numpy as np
import tensorflow as tf

from official.embeddings.counter_fitting_settings import CounterFitting, pair_rows


def unit(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, np.float32)
    return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)


def neighbour_rows(vectors: np.ndarray, rho: float, chunk: int = 2048) -> np.ndarray:
    """int64 [pairs, 2]: every (i, j), i < j, whose unit vectors are closer than rho in cosine
    distance (VSP's neighbourhoods; symmetric, so each pair once)."""
    vectors = unit(vectors)
    found = []
    for start in range(0, len(vectors), chunk):
        cosines = vectors[start:start + chunk] @ vectors.T
        i, j = np.nonzero(1.0 - cosines < rho)
        i = i + start
        keep = i < j
        found.append(np.stack([i[keep], j[keep]], axis=1))
    return np.concatenate(found).astype(np.int64) if found else np.zeros((0, 2), np.int64)


def _distances(vectors: tf.Tensor, rows: tf.Tensor) -> tf.Tensor:
    """1 - cos of each pair of rows: float32 [pairs]."""
    unit_vectors = tf.math.l2_normalize(vectors, axis=1)
    first, second = (tf.gather(unit_vectors, rows[:, k]) for k in (0, 1))
    return 1.0 - tf.reduce_sum(first * second, axis=1)


def objective(vectors, original, synonym_rows, antonym_rows, neighbours,
              settings: CounterFitting) -> tf.Tensor:
    """The cost C of the module docstring (a scalar): `vectors` the new [words, dim],
    `original` the old, each *_rows an int [pairs, 2]."""
    vectors = tf.convert_to_tensor(vectors, tf.float32)
    original = tf.convert_to_tensor(original, tf.float32)
    antonym_repel = tf.reduce_sum(tf.nn.relu(
        settings.delta - _distances(vectors, antonym_rows)))
    synonym_attract = tf.reduce_sum(tf.nn.relu(
        _distances(vectors, synonym_rows) - settings.gamma))
    preservation = tf.reduce_sum(tf.nn.relu(
        _distances(vectors, neighbours) - _distances(original, neighbours)))
    return (settings.k_antonyms * antonym_repel + settings.k_synonyms * synonym_attract
            + settings.k_preservation * preservation)


def counter_fit(words: list[str], vectors: np.ndarray, synonyms: Iterable[tuple[str, str]],
                antonyms: Iterable[tuple[str, str]],
                settings: CounterFitting) -> np.ndarray:
    """float32 [words, dim]: `vectors` counter-fitted (see the module docstring), unit length.

    Deterministic: full-batch steps from the given vectors, no sampling."""
    settings.check()
    original = unit(vectors)
    synonym_rows = tf.constant(pair_rows(words, synonyms))
    antonym_rows = tf.constant(pair_rows(words, antonyms))
    neighbours = tf.constant(neighbour_rows(original, settings.rho))
    fitted = tf.Variable(original)

    @tf.function(autograph=False)
    def step():
        with tf.GradientTape() as tape:
            cost = objective(fitted, original, synonym_rows, antonym_rows, neighbours, settings)
        fitted.assign_sub(settings.learning_rate * tape.gradient(cost, fitted))
        return cost

    for _ in range(settings.epochs):
        step()
    return unit(fitted.numpy())
