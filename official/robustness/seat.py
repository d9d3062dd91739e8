"""May et al.'s Sentence Encoder Association Test (SEAT, 2019), Caliskan et al.'s WEAT (2017) on
a sentence encoder's vectors: does the encoder put one target set nearer one attribute set?

    read_test(path) -> SeatTest     one test file: targ1, targ2 (X, Y) and attr1, attr2 (A, B),
                                    each {"category": name, "examples": [texts]}; the files are
                                    named .jsonl but each holds ONE pretty-printed JSON object
    associations(x, a, b)           s(w, A, B) = mean_a cos(w, a) - mean_b cos(w, b), per row w
    effect_size(s_x, s_y)           (mean_X s - mean_Y s) / std_{X u Y} s with the sample
                                    standard deviation (ddof=1): Cohen's d, as sent-bias's
                                    weat.py computes it
    p_value(s_x, s_y, permutations, seed) -> PValue
                                    the one-sided permutation test
    run_test(test, vectors, permutations, seed) -> dict
                                    one test's row of the report
    markdown(results) -> str        the report's table

The permutation test follows sent-bias's `p_val_permutation_test` (W4ngatang/sent-bias,
sentbias/weat.py; read, not copied). Its statistic is sum_{x in X_i} s(x) over the partitions
(X_i, Y_i) of X u Y into two halves of |X| items: for every partition sum_X_i + sum_Y_i is the same
constant C, so sum_X_i s - sum_Y_i s = 2 sum_X_i s - C orders the partitions as the full WEAT
statistic does. The p-value is the share of partitions whose statistic is at least the observed
one: sent-bias counts ties as exceeding ("use conservative test"), so the observed partition
itself always counts. When the C(2n, n) partitions are at most `permutations` every one is
enumerated (exact); otherwise `permutations - 1` random partitions are drawn with `seed` and, as
sent-bias does, the observed one is counted once more as a success ("we only have as much
precision as the number of samples drawn"): p = (1 + #{sampled >= observed}) / permutations, never
0. Each result says which was done and over how many partitions.

X and Y must be the same size (sent-bias asserts it; a test file breaking it is refused). The
texts within a set are distinct in every published test; a repeated text would be a row of its
own here, where sent-bias's dictionaries keyed by text keep one.

This module loads no TensorFlow: the entry point reads and checks the files before it loads.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
import os
from typing import Callable, NamedTuple

import numpy as np

SETS = ("targ1", "targ2", "attr1", "attr2")
# Partitions scored per numpy call: bounds memory at CHUNK * |X u Y| indices.
_CHUNK = 4096


@dataclasses.dataclass(frozen=True)
class SeatTest:
    """One test file: its name (the file's, without .jsonl), path and the four sets."""
    name: str
    path: str
    categories: dict[str, str]  # set -> its category ("Flowers", ...)
    examples: dict[str, list[str]]  # set -> its texts

    @property
    def texts(self) -> list[str]:
        """Every text of the four sets once, in file order: what is encoded."""
        return list(dict.fromkeys(t for s in SETS for t in self.examples[s]))


def read_test(path: str) -> SeatTest:
    """The SEAT test file at `path`.

    Raises:
      ValueError: one line naming the file and what is wrong (not JSON, a set missing, a set
        without a category or texts, target sets of different sizes).
    """
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except FileNotFoundError:
        raise ValueError(f"{path}: no such file") from None
    except UnicodeDecodeError as e:
        raise ValueError(f"{path}: not UTF-8 (byte {e.start})") from None
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: not one JSON object ({e.msg}, line {e.lineno})") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: not a SEAT test: a JSON object with {', '.join(SETS)} expected")
    missing = [s for s in SETS if s not in data]
    if missing:
        raise ValueError(f"{path}: no {', '.join(missing)} set: a SEAT test has {', '.join(SETS)}")
    categories, examples = {}, {}
    for s in SETS:
        entry = data[s]
        texts = entry.get("examples") if isinstance(entry, dict) else None
        category = entry.get("category") if isinstance(entry, dict) else None
        if not isinstance(category, str) or not isinstance(texts, list):
            raise ValueError(f"{path}: {s} is not {{\"category\": text, \"examples\": [texts]}}")
        if not texts or not all(isinstance(t, str) and t.strip() for t in texts):
            raise ValueError(f"{path}: {s} ({category}) must list at least one non-empty text")
        categories[s], examples[s] = category, texts
    if len(examples["targ1"]) != len(examples["targ2"]):
        raise ValueError(f"{path}: the target sets differ in size (targ1 {len(examples['targ1'])}"
                         f", targ2 {len(examples['targ2'])}); the permutation test needs equal "
                         "halves")
    name = os.path.basename(path).removesuffix(".jsonl")
    return SeatTest(name, path, categories, examples)


def _unit_rows(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, np.float64)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def associations(targets: np.ndarray, attr_a: np.ndarray, attr_b: np.ndarray) -> np.ndarray:
    """s(w, A, B) for every row w of targets [n, hidden], in float64: [n]."""
    w = _unit_rows(targets)
    return (w @ _unit_rows(attr_a).T).mean(axis=1) - (w @ _unit_rows(attr_b).T).mean(axis=1)


def effect_size(s_x: np.ndarray, s_y: np.ndarray) -> float:
    """Caliskan's effect size from the associations of X's and Y's items (see the docstring)."""
    both = np.concatenate([s_x, s_y])
    return float((np.mean(s_x) - np.mean(s_y)) / np.std(both, ddof=1))


class PValue(NamedTuple):
    """The permutation test's one-sided p-value, how it was found ("exact" or "sampled") and over
    how many partitions (all C(2n, n), or the `permutations` counted)."""
    p_value: float
    method: str
    partitions: int


def p_value(s_x: np.ndarray, s_y: np.ndarray, permutations: int, seed: int) -> PValue:
    """The permutation test of the module docstring on the associations of X and Y."""
    s = np.concatenate([s_x, s_y])
    n = len(s_x)
    total = math.comb(2 * n, n)
    # The observed statistic summed as every partition's is (a row of indices, in order), so the
    # observed partition compares equal to itself.
    observed = s[np.arange(n)[None]].sum(axis=1)[0]
    if total <= permutations:
        at_least = 0
        combinations = itertools.combinations(range(2 * n), n)
        while chunk := list(itertools.islice(combinations, _CHUNK)):
            at_least += int(np.count_nonzero(s[np.array(chunk)].sum(axis=1) >= observed))
        return PValue(at_least / total, "exact", total)
    rng = np.random.default_rng(seed)
    at_least, drawn = 1, 1  # the observed partition, counted as sent-bias counts it
    while drawn < permutations:
        rows = min(_CHUNK, permutations - drawn)
        halves = rng.permuted(np.tile(np.arange(2 * n), (rows, 1)), axis=1)[:, :n]
        halves.sort(axis=1)
        at_least += int(np.count_nonzero(s[halves].sum(axis=1) >= observed))
        drawn += rows
    return PValue(at_least / permutations, "sampled", permutations)


def run_test(test: SeatTest, vector_of: Callable[[str], np.ndarray], permutations: int,
             seed: int) -> dict:
    """One test's results: the effect size, p-value, how the p-value was found, the categories
    and sizes; `vector_of(text)` is the encoder's vector of a text."""
    sets = {s: np.stack([vector_of(t) for t in test.examples[s]]) for s in SETS}
    s_x = associations(sets["targ1"], sets["attr1"], sets["attr2"])
    s_y = associations(sets["targ2"], sets["attr1"], sets["attr2"])
    p = p_value(s_x, s_y, permutations, seed)
    return {"test": test.name, "file": test.path,
            "categories": dict(test.categories),
            "sizes": {s: len(test.examples[s]) for s in SETS},
            "effect_size": effect_size(s_x, s_y), "p_value": p.p_value,
            "p_value_method": p.method, "partitions": p.partitions}


def markdown(results: list[dict]) -> str:
    """The tests as a Markdown table: X/Y vs A/B, sizes, effect size, p-value and how it was
    found.

    Example:
        >>> print(markdown([{"test": "t", "categories": {"targ1": "X", "targ2": "Y",
        ...     "attr1": "A", "attr2": "B"}, "sizes": {"targ1": 8, "targ2": 8, "attr1": 8,
        ...     "attr2": 8}, "effect_size": 1.2345, "p_value": 0.0012,
        ...     "p_value_method": "exact", "partitions": 12870}]))
        | test | targets (X / Y) | attributes (A / B) | sizes | effect size | p | p from |
        |---|---|---|---|---|---|---|
        | t | X / Y | A / B | 8/8/8/8 | 1.23 | 1.2e-03 | exact, 12870 partitions |
    """
    lines = ["| test | targets (X / Y) | attributes (A / B) | sizes | effect size | p | p from |",
             "|---|---|---|---|---|---|---|"]
    for r in results:
        c, sizes = r["categories"], "/".join(str(r["sizes"][s]) for s in SETS)
        lines.append(f"| {r['test']} | {c['targ1']} / {c['targ2']} | {c['attr1']} / "
                     f"{c['attr2']} | {sizes} | {r['effect_size']:.2f} | {r['p_value']:.1e} | "
                     f"{r['p_value_method']}, {r['partitions']} partitions |")
    return "\n".join(lines)
