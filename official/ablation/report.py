"""A study's results written for a reader: REPORT.md and results.json, each written atomically.

    Outcome         what a finished study is: its rows, seeds, columns, numbers and their
                    sources, and its settings in words
    table(outcome)  the paper-shaped table: each of our rows (mean ± sample standard deviation
                    over the seeds; "n/a" with one seed; "—" where not run) followed by the
                    paper's row it stands beside; the paper's other rows after them
    verdicts(outcome)
                    each expected ordering checked on our means (official/ablation/
                    orderings.py), with the paper's own figures beside where it has them
    markdown(outcome), to_json(outcome), write(outcome)

Example of a table:
    >>> from official.ablation.studies import study
    >>> from official.ablation.results import Results
    >>> from official.ablation.summary import Summary
    >>> objectives = study("objectives", "tiny", 100)
    >>> outcome = Outcome(objectives, ("bert",), (1,), ("mrpc",),
    ...                   Results({}, {"bert": {"mrpc": Summary(71.25, None, 1)}}), {}, [], "out")
    >>> print(table(outcome))
    | row | MNLI-m | QNLI | MRPC | SST-2 | SQuAD F1 |
    |---|---:|---:|---:|---:|---:|
    | BERT (MLM+NSP) (ours) | — | — | 71.2 ± n/a | — | — |
    | BERT-Base (MLM+NSP) (paper) | 84.4 | 88.4 | 86.7 | 92.7 | 88.5 |
    | No NSP (paper) | 83.9 | 84.9 | 86.5 | 92.6 | 87.9 |
    | LTR & No NSP (paper) | 82.1 | 84.3 | 77.5 | 92.1 | 77.8 |
    | + BiLSTM (paper; not built here) | 82.1 | 84.1 | 75.7 | 91.6 | 84.9 |
"""

from __future__ import annotations

import dataclasses
import json
import os
from typing import Mapping

from official.ablation.columns import column
from official.ablation.orderings import Chain, LargerGap, Ordering, Verdict, check
from official.ablation.plan import HELD_OUT_SHARD, NUM_SHARDS, Source
from official.ablation.results import Results
from official.ablation.settings import AblationSettings
from official.ablation.studies import Study
from official.ablation.summary import format_summary
from official.atomic_files import open_atomically

REPORT_FILE, RESULTS_FILE = "REPORT.md", "results.json"
NOT_RUN = "—"
COUNTED = ("params",)  # the same for every seed: written without a spread


@dataclasses.dataclass(frozen=True)
class Outcome:
    """A finished study.

    Attributes:
      study: the study.
      rows: our rows' ids, in order; seeds: the seeds.
      measured: the columns our runs filled.
      results: their numbers (official/ablation/results.py).
      sources: (row, seed, column) -> where a number was read (columns counted, not read,
        have none).
      settings: (setting, value) pairs for the report's settings table.
      output_dir: where the runs wrote (sources are written relative to it).
    """
    study: Study
    rows: tuple[str, ...]
    seeds: tuple[int, ...]
    measured: tuple[str, ...]
    results: Results
    sources: Mapping[tuple[str, int, str], Source]
    settings: list[tuple[str, str]]
    output_dir: str

    @property
    def columns(self) -> tuple[str, ...]:
        """The table's: the paper's, then ours it lacks."""
        return self.study.columns + tuple(k for k in self.measured
                                          if k not in self.study.columns)

    @property
    def names(self) -> dict[str, str]:
        return {row.id: row.name for row in self.study.rows}


def _cell(value: float | None, key: str) -> str:
    return "" if value is None else f"{value:.{column(key).digits}f}"


def _paper_label(row) -> str:
    note = f"; {row.note.split(':')[0]}" if row.note else ""
    return f"{row.label} (paper{note})"


def table(outcome: Outcome) -> str:
    """The Markdown table (see the module docstring)."""
    columns = outcome.columns
    lines = ["| row | " + " | ".join(column(k).title for k in columns) + " |",
             "|---|" + "---:|" * len(columns)]
    paper_rows = outcome.study.paper.rows
    for row_id in outcome.rows:
        summaries = outcome.results.table.get(row_id, {})
        cells = [NOT_RUN if k not in summaries else _cell(summaries[k].mean, k)
                 if k in COUNTED else format_summary(summaries[k], column(k).digits)
                 for k in columns]
        lines.append(f"| {outcome.names[row_id]} (ours) | " + " | ".join(cells) + " |")
        for paper_row in paper_rows:
            if paper_row.ours == row_id:
                lines.append(f"| {_paper_label(paper_row)} | " + " | ".join(
                    _cell(paper_row.values.get(k), k) for k in columns) + " |")
    for paper_row in paper_rows:
        if paper_row.ours not in outcome.rows:
            lines.append(f"| {_paper_label(paper_row)} | " + " | ".join(
                _cell(paper_row.values.get(k), k) for k in columns) + " |")
    return "\n".join(lines)


def _columns_of(ordering: Ordering) -> tuple[str, ...]:
    return (ordering.column,) if isinstance(ordering, Chain) else (ordering.wider,
                                                                    ordering.narrower)


def _paper_evidence(ordering: Ordering, study: Study) -> str:
    """The paper's own figures for an ordering ("" when it lacks a row or column)."""
    values = {row.id: row.values for row in study.paper.rows}
    if isinstance(ordering, LargerGap):
        keys = (ordering.wider, ordering.narrower)
        if not all(k in values.get(r, {}) for r in (ordering.high, ordering.low) for k in keys):
            return ""
        gaps = [values[ordering.high][k] - values[ordering.low][k] for k in keys]
        return f"{gaps[0]:.1f} vs {gaps[1]:.1f}"
    if not all(ordering.column in values.get(r, {}) for r in ordering.rows):
        return ""
    return " vs ".join(_cell(values[r][ordering.column], ordering.column)
                       for r in ordering.rows)


def verdicts(outcome: Outcome) -> tuple[list[Verdict], list[str]]:
    """(the verdicts of the orderings on columns we measured, with the paper's figures beside
    when it has them; the claims of the others, whose columns were not run)."""
    checked, unmeasured = [], []
    for ordering in outcome.study.orderings:
        verdict = check(ordering, outcome.results.table, outcome.names)
        if not all(k in outcome.measured for k in _columns_of(ordering)):
            unmeasured.append(verdict.claim)
            continue
        paper = _paper_evidence(ordering, outcome.study)
        if paper:
            verdict = dataclasses.replace(verdict,
                                          evidence=f"{verdict.evidence}; the paper: {paper}")
        checked.append(verdict)
    return checked, unmeasured


def _relative(outcome: Outcome, path: str) -> str:
    return os.path.relpath(path, outcome.output_dir)


def _source_lines(outcome: Outcome) -> list[str]:
    """One line per column: what the number is and the file and field it is read from."""
    lines = []
    for key in outcome.measured:
        described = column(key)
        where = ""
        found = next(((r, seed, s) for (r, seed, k), s in outcome.sources.items() if k == key),
                     None)
        if found is not None:
            row, seed, sample = found
            pattern = _relative(outcome, sample.path).replace(
                os.path.join("rows", row, f"seed{seed}"), os.path.join("rows", "<row>",
                                                                       "seed<k>"))
            how = {"percent": " x 100", "as_is": "", "exp": ", exponentiated"}[sample.transform]
            where = f": `{pattern}`, field `{sample.field}`{how}"
        lines.append(f"- {described.title}: {described.ours}{where}")
    return lines


def markdown(outcome: Outcome) -> str:
    """REPORT.md."""
    study, seeds = outcome.study, outcome.seeds
    checked, unmeasured = verdicts(outcome)
    parts = [f"# Ablation study: {study.title}", "",
             f"Our rows: mean ± sample standard deviation (ddof=1) over {len(seeds)} seed"
             f"{'s' if len(seeds) > 1 else ''} ({', '.join(map(str, seeds))}); \"n/a\" with one "
             f"seed, \"{NOT_RUN}\" where the task was not run. Each is followed by the paper's "
             "row it stands beside.", "", table(outcome), "",
             f"The paper's figures: {study.paper.source}.", "", "## Expected orderings", "",
             "Checked on the means, as they came out.", ""]
    parts += [f"- {verdict.line()}" for verdict in checked] or ["- (none on the columns run)"]
    if unmeasured:
        parts += ["", "Not measured here (their tasks were not run): "
                  + "; ".join(unmeasured) + "."]
    if study.notes:
        parts += ["", "## Notes", "", *(f"- {note}" for note in study.notes)]
    parts += ["", "## Settings", "", "| setting | value |", "|---|---|",
              *(f"| {name} | {value} |" for name, value in outcome.settings)]
    parts += ["", "## Where each number comes from", "",
              "Paths relative to the study's output_dir; every row and seed has its own "
              "(`rows/<row>/seed<k>/`); each seed's numbers are in results.json.", "",
              *_source_lines(outcome)]
    return "\n".join(parts) + "\n"


def to_json(outcome: Outcome) -> dict:
    """results.json: the settings, every row's config, per-seed numbers with their sources,
    summaries, the paper's table and the verdicts."""
    checked, unmeasured = verdicts(outcome)
    rows = []
    for row_id in outcome.rows:
        row = outcome.study.row(row_id)
        values = outcome.results.values.get(row_id, {})
        rows.append({
            "id": row.id, "name": row.name,
            "data": {"objective": row.data.objective,
                     "masking_mix": None if row.data.masking_mix is None
                     else list(row.data.masking_mix)},
            "config": row.config.to_dict(),
            "pretraining_flags": list(row.pretraining_flags),
            "finetuning_flags": list(row.finetuning_flags),
            "values": {key: {str(seed): v for seed, v in by_seed.items()}
                       for key, by_seed in values.items()},
            "summary": {key: dataclasses.asdict(s)
                        for key, s in outcome.results.table.get(row_id, {}).items()},
            "sources": {key: {str(seed): {**dataclasses.asdict(source),
                                          "path": _relative(outcome, source.path)}
                              for (r, seed, k), source in outcome.sources.items()
                              if r == row_id and k == key}
                        for key in values if any(k == key and r == row_id
                                                 for (r, _, k) in outcome.sources)},
        })
    return {
        "study": outcome.study.name, "title": outcome.study.title,
        "seeds": list(outcome.seeds), "columns": list(outcome.columns),
        "measured": list(outcome.measured),
        "settings": dict(outcome.settings), "rows": rows,
        "paper": {"source": outcome.study.paper.source,
                  "rows": [dataclasses.asdict(r) for r in outcome.study.paper.rows]},
        "orderings": [dataclasses.asdict(v) for v in checked],
        "not_measured": unmeasured, "notes": list(outcome.study.notes),
    }


def write(outcome: Outcome) -> tuple[str, str]:
    """Writes REPORT.md and results.json into output_dir; returns their paths."""
    report = os.path.join(outcome.output_dir, REPORT_FILE)
    results = os.path.join(outcome.output_dir, RESULTS_FILE)
    with open_atomically(results) as f:
        json.dump(to_json(outcome), f, indent=2)
        f.write("\n")
    with open_atomically(report) as f:
        f.write(markdown(outcome))
    return report, results


def _shape(config) -> str:
    described = (f"L={config.num_hidden_layers}, H={config.hidden_size}, "
                 f"A={config.num_attention_heads}, I={config.intermediate_size}")
    if config.embedding_size is not None:
        described += f", E={config.embedding_size}"
    if config.num_hidden_groups is not None:
        described += f", {config.num_hidden_groups} layer group(s)"
    return described


def describe_settings(settings: AblationSettings, study: Study, rows: tuple[str, ...],
                      vocab_size: int, data_summary: dict | None,
                      task_counts: Mapping[str, str]) -> list[tuple[str, str]]:
    """The settings table's (setting, value) pairs: what was run, on what, for how long.
    `data_summary` is the first data stage's summary.json (None when unread); `task_counts`
    says how much of each task's data was used."""
    steps, batch, length = (settings.pretrain_steps, settings.pretrain_batch_size,
                            settings.max_seq_length)
    corpus_bytes = sum(os.path.getsize(path) for path in settings.corpus)
    pairs = [("study", f"{study.name}: {study.title}"),
             ("rows", "; ".join(f"{study.row(r).name} ({_shape(study.row(r).config)})"
                                for r in rows)),
             ("size", f"--size={settings.size}"),
             ("seeds", ", ".join(map(str, settings.seed_list()))
              + " (each stage's seed: data, pretraining, fine-tuning)"),
             ("corpus", f"{', '.join(settings.corpus)} ({corpus_bytes:,} bytes)")]
    if data_summary:
        counts = [f"{data_summary[name]:,} {name}" for name in ("documents", "tokens")
                  if isinstance(data_summary.get(name), int)]
        if isinstance(data_summary.get("instances"), int):
            counts.append(f"{data_summary['instances']:,} sequences")
        pairs.append(("pretraining records (first data setting and seed)",
                      f"{', '.join(counts)} (dupe_factor {settings.dupe_factor})"))
    pairs += [
        ("held out", f"shard {HELD_OUT_SHARD} of {NUM_SHARDS} (whole documents, about a tenth) "
                     "never trains"),
        ("vocab", f"{settings.vocab_file} ({vocab_size:,} pieces), "
                  f"{'lower-cased' if settings.do_lower_case else 'cased'}"),
        ("max_seq_length", f"{length} (max_predictions_per_seq "
                           f"{settings.max_predictions_per_seq})"),
        ("pretraining", f"{steps:,} steps of {batch} sequences, learning rate "
                        f"{settings.pretrain_learning_rate:g} after {steps // 10:,} warmup "
                        "steps"),
        ("token budget (every row and seed)",
         f"{steps:,} x {batch} x {length} = {steps * batch * length:,} positions "
         f"({steps * batch:,} sequences)"),
        ("fine-tuning", f"{settings.finetune_epochs:g} epoch(s), batches of "
                        f"{settings.finetune_batch_size}, learning rate "
                        f"{settings.finetune_learning_rate:g}, 10% warmup"),
    ]
    if settings.runs_feature_based(study):
        pairs.append(("feature-based NER",
                      f"--feature_based={settings.feature_based}, BiLSTM of "
                      f"{settings.feature_lstm_units} units a direction, learning rate "
                      f"{settings.feature_learning_rate:g}"))
    pairs += sorted(task_counts.items())
    if settings.distribution_strategy != "default":
        pairs.append(("distribution strategy", settings.distribution_strategy))
    return pairs
