"""The orderings the papers claim, checked on our seeds: holds, does not hold, or within the seeds'
spread.

    Compare(cells, relation, source)    mean(cells[0]) rel mean(cells[1]) rel ... where a cell
                                        is (row, column) and rel is "<" or ">"
    chain(column, rows, relation, ...)  a Compare of several rows on one column
    AtChance(row, column, chance)       the row's mean is chance (ALBERT: an NSP-trained head
                                        "ends up picking random baseline performance" on SOP)
    LargerGap(high, low, wider, narrower)
                                        mean(high) - mean(low) is larger on `wider` than on
                                        `narrower` (the BERT paper's "100% [MASK] hurts the
                                        feature-based approach more than fine-tuning")
    check(ordering, table, names) -> Verdict

The test, for each step a rel b of a claim: the gap d = mean(b) - mean(a) (for "<"; the other
way for ">") against two standard errors of the difference of the two means,
se = sqrt(s_a^2 / n_a + s_b^2 / n_b) (s the seeds' sample standard deviation, n their number):

    d > 2 se              the step holds
    d < -2 se             the step does not hold (the other order is the one the seeds show)
    otherwise             within the seeds' spread: these seeds cannot tell

A claim holds when every step holds, does not hold when any step does not, and is within the
seeds' spread otherwise. With one seed there is no spread: the means decide alone, and the line
says so. AtChance holds when the mean is within two standard errors of the mean (s / sqrt(n)) of
chance, or within CHANCE_POINTS of it (ALBERT reads 52.0 as chance). A verdict is written as it
comes out, never tuned away; two standard errors is a lenient test at three seeds (about 90%
two-sided for a t with 2-4 degrees of freedom), which the report says.

Example:
    >>> from official.ablation.summary import Summary
    >>> table = {"ltr": {"pos": Summary(71.0, 0.5, 3)}, "mlm": {"pos": Summary(78.0, 1.0, 3)}}
    >>> names = {"ltr": "LTR", "mlm": "MLM"}
    >>> check(chain("pos", ("ltr", "mlm"), "<"), table, names).line()
    'LTR < MLM on UPOS: holds (7.0 > 2 SE 1.3), 71.0 +/- 0.5 vs 78.0 +/- 1.0'
"""

from __future__ import annotations

import dataclasses
import math
from typing import Mapping

from official.ablation.columns import column
from official.ablation.summary import Summary, format_summary

HOLDS, FAILS, WITHIN, UNMEASURED = ("holds", "does not hold", "within the seeds' spread",
                                    "not measured")
CHANCE_POINTS = 3.0
_SIGN = {"<": 1.0, ">": -1.0}

Cell = tuple[str, str]  # (row id, column key)
Table = Mapping[str, Mapping[str, Summary]]  # row id -> column key -> its summary over seeds


@dataclasses.dataclass(frozen=True)
class Compare:
    """mean(cells[0]) `relation` mean(cells[1]) ...; `source` is whose claim it is ("BERT
    Table 5"); `paper` the cells of the papers' table (official/ablation/paper.py: paper row
    id, column) whose figures stand beside ours, when the paper has them."""
    cells: tuple[Cell, ...]
    relation: str
    source: str = ""
    paper: tuple[Cell, ...] = ()

    def __post_init__(self):
        if self.relation not in _SIGN:
            raise ValueError(f"relation must be one of {', '.join(_SIGN)}, got "
                             f"{self.relation!r}")
        if len(self.cells) < 2:
            raise ValueError(f"an ordering needs two cells or more, got {self.cells}")


def chain(column_key: str, rows: tuple[str, ...], relation: str, source: str = "",
          paper: tuple[Cell, ...] | None = None, paper_column: str | None = None) -> Compare:
    """Rows compared on one column; the paper's cells default to the same rows on
    `paper_column` (our column, unless ours stands in for another of the paper's)."""
    if paper is None:
        paper = tuple((row, paper_column or column_key) for row in rows)
    return Compare(tuple((row, column_key) for row in rows), relation, source, paper)


@dataclasses.dataclass(frozen=True)
class AtChance:
    """The row's mean on `column` is chance (`chance`, in the column's units)."""
    row: str
    column: str
    chance: float = 50.0
    source: str = ""
    paper: tuple[Cell, ...] = ()


@dataclasses.dataclass(frozen=True)
class LargerGap:
    """mean(high) - mean(low) on `wider` is larger than on `narrower`."""
    high: str
    low: str
    wider: str
    narrower: str
    source: str = ""

    @property
    def paper(self) -> tuple[Cell, ...]:
        return tuple((row, key) for key in (self.wider, self.narrower)
                     for row in (self.high, self.low))


Ordering = Compare | AtChance | LargerGap


@dataclasses.dataclass(frozen=True)
class Verdict:
    """An ordering checked: `claim` in words, `outcome` (HOLDS, FAILS, WITHIN or UNMEASURED),
    `evidence` (the test and the numbers, or what was missing)."""
    claim: str
    outcome: str
    evidence: str

    @property
    def holds(self) -> bool | None:
        """True or False when the seeds decide, None when they cannot or nothing was run."""
        return {HOLDS: True, FAILS: False}.get(self.outcome)

    def line(self) -> str:
        """"<claim>: <outcome> (<test>), <numbers>" or "<claim>: not measured (...)"."""
        if self.outcome == UNMEASURED:
            return f"{self.claim}: {self.outcome} ({self.evidence})"
        return f"{self.claim}: {self.outcome}{self.evidence}"


def columns_of(ordering: Ordering) -> tuple[str, ...]:
    """The columns of ours an ordering reads."""
    if isinstance(ordering, Compare):
        return tuple(dict.fromkeys(key for _, key in ordering.cells))
    if isinstance(ordering, AtChance):
        return (ordering.column,)
    return ordering.wider, ordering.narrower


def _se_of_difference(a: Summary, b: Summary) -> float | None:
    if a.std is None or b.std is None:
        return None
    return math.sqrt(a.std ** 2 / a.n + b.std ** 2 / b.n)


def _step(gap: float, se: float | None) -> str:
    if se is None:
        return HOLDS if gap > 0 else FAILS
    return HOLDS if gap > 2 * se else FAILS if gap < -2 * se else WITHIN


def _combined(outcomes: list[str]) -> str:
    if FAILS in outcomes:
        return FAILS
    return HOLDS if all(o == HOLDS for o in outcomes) else WITHIN


def _test(gaps: list[float], ses: list[float | None], digits: int) -> str:
    """" (7.0 > 2 SE 1.3)" per step, or " (one seed: means alone)"."""
    if any(se is None for se in ses):
        return " (one seed: the means alone)"
    parts = []
    for gap, se in zip(gaps, ses):
        sign = ">" if gap > 2 * se else "<" if gap < -2 * se else "within"
        word = f"{gap:.{digits}f} {sign} 2 SE {2 * se:.{digits}f}" if sign != "within" else \
            f"{gap:.{digits}f} within 2 SE {2 * se:.{digits}f}"
        parts.append(word)
    return f" ({'; '.join(parts)})"


def _cell_name(cell: Cell, names: Mapping[str, str], one_column: bool) -> str:
    row, key = cell
    return names[row] if one_column else f"{names[row]} ({column(key).title})"


def check(ordering: Ordering, table: Table, names: Mapping[str, str]) -> Verdict:
    """The verdict of `ordering` on `table` (row id -> column -> Summary); `names` are the rows'
    names in words."""
    if isinstance(ordering, LargerGap):
        return _check_gap(ordering, table, names)
    if isinstance(ordering, AtChance):
        return _check_chance(ordering, table, names)
    keys = {key for _, key in ordering.cells}
    one_column = len(keys) == 1
    claim = f" {ordering.relation} ".join(_cell_name(c, names, one_column)
                                         for c in ordering.cells)
    if one_column:
        claim += f" on {column(next(iter(keys))).title}"
    missing = [_cell_name(c, names, False) for c in ordering.cells
               if c[1] not in table.get(c[0], {})]
    if missing:
        return Verdict(claim, UNMEASURED, f"no {', '.join(missing)}")
    summaries = [table[row][key] for row, key in ordering.cells]
    sign = _SIGN[ordering.relation]
    gaps = [sign * (b.mean - a.mean) for a, b in zip(summaries, summaries[1:])]
    ses = [_se_of_difference(a, b) for a, b in zip(summaries, summaries[1:])]
    outcome = _combined([_step(g, se) for g, se in zip(gaps, ses)])
    digits = max(column(key).digits for key in keys)
    numbers = " vs ".join(format_summary(s, column(key).digits, "+/-")
                          for s, (_, key) in zip(summaries, ordering.cells))
    return Verdict(claim, outcome, f"{_test(gaps, ses, digits)}, {numbers}")


def _check_chance(ordering: AtChance, table: Table, names: Mapping[str, str]) -> Verdict:
    title = column(ordering.column)
    claim = f"{names[ordering.row]} is at chance ({ordering.chance:g}) on {title.title}"
    found = table.get(ordering.row, {}).get(ordering.column)
    if found is None:
        return Verdict(claim, UNMEASURED, f"no {title.title} for {names[ordering.row]}")
    distance = abs(found.mean - ordering.chance)
    se = None if found.std is None else found.std / math.sqrt(found.n)
    near = distance <= CHANCE_POINTS or (se is not None and distance <= 2 * se)
    test = (f" ({distance:.{title.digits}f} from chance; "
            + ("one seed" if se is None else f"2 SE {2 * se:.{title.digits}f}")
            + f", or {CHANCE_POINTS:g} points)")
    return Verdict(claim, HOLDS if near else FAILS,
                   f"{test}, {format_summary(found, title.digits, '+/-')}")


def _check_gap(gap: LargerGap, table: Table, names: Mapping[str, str]) -> Verdict:
    wider, narrower = column(gap.wider), column(gap.narrower)
    claim = (f"{names[gap.high]} - {names[gap.low]} is larger on {wider.title} than on "
             f"{narrower.title}")
    missing = [f"{col.title} of {names[row]}" for col in (wider, narrower)
               for row in (gap.high, gap.low) if col.key not in table.get(row, {})]
    if missing:
        return Verdict(claim, UNMEASURED, f"no {', '.join(missing)}")
    cells = [table[row][col.key] for col in (wider, narrower) for row in (gap.high, gap.low)]
    gaps = [cells[0].mean - cells[1].mean, cells[2].mean - cells[3].mean]
    se = (None if any(s.std is None for s in cells)
          else math.sqrt(sum(s.std ** 2 / s.n for s in cells)))
    digits = max(wider.digits, narrower.digits)
    outcome = _step(gaps[0] - gaps[1], se)
    return Verdict(claim, outcome, f"{_test([gaps[0] - gaps[1]], [se], digits)}, "
                                   f"{gaps[0]:.{digits}f} vs {gaps[1]:.{digits}f}")
