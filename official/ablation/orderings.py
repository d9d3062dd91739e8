"""The orderings a paper's table shows, checked on the means of ours: "holds" or "does not hold".

    Chain(column, rows, relation)      mean(rows[0]) rel mean(rows[1]) rel ... on `column`
                                       (relation "<", "<=", ">" or ">=")
    LargerGap(high, low, wider, narrower)
                                       mean(high) - mean(low) is larger on `wider` than on
                                       `narrower` (the BERT paper's "100% [MASK] hurts the
                                       feature-based approach more than fine-tuning")
    check(ordering, table, names)  ->  Verdict: the claim in words, holds (None: a row or the
                                       column was not measured), the numbers

A verdict compares means and nothing else: it is written as it comes out, never tuned away.
When a step of the ordering is smaller than the larger standard deviation of its two rows the
line says so: at these seeds it is a tie as much as an ordering.

Example:
    >>> from official.ablation.summary import Summary
    >>> table = {"ltr": {"mrpc": Summary(71.0, 2.0, 3)}, "mlm": {"mrpc": Summary(78.0, 1.0, 3)}}
    >>> check(Chain("mrpc", ("ltr", "mlm"), "<"), table, {"ltr": "LTR", "mlm": "MLM"}).line()
    'LTR < MLM on MRPC: holds, 71.0 +/- 2.0 vs 78.0 +/- 1.0'
"""

from __future__ import annotations

import dataclasses
import operator
from typing import Mapping

from official.ablation.columns import column
from official.ablation.summary import Summary, format_summary

RELATIONS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}

Table = Mapping[str, Mapping[str, Summary]]  # row id -> column key -> its summary over seeds


@dataclasses.dataclass(frozen=True)
class Chain:
    """mean(rows[0]) `relation` mean(rows[1]) `relation` ... on `column`."""
    column: str
    rows: tuple[str, ...]
    relation: str

    def __post_init__(self):
        if self.relation not in RELATIONS:
            raise ValueError(f"relation must be one of {', '.join(RELATIONS)}, got "
                             f"{self.relation!r}")
        if len(self.rows) < 2:
            raise ValueError(f"an ordering needs two rows or more, got {self.rows}")


@dataclasses.dataclass(frozen=True)
class LargerGap:
    """mean(high) - mean(low) on `wider` is larger than on `narrower`."""
    high: str
    low: str
    wider: str
    narrower: str


Ordering = Chain | LargerGap


@dataclasses.dataclass(frozen=True)
class Verdict:
    """An ordering checked: `claim` in words, `holds` (None: not measured), `evidence` (the
    numbers, or what was missing)."""
    claim: str
    holds: bool | None
    evidence: str

    def line(self) -> str:
        """"<claim>: holds, <numbers>", "... does not hold, ..." or "... not measured (...)"."""
        said = {True: "holds", False: "does not hold", None: "not measured"}[self.holds]
        if self.holds is None:
            return f"{self.claim}: {said} ({self.evidence})"
        return f"{self.claim}: {said}, {self.evidence}"


def check(ordering: Ordering, table: Table, names: Mapping[str, str]) -> Verdict:
    """The verdict of `ordering` on `table` (row id -> column -> Summary); `names` are the rows'
    names in words."""
    if isinstance(ordering, LargerGap):
        return _check_gap(ordering, table, names)
    title = column(ordering.column)
    claim = (f" {ordering.relation} ".join(names[row] for row in ordering.rows)
             + f" on {title.title}")
    missing = [names[row] for row in ordering.rows if ordering.column not in table.get(row, {})]
    if missing:
        return Verdict(claim, None, f"no {title.title} for {', '.join(missing)}")
    summaries = [table[row][ordering.column] for row in ordering.rows]
    relation = RELATIONS[ordering.relation]
    holds = all(relation(a.mean, b.mean) for a, b in zip(summaries, summaries[1:]))
    evidence = " vs ".join(format_summary(s, title.digits, "+/-") for s in summaries)
    close = [f"{names[a]} and {names[b]}" for (a, sa), (b, sb) in
             zip(zip(ordering.rows, summaries), zip(ordering.rows[1:], summaries[1:]))
             if _within_spread(sa, sb)]
    if close:
        evidence += (f" (the gap between {'; '.join(close)} is within the seeds' standard "
                     "deviation)")
    return Verdict(claim, holds, evidence)


def _within_spread(a: Summary, b: Summary) -> bool:
    spreads = [s.std for s in (a, b) if s.std is not None]
    return bool(spreads) and abs(a.mean - b.mean) <= max(spreads)


def _check_gap(gap: LargerGap, table: Table, names: Mapping[str, str]) -> Verdict:
    wider, narrower = column(gap.wider), column(gap.narrower)
    claim = (f"{names[gap.high]} - {names[gap.low]} is larger on {wider.title} than on "
             f"{narrower.title}")
    missing = [f"{col.title} of {names[row]}" for col in (wider, narrower)
               for row in (gap.high, gap.low) if col.key not in table.get(row, {})]
    if missing:
        return Verdict(claim, None, f"no {', '.join(missing)}")
    gaps = [table[gap.high][col.key].mean - table[gap.low][col.key].mean
            for col in (wider, narrower)]
    digits = max(wider.digits, narrower.digits)
    return Verdict(claim, gaps[0] > gaps[1], f"{gaps[0]:.{digits}f} vs {gaps[1]:.{digits}f}")
