"""A study's numbers read back from what its runs wrote, per row, seed and column, and summarised.

    Source(path, field, transform)    where a number is read (run_scripts/ablation/plan.py
                                      names one per row, seed and column)
    read_value(source) -> float       one number: a field
                                      of an eval_results.txt, or of a JSON file by its dotted
                                      path ("overall.accuracy", "layers.0.test.accuracy")
    collect(study, rows, seeds, sources, columns) -> values[row][column][seed]
                                      each seed's number
    summarised(values) -> Results     .values, and .table[row][column]: each row and column's
                                      Summary over the seeds it has (official/ablation/
                                      summary.py; rows and seeds joined from several runs:
                                      official/ablation/joined.py)
    reference_values(seeds, references) -> {column: {seed: number}}
                                      the unigram baseline's numbers

Parameters (column "params", millions) are counted from each row's config
(official/ablation/parameters.py), the same for every seed; a "<column>_per_m" number is that
seed's score over them.
"""

from __future__ import annotations

import dataclasses
import json
import math
from typing import Mapping, Sequence

from official.ablation.columns import PER_MILLION
from official.ablation.parameters import count_parameters
from official.ablation.studies import Study
from official.ablation.summary import Summary, summarize

# The pretraining records' layout every study shares: NUM_SHARDS shards, HELD_OUT_SHARD never
# trains (one digit of a glob: shards 1 to 9 train).
NUM_SHARDS = 10
HELD_OUT_SHARD = 0


@dataclasses.dataclass(frozen=True)
class Source:
    """A number's origin: `field` of the file at `path` ("key = value" lines, or JSON when the
    path ends in .json: a dotted path, list indices as numbers), as `transform` makes it:
    "percent" (x 100), "as_is", or "exp" (a loss's perplexity)."""
    path: str
    field: str
    transform: str


_TRANSFORMS = {"percent": lambda v: 100.0 * v, "as_is": lambda v: v, "exp": math.exp}


def read_fields(path: str) -> dict[str, str]:
    """The `key = value` lines of an eval_results.txt (the original's format).

    Raises:
      ValueError: a missing file, or a line of another shape, naming the file.
    """
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except FileNotFoundError:
        raise ValueError(f"{path}: no such file (the stage that writes it did not)") from None
    fields = {}
    for number, line in enumerate(lines, start=1):
        key, sep, value = line.partition(" = ")
        if not sep:
            raise ValueError(f"{path}:{number}: not a `key = value` line")
        fields[key] = value
    return fields


def _json_field(path: str, field: str):
    """The value at `field` (a dotted path; a list's index as a number) of a JSON file, or
    None."""
    try:
        with open(path, encoding="utf-8") as f:
            value = json.load(f)
    except FileNotFoundError:
        raise ValueError(f"{path}: no such file (the stage that writes it did not)") from None
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise ValueError(f"{path}: not JSON") from None
    for part in field.split("."):
        if isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        elif isinstance(value, dict) and part in value:
            value = value[part]
        else:
            return None
    return value


def read_value(source: Source) -> float:
    """The number `source` names.

    Raises:
      ValueError: the file or its field missing, or not a number.
    """
    if source.path.endswith(".json"):
        value = _json_field(source.path, source.field)
    else:
        value = read_fields(source.path).get(source.field)
    if value is None:
        raise ValueError(f"{source.path}: no {source.field}")
    try:
        return _TRANSFORMS[source.transform](float(value))
    except (TypeError, ValueError):
        raise ValueError(f"{source.path}: {source.field} = {value} is not a number") from None


@dataclasses.dataclass(frozen=True)
class Results:
    """values[row][column][seed] and table[row][column] (the Summary over seeds)."""
    values: dict[str, dict[str, dict[int, float]]]
    table: dict[str, dict[str, Summary]]


def collect(study: Study, rows: Sequence[str], seeds: Sequence[int],
            sources: Mapping[tuple[str, int, str], Source],
            columns: Sequence[str]) -> dict[str, dict[str, dict[int, float]]]:
    """Every measured column of every row and seed: values[row][column][seed] (see the module
    docstring)."""
    values: dict[str, dict[str, dict[int, float]]] = {}
    for row in rows:
        params = count_parameters(study.row(row).config) / 1e6
        per_seed: dict[str, dict[int, float]] = {}
        for key in columns:
            if key == "params":
                per_seed[key] = {seed: params for seed in seeds}
            elif not key.endswith(PER_MILLION) and all((row, seed, key) in sources
                                                       for seed in seeds):
                per_seed[key] = {seed: read_value(sources[row, seed, key]) for seed in seeds}
        for key in columns:
            if key.endswith(PER_MILLION) and key[:-len(PER_MILLION)] in per_seed:
                scores = per_seed[key[:-len(PER_MILLION)]]
                per_seed[key] = {seed: score / params for seed, score in scores.items()}
        values[row] = per_seed
    return values


def summarised(values: Mapping[str, Mapping[str, Mapping[int, float]]]) -> Results:
    """`values` with each row and column summarised over the seeds it has (in seed order)."""
    plain = {row: {key: dict(sorted(by_seed.items())) for key, by_seed in per_column.items()}
             for row, per_column in values.items()}
    table = {row: {key: summarize(list(by_seed.values())) for key, by_seed in per_column.items()}
             for row, per_column in plain.items()}
    return Results(plain, table)


def reference_values(seeds: Sequence[int], references: Mapping[tuple[int, str], Source]
                     ) -> dict[str, dict[int, float]]:
    """{column: {seed: number}} of the reference numbers (the unigram baseline's)."""
    columns = dict.fromkeys(key for _, key in references)
    return {key: {seed: read_value(references[seed, key]) for seed in seeds} for key in columns}
