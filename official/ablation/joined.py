"""Earlier runs of a study joined into this run's report: rows and seeds run on other machines or
at other times, each run's results.json, so that a study too long for one sitting is run in
pieces and reported as one.

    python -m run_scripts.run_ablation_study --study=objectives --rows=sop --first_seed=3 \\
        --seeds=1 --output_dir=sop3 --join=runs/bert/results.json,runs/sop12/results.json

    read(path, study, experiment) -> Earlier
                        one results.json, checked: the same study, the same settings where
                        they shape the numbers (`AblationSettings.experiment`), every row's
                        config and flags this study's
    check_apart(earlier, own_runs)
                        no row and seed measured twice (in two files, or in a file and by
                        this run)
    join(own, earlier) -> Pieces
                        this run's numbers with the earlier runs': values per row, column and
                        seed, their sources (absolute), each row's seconds, the references
                        per seed (the same seed's must agree: the same held-out text)

Each row's summary is then over the seeds it has (official/ablation/results.py's `summarised`),
so a row may have fewer seeds than another; the report's wall times say how many.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from typing import Any, Iterable, Mapping, Sequence

from official.ablation.results import Source
from official.ablation.studies import Study

# (row, column, seed) -> number; the same keyed by reference name for the references.
Values = dict[str, dict[str, dict[int, float]]]


@dataclasses.dataclass(frozen=True)
class Pieces:
    """Numbers from one or more runs: `values[row][column][seed]`, `sources[row, seed,
    column]`, `seconds[row]`, `reference_values[name][column][seed]` and the constant
    `chance[column]` (the majority class or 50, not measured per seed)."""
    values: Values
    sources: dict[tuple[str, int, str], Source]
    seconds: dict[str, float]
    reference_values: Values
    chance: dict[str, float]
    measured: tuple[str, ...]


@dataclasses.dataclass(frozen=True)
class Earlier:
    """One earlier run: where its results.json is, and its numbers."""
    path: str
    pieces: Pieces

    def runs(self) -> set[tuple[str, int]]:
        """Its (row, seed) pairs."""
        return {(row, seed) for row, per_column in self.pieces.values.items()
                for by_seed in per_column.values() for seed in by_seed}


def _fail(path: str, what: str) -> ValueError:
    return ValueError(f"--join: {path}: {what}")


def _numbers(path: str, where: str, by_seed: Any) -> dict[int, float]:
    """{"1": 61.2, ...} -> {1: 61.2, ...}, or a one-line ValueError naming `where`."""
    if not isinstance(by_seed, dict):
        raise _fail(path, f"{where} is not a mapping of seeds to numbers")
    found = {}
    for seed, value in by_seed.items():
        if not (isinstance(seed, str) and seed.isdigit()) or isinstance(value, bool) \
                or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise _fail(path, f"{where}: seed {seed!r} = {value!r} is not a seed's number")
        found[int(seed)] = float(value)
    return found


def read(path: str, study: Study, experiment: Mapping[str, Any]) -> Earlier:
    """The results.json at `path` (see the module docstring).

    Raises:
      ValueError: one line naming the file and what is wrong.
    """
    try:
        with open(path, encoding="utf-8") as f:
            found = json.load(f)
    except FileNotFoundError:
        raise _fail(path, "no such file") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise _fail(path, f"not a results.json of run_ablation_study ({e})") from None
    if not isinstance(found, dict) or not isinstance(found.get("rows"), list) \
            or "study" not in found:
        raise _fail(path, "not a results.json of run_ablation_study (no study and rows)")
    if found["study"] != study.name:
        raise _fail(path, f"a {found['study']} study, not {study.name}")
    theirs, ours = found.get("experiment"), json.loads(json.dumps(dict(experiment)))
    if not isinstance(theirs, dict):
        raise _fail(path, "says nothing of its settings (made before runs could be joined)")
    for name in sorted(set(ours) | set(theirs)):
        if theirs.get(name) != ours.get(name):
            raise _fail(path, f"made with --{name}={theirs.get(name)}, this run has "
                              f"--{name}={ours.get(name)}: only runs of the same settings join")
    folder = os.path.dirname(os.path.abspath(path))
    values, sources, seconds = {}, {}, {}
    for row in found["rows"]:
        row_id = row.get("id") if isinstance(row, dict) else None
        if row_id not in {r.id for r in study.rows}:
            raise _fail(path, f"row {row_id!r} is not a row of the {study.name} study")
        mine = study.row(row_id)
        if (row.get("config"), row.get("pretraining_flags"), row.get("finetuning_flags")) != \
                (mine.config.to_dict(), list(mine.pretraining_flags),
                 list(mine.finetuning_flags)):
            raise _fail(path, f"row {row_id}: another config or other flags than this run's "
                              "(--size or the vocab differ)")
        values[row_id] = {key: _numbers(path, f"row {row_id}, {key}", by_seed)
                          for key, by_seed in (row.get("values") or {}).items()}
        for key, by_seed in (row.get("sources") or {}).items():
            for seed, source in by_seed.items():
                if not (seed.isdigit() and isinstance(source, dict) and all(
                        isinstance(source.get(name), str)
                        for name in ("path", "field", "transform"))):
                    raise _fail(path, f"row {row_id}, {key}: seed {seed!r}'s source is not a "
                                      "path, field and transform")
                sources[row_id, int(seed), key] = Source(
                    os.path.normpath(os.path.join(folder, source["path"])), source["field"],
                    source["transform"])
        if row.get("seconds") is not None:
            seconds[row_id] = float(row["seconds"])
    reference_values = {name: {key: _numbers(path, f"{name} reference, {key}", by_seed)
                               for key, by_seed in by_column.items()}
                        for name, by_column in (found.get("reference_values") or {}).items()}
    chance = {key: float(summary["mean"])
              for key, summary in (found.get("references") or {}).get("chance", {}).items()}
    return Earlier(path, Pieces(values, sources, seconds, reference_values, chance,
                                tuple(found.get("measured") or ())))


def check_apart(earlier: Sequence[Earlier], own_runs: Iterable[tuple[str, int]]) -> None:
    """Refuses a row and seed that two of the runs measure.

    Raises:
      ValueError: naming the row, the seed and both runs.
    """
    seen = {run: "this run (--rows, --first_seed, --seeds)" for run in own_runs}
    for one in earlier:
        for row, seed in sorted(one.runs()):
            if (row, seed) in seen:
                raise _fail(one.path, f"row {row}, seed {seed} is measured by {seen[row, seed]} "
                                      "too: each row and seed is joined from one run")
            seen[row, seed] = one.path


def _joined_references(own: Values, earlier: Sequence[Earlier]) -> Values:
    """The references per seed from every run; a seed's number must be the same in each (the
    same held-out text and settings)."""
    joined: Values = {name: {key: dict(by_seed) for key, by_seed in by_column.items()}
                      for name, by_column in own.items()}
    for one in earlier:
        for name, by_column in one.pieces.reference_values.items():
            for key, by_seed in by_column.items():
                kept = joined.setdefault(name, {}).setdefault(key, {})
                for seed, value in by_seed.items():
                    if seed in kept and not math.isclose(kept[seed], value, rel_tol=1e-9):
                        raise _fail(one.path, f"seed {seed}'s {name} {key} is {value}, another "
                                              f"run's {kept[seed]}: not the same held-out text")
                    kept[seed] = value
    return joined


def join(own: Pieces, earlier: Sequence[Earlier]) -> Pieces:
    """`own` with every earlier run's rows and seeds (`check_apart` first)."""
    values: Values = {row: {key: dict(by_seed) for key, by_seed in per_column.items()}
                      for row, per_column in own.values.items()}
    sources, seconds = dict(own.sources), dict(own.seconds)
    chance, measured = {}, list(own.measured)
    for one in earlier:
        for row, per_column in one.pieces.values.items():
            for key, by_seed in per_column.items():
                values.setdefault(row, {}).setdefault(key, {}).update(by_seed)
        sources.update(one.pieces.sources)
        for row, spent in one.pieces.seconds.items():
            seconds[row] = seconds.get(row, 0.0) + spent
        chance.update(one.pieces.chance)
        measured += [key for key in one.pieces.measured if key not in measured]
    chance.update(own.chance)
    return Pieces(values, sources, seconds,
                  _joined_references(own.reference_values, earlier), chance, tuple(measured))
