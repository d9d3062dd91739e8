"""A study's results written for a reader: REPORT.md and results.json, each written atomically.

    Outcome         what a finished study is: its rows, seeds, columns, numbers and their
                    sources, the references (the unigram baseline, the majority class, chance),
                    each row's wall time and its settings in words
    of_pieces(pieces, study, output_dir, experiment)
                    the outcome of this run's numbers joined with earlier runs'
    tables(outcome) the papers-shaped tables, one of what the pretrained models know without
                    fine-tuning (intrinsic) and one of fine-tuned dev scores: each of our rows
                    (mean ± sample standard deviation over the seeds; "n/a" with one seed; "—"
                    where not run) followed by the papers' rows it stands beside, the
                    references, then the papers' other rows
    verdicts(outcome)
                    each expected ordering tested on our seeds (official/ablation/
                    orderings.py), with the papers' own figures beside
    resolution(outcome)
                    whether the study can tell anything: the first row's held-out masked LM
                    against the unigram baseline, its fine-tuned scores against the majority
                    class and the random initialisation, its BLiMP against chance; each by the
                    same two-standard-error test
    markdown(outcome), to_json(outcome), write(outcome)

Example of a table:
    >>> from official.ablation.studies import study
    >>> from official.ablation.results import Results
    >>> from official.ablation.summary import Summary
    >>> sizes = study("sizes", "tiny", 100)
    >>> outcome = Outcome(sizes, ("L2_H128",), (1,), ("sst2",),
    ...                   Results({}, {"L2_H128": {"sst2": Summary(81.25, None, 1)}}), {}, [],
    ...                   "out")
    >>> print(tables(outcome)[1])  # doctest: +NORMALIZE_WHITESPACE
    | row | MNLI-m | MRPC | SST-2 |
    |---|---:|---:|---:|
    | L=2, H=128, A=2 (ours) | — | — | 81.2 ± n/a |
    | L=3, H=768, A=12 (paper) | 77.9 | 79.8 | 88.4 |
    | L=6, H=768, A=3 (paper) | 80.6 | 82.2 | 90.7 |
    | L=6, H=768, A=12 (paper) | 81.9 | 84.8 | 91.3 |
    | L=12, H=768, A=12 (paper) | 84.4 | 86.7 | 92.9 |
    | L=12, H=1024, A=16 (paper) | 85.7 | 86.9 | 93.3 |
    | L=24, H=1024, A=16 (paper) | 86.6 | 87.8 | 93.7 |
"""

from __future__ import annotations

import dataclasses
import json
import os
from typing import Mapping, Sequence

from official.ablation.columns import FINE_TUNED, INTRINSIC, column
from official.ablation.joined import Pieces
from official.ablation.orderings import (
    AtChance,
    Compare,
    Ordering,
    Verdict,
    check,
    columns_of,
)
from official.ablation.results import HELD_OUT_SHARD, NUM_SHARDS, Results, Source, summarised
from official.ablation.settings import AblationSettings
from official.ablation.studies import Study
from official.ablation.summary import Summary, format_summary, summarize
from official.atomic_files import open_atomically
from official.console import format_seconds

REPORT_FILE, RESULTS_FILE = "REPORT.md", "results.json"
NOT_RUN = "—"
COUNTED = ("params",)  # the same for every seed: written without a spread
UNIGRAM, CHANCE = "unigram", "chance"
_REFERENCE_NAMES = {UNIGRAM: "Unigram baseline (the same held-out text)",
                    CHANCE: "Majority class / chance"}


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
      references: {UNIGRAM: {column: Summary over the seeds}, CHANCE: {column: Summary}}: what a
        model that learnt nothing of the text (unigram) or of the task (chance) scores.
      seconds: {row: seconds its stages ran, over all seeds}.
      reference_values: {UNIGRAM: {column: {seed: number}}}: the references measured per seed
        (results.json keeps them, so that runs joined later summarise them anew).
      experiment: the settings that shape the numbers (`AblationSettings.experiment`): runs
        joined into one report must share them.
    """
    study: Study
    rows: tuple[str, ...]
    seeds: tuple[int, ...]
    measured: tuple[str, ...]
    results: Results
    sources: Mapping[tuple[str, int, str], Source]
    settings: list[tuple[str, str]]
    output_dir: str
    references: Mapping[str, Mapping[str, Summary]] = dataclasses.field(default_factory=dict)
    seconds: Mapping[str, float] = dataclasses.field(default_factory=dict)
    reference_values: Mapping[str, Mapping[str, Mapping[int, float]]] = dataclasses.field(
        default_factory=dict)
    experiment: Mapping[str, object] = dataclasses.field(default_factory=dict)

    @property
    def columns(self) -> tuple[str, ...]:
        """The tables': the papers', then ours they lack."""
        return self.study.columns + tuple(k for k in self.measured
                                          if k not in self.study.columns)

    @property
    def names(self) -> dict[str, str]:
        return {row.id: row.name for row in self.study.rows}


def of_pieces(pieces: Pieces, study: Study, output_dir: str,
              experiment: Mapping[str, object]) -> Outcome:
    """The outcome of a study's numbers, this run's joined with earlier runs' (official/ablation/
    joined.py): each row summarised over the seeds it has, the rows in the study's order and the
    seeds any row has, the columns some row filled (the left-to-right row's next-token loss goes
    without that row), the references summarised (chance a constant: no spread, so a test
    against it is our seeds' alone). Its settings table is empty: `dataclasses.replace` it with
    `describe_settings` of its rows."""
    found = summarised(pieces.values)
    rows = tuple(row.id for row in study.rows if row.id in pieces.values)
    seeds = tuple(sorted({seed for per_column in pieces.values.values()
                          for by_seed in per_column.values() for seed in by_seed}))
    measured = tuple(key for key in pieces.measured
                     if any(key in found.table.get(row, {}) for row in rows))
    references = {CHANCE: {key: Summary(value, 0.0, 1)
                           for key, value in pieces.chance.items() if key in measured}}
    references.update({name: {key: summarize(list(by_seed.values()))
                              for key, by_seed in by_column.items()}
                       for name, by_column in pieces.reference_values.items()})
    return Outcome(study, rows, seeds, measured, found, pieces.sources, [], output_dir,
                   references, pieces.seconds, pieces.reference_values, experiment)


def _cell(value: float | None, key: str) -> str:
    return "" if value is None else f"{value:.{column(key).digits}f}"


def _paper_label(row) -> str:
    """"<label> (paper[; not built here]) [<paper and table>]"."""
    note = f"; {row.note.split(':')[0]}" if row.note else ""
    label, bracket, source = row.label.partition(" [")
    return f"{label} (paper{note})" + (f" [{source}" if bracket else "")


def _table(outcome: Outcome, columns: tuple[str, ...]) -> str:
    lines = ["| row | " + " | ".join(column(k).title for k in columns) + " |",
             "|---|" + "---:|" * len(columns)]
    paper_rows = [r for r in outcome.study.paper.rows
                  if any(k in r.values for k in columns)]

    def paper_line(paper_row) -> str:
        return f"| {_paper_label(paper_row)} | " + " | ".join(
            _cell(paper_row.values.get(k), k) for k in columns) + " |"

    for row_id in outcome.rows:
        summaries = outcome.results.table.get(row_id, {})
        if not any(k in summaries for k in columns):
            continue  # a row this table has nothing of (the random initialisation's measures)
        cells = [NOT_RUN if k not in summaries else _cell(summaries[k].mean, k)
                 if k in COUNTED else format_summary(summaries[k], column(k).digits)
                 for k in columns]
        lines.append(f"| {outcome.names[row_id]} (ours) | " + " | ".join(cells) + " |")
        lines += [paper_line(r) for r in paper_rows if r.ours == row_id]
    for reference, found in outcome.references.items():
        if any(k in found for k in columns):
            lines.append(f"| {_REFERENCE_NAMES[reference]} | " + " | ".join(
                format_summary(found[k], column(k).digits) if k in found and found[k].n > 1
                else _cell(found[k].mean, k) if k in found else NOT_RUN
                for k in columns) + " |")
    lines += [paper_line(r) for r in paper_rows if r.ours not in outcome.rows]
    return "\n".join(lines)


def tables(outcome: Outcome) -> tuple[str, str]:
    """(the intrinsic table, the fine-tuned table) in Markdown; "" for one without columns."""
    found = []
    for kind in (INTRINSIC, FINE_TUNED):
        keys = tuple(k for k in outcome.columns if column(k).kind == kind)
        found.append(_table(outcome, keys) if keys else "")
    return found[0], found[1]


def _paper_evidence(ordering: Ordering, study: Study) -> str:
    """The papers' own figures for an ordering ("" when they lack a cell)."""
    values = {row.id: row.values for row in study.paper.rows}
    cells = ordering.paper
    if not cells or not all(key in values.get(row, {}) for row, key in cells):
        return ""
    figures = [values[row][key] for row, key in cells]
    if isinstance(ordering, AtChance):
        return _cell(figures[0], cells[0][1])
    if not isinstance(ordering, Compare):  # LargerGap: the two gaps
        return f"{figures[0] - figures[1]:.1f} vs {figures[2] - figures[3]:.1f}"
    return " vs ".join(_cell(f, key) for f, (_, key) in zip(figures, cells))


def verdicts(outcome: Outcome) -> tuple[list[tuple[Verdict, str, str]], list[str]]:
    """([(verdict, whose claim, the papers' figures or ""), ...] of the orderings on columns we
    measured; the claims of the others, whose columns were not run)."""
    checked, unmeasured = [], []
    for ordering in outcome.study.orderings:
        verdict = check(ordering, outcome.results.table, outcome.names)
        if not all(k in outcome.measured for k in columns_of(ordering)):
            unmeasured.append(f"{verdict.claim} [{ordering.source}]")
            continue
        checked.append((verdict, ordering.source, _paper_evidence(ordering, outcome.study)))
    return checked, unmeasured


def _reference_row(outcome: Outcome, reference: str) -> dict[str, Summary]:
    return dict(outcome.references.get(reference, {}))


def resolution(outcome: Outcome) -> list[str]:
    """The resolution lines (see the module docstring): does the first row, the study's base,
    stand clear of what learns nothing?"""
    base = outcome.rows[0]
    table = dict(outcome.results.table)
    names = dict(outcome.names)
    lines = []
    for reference in (UNIGRAM, CHANCE):
        found = _reference_row(outcome, reference)
        if not found:
            continue
        table[reference] = found
        names[reference] = _REFERENCE_NAMES[reference]
        for key in found:
            if key not in table.get(base, {}) or key in _untrained_sentence_task(outcome, base):
                continue
            relation = "<" if column(key).lower_is_better else ">"
            lines.append(check(Compare(((base, key), (reference, key)), relation), table,
                               names).line())
    others = [row for row in outcome.rows if not outcome.study.row(row).pretrained]
    for row in others:
        for key in outcome.measured:
            if column(key).kind == FINE_TUNED and key in table.get(row, {}) \
                    and key in table.get(base, {}):
                lines.append(check(Compare(((base, key), (row, key)), ">"), table,
                                   names).line())
    return lines


def _files(paths: tuple[str, ...]) -> str:
    """The corpus's files, named one by one when few, else by count and their folder(s)."""
    if len(paths) <= 3:
        return ", ".join(paths)
    folders = sorted({os.path.dirname(path) for path in paths})
    return f"{len(paths)} files in {', '.join(folders)}"


def _untrained_sentence_task(outcome: Outcome, row: str) -> tuple[str, ...]:
    """The columns of the second-sentence task `row` was not trained on ("sop_head" and
    "sop_probe" for an NSP row): ALBERT's asymmetry expects chance there, so beating chance on
    them is no test of whether the row learnt."""
    trained = outcome.study.row(row).second_sentence_head
    other = {"nsp": "sop", "sop": "nsp"}.get(trained)
    return (f"{other}_head", f"{other}_probe") if other else ()


def _relative(outcome: Outcome, path: str) -> str:
    return os.path.relpath(path, outcome.output_dir)


def _layout(outcome: Outcome, path: str, row: str, seed: int) -> str:
    """Where a number lies inside any run's output_dir, `rows/<row>/seed<k>/...`: a joined
    piece's number lies in that piece's folder, which may be elsewhere or gone."""
    parts = os.path.normpath(path).split(os.sep)
    for i in range(len(parts) - 3, -1, -1):
        if parts[i:i + 3] == ["rows", row, f"seed{seed}"]:
            return os.path.join("rows", "<row>", "seed<k>", *parts[i + 3:])
    return _relative(outcome, path)


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
            pattern = _layout(outcome, sample.path, row, seed)
            how = {"percent": " x 100", "as_is": "", "exp": ", exponentiated"}[sample.transform]
            where = f": `{pattern}`, field `{sample.field}`{how}"
        lines.append(f"- {described.title}: {described.ours}{where}")
    return lines


def _time_lines(outcome: Outcome) -> list[str]:
    lines = []
    for row, seconds in outcome.seconds.items():
        seeds = len({seed for by_seed in outcome.results.values.get(row, {}).values()
                     for seed in by_seed}) or len(outcome.seeds)
        lines.append(f"- {outcome.names[row]}: {format_seconds(seconds)} over {seeds} seed(s), "
                     f"{format_seconds(seconds / seeds)} a seed")
    return lines


def markdown(outcome: Outcome) -> str:
    """REPORT.md."""
    study, seeds = outcome.study, outcome.seeds
    checked, unmeasured = verdicts(outcome)
    intrinsic, fine_tuned = tables(outcome)
    parts = [f"# Ablation study: {study.title}", "",
             f"Our rows: mean ± sample standard deviation (ddof=1) over {len(seeds)} seed"
             f"{'s' if len(seeds) > 1 else ''} ({', '.join(map(str, seeds))}); \"n/a\" with one "
             f"seed, \"{NOT_RUN}\" where not run. Each is followed by the papers' rows it stands "
             "beside (the bracket names the paper and table).", ""]
    if intrinsic:
        parts += ["## Without fine-tuning", "", intrinsic, ""]
    if fine_tuned:
        parts += ["## Fine-tuned (the set and epoch of each column: where each number comes "
                  "from, below)", "", fine_tuned, ""]
    parts += [f"The papers' figures: {study.paper.source}.", "",
              "## Expected orderings", "",
              "Each step of a claim is tested on our seeds: the gap between the two means "
              "against two standard errors of their difference, sqrt(s1²/n1 + s2²/n2). "
              "Beyond them it holds or does not hold; inside them the seeds cannot tell. "
              "(Two standard errors is a lenient test at three seeds.)", ""]
    for verdict, source, paper in checked:
        beside = f"; the paper: {paper}" if paper else ""
        parts.append(f"- {verdict.line()} [{source}{beside}]")
    if not checked:
        parts.append("- (none on the columns run)")
    if unmeasured:
        parts += ["", "Not measured here (their tasks were not run): "
                  + "; ".join(unmeasured) + "."]
    lines = resolution(outcome)
    if lines:
        parts += ["", "## Does the study resolve?", "",
                  f"{outcome.names[outcome.rows[0]]} against what learnt nothing, by the same "
                  "test:", "", *(f"- {line}" for line in lines)]
    if study.notes:
        parts += ["", "## Notes", "", *(f"- {note}" for note in study.notes)]
    parts += ["", "## Settings", "", "| setting | value |", "|---|---|",
              *(f"| {name} | {value} |" for name, value in outcome.settings)]
    if outcome.seconds:
        parts += ["", "## Wall time per row", "",
                  "Every stage of the row (pretraining, measures, fine-tuning), as run here; "
                  "the data stages, which rows share, are counted in the settings' total.", "",
                  *_time_lines(outcome)]
    parts += ["", "## Where each number comes from", "",
              "Paths relative to the study's output_dir; every row and seed has its own "
              "(`rows/<row>/seed<k>/`); each seed's numbers are in results.json.", "",
              *_source_lines(outcome)]
    return "\n".join(parts) + "\n"


def _summary_json(found: Mapping[str, Summary]) -> dict:
    return {key: dataclasses.asdict(s) for key, s in found.items()}


def to_json(outcome: Outcome) -> dict:
    """results.json: the settings, every row's config, per-seed numbers with their sources,
    summaries, the references, the papers' table and the verdicts."""
    checked, unmeasured = verdicts(outcome)
    rows = []
    for row_id in outcome.rows:
        row = outcome.study.row(row_id)
        values = outcome.results.values.get(row_id, {})
        rows.append({
            "id": row.id, "name": row.name,
            "data": None if row.data is None else {
                "objective": row.data.objective,
                "masking_mix": None if row.data.masking_mix is None
                else list(row.data.masking_mix)},
            "config": row.config.to_dict(),
            "pretraining_flags": list(row.pretraining_flags),
            "finetuning_flags": list(row.finetuning_flags),
            "seconds": outcome.seconds.get(row_id),
            "values": {key: {str(seed): v for seed, v in by_seed.items()}
                       for key, by_seed in values.items()},
            "summary": _summary_json(outcome.results.table.get(row_id, {})),
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
        "references": {name: _summary_json(found)
                       for name, found in outcome.references.items()},
        "reference_values": {name: {key: {str(seed): v for seed, v in by_seed.items()}
                                    for key, by_seed in by_column.items()}
                             for name, by_column in outcome.reference_values.items()},
        "experiment": dict(outcome.experiment),
        "paper": {"source": outcome.study.paper.source,
                  "rows": [dataclasses.asdict(r) for r in outcome.study.paper.rows]},
        "orderings": [{**dataclasses.asdict(v), "source": source, "paper": paper}
                      for v, source, paper in checked],
        "not_measured": unmeasured, "resolution": resolution(outcome),
        "notes": list(outcome.study.notes),
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
                      vocab: tuple[str, int], data_summary: dict | None,
                      task_counts: Mapping[str, str],
                      languages: Sequence[tuple[str, str]] = ()) -> list[tuple[str, str]]:
    """The settings table's (setting, value) pairs: what was run, on what, for how long.
    `vocab` is the vocab file and its size; `data_summary` the first data stage's summary.json
    (None when unread); `task_counts` says how much of each task's data was used; `languages`
    what a multilingual study's corpora and vocab are (`describe_languages`)."""
    steps, batch, length = (settings.pretrain_steps, settings.pretrain_batch_size,
                            settings.max_seq_length)
    pairs = [("study", f"{study.name}: {study.title}"),
             ("preset", f"--preset={settings.preset}"),
             ("rows", "; ".join(f"{study.row(r).name} ({_shape(study.row(r).config)})"
                                for r in rows)),
             ("size", f"--size={settings.size}"),
             ("seeds", ", ".join(map(str, settings.seed_list()))
              + " (each stage's seed: data, pretraining, fine-tuning)")]
    if settings.reads_corpus(study):
        corpus_bytes = sum(os.path.getsize(path) for path in settings.corpus)
        pairs.append(("corpus", f"{_files(settings.corpus)} ({corpus_bytes:,} bytes)"))
    if data_summary:
        counts = [f"{data_summary[name]:,} {name}" for name in ("documents", "tokens")
                  if isinstance(data_summary.get(name), int)]
        if isinstance(data_summary.get("instances"), int):
            counts.append(f"{data_summary['instances']:,} sequences")
        pairs.append(("pretraining records (first data setting and seed)",
                      f"{', '.join(counts)} (dupe_factor {settings.dupe_factor})"))
    dropout = ("the config's" if settings.pretrain_dropout is None
               else f"{settings.pretrain_dropout:g}")
    pairs += [
        ("held out", f"shard {HELD_OUT_SHARD} of {NUM_SHARDS} (whole documents, about a tenth "
                     "of the corpus's bytes) never trains"),
        ("vocab", f"{vocab[0]} ({vocab[1]:,} pieces), "
                  f"{'lower-cased' if settings.do_lower_case and not study.cased else 'cased'}"),
        ("max_seq_length", f"{length} in pretraining (max_predictions_per_seq "
                           f"{settings.max_predictions_per_seq}); fine-tuning "
                           f"{settings.finetune_max_seq_length} (one text), "
                           f"{settings.pair_max_seq_length} (pairs)"),
        ("pretraining", f"{steps:,} steps of {batch} sequences, learning rate "
                        f"{settings.pretrain_learning_rate:g} after {settings.warmup_steps:,} "
                        f"warmup steps, decayed linearly to 0 at step {steps:,}; dropout "
                        f"{dropout}; {settings.dtype}"),
        ("token budget (every row and seed)",
         f"{steps:,} x {batch} x {length} = {steps * batch * length:,} positions "
         f"({steps * batch:,} sequences)"),
        ("fine-tuning", f"{settings.finetune_epochs:g} epoch(s), batches of "
                        f"{settings.finetune_batch_size}, learning rate "
                        f"{settings.finetune_learning_rate:g}, 10% warmup, dropout "
                        + ("the config's" if settings.finetune_dropout is None
                           else f"{settings.finetune_dropout:g}")),
    ]
    if settings.runs_feature_based(study):
        pairs.append(("feature-based NER",
                      f"--feature_based={settings.feature_based}, BiLSTM of "
                      f"{settings.feature_lstm_units} units a direction, learning rate "
                      f"{settings.feature_learning_rate:g}"))
    pairs += sorted(task_counts.items())
    pairs += languages
    if settings.distribution_strategy != "default":
        pairs.append(("distribution strategy", settings.distribution_strategy))
    return pairs


def describe_languages(corpus_reports: Mapping[str, str], overlap_file: str | None
                       ) -> list[tuple[str, str]]:
    """Settings pairs of a multilingual study: each corpus's languages with their words, shares
    and smoothed shares (data_prep.mix_languages' report), and the vocab's word-piece overlap
    between the languages (data_prep.wordpiece_overlap's); the files that are missing are left
    out."""
    pairs = []
    for name, path in corpus_reports.items():
        if os.path.isfile(path):
            with open(path, encoding="utf-8") as f:
                made = json.load(f)
            parts = "; ".join(
                f"{language} {part['words_written']:,} words written of {part['words']:,} "
                f"(share {part['share']:.3f}, smoothed {part['smoothed_share']:.3f})"
                for language, part in made["languages"].items())
            pairs.append((f"corpus {name}", f"{parts}; exponent {made['smoothing']:g}"))
    if overlap_file and os.path.isfile(overlap_file):
        with open(overlap_file, encoding="utf-8") as f:
            overlap = json.load(f)
        pairs.append(("word-piece overlap (vocab types shared; Jaccard; share of the second "
                      "language's tokens the first's pieces cover)", "; ".join(
                          f"{pair} {found['shared_types']:,}, {found['jaccard']:.3f}, "
                          f"{found['coverage_of_b']:.3f}"
                          for pair, found in overlap["pairs"].items())))
    return pairs
