"""examine_checkpoint's one report: output_dir/REPORT.md and REPORT.html, gathered from the files
each examination's entry point wrote in its folder, nothing computed again.

    sections = [Section("blimp", "What it knows", "BLiMP's minimal pairs ...", "out/blimp",
                        (Shown("markdown", "minimal_pairs.md"),)), ...]
    write("out", "Examination of ckpt", described, sections)  # -> (REPORT.md, REPORT.html)

The report opens with the settings (`described`: name, value pairs) and a table of every
examination: run now (its time), reused from an earlier run, skipped with the reason (it
does not apply to this checkpoint, or --skip), or failed (its exit status, its log's last line
and the log: the report is still written from the examinations that finished). Then a part
per group in the order the sections come, and under each examination what it wrote, as `Shown`
says:
  markdown  the entry point's own Markdown (its tables, and the papers' figures it puts beside
            ours), its headings pushed below the section's (#### to ######);
  text      an aligned table, as a code block;
  json      a flat record (attack_classifier's summary, vocab_report's figures): its numbers
            and words as a two-column table (lists left out: they are in the file);
  image     a PNG beside it (probe_layers' curves), linked by its path relative to the report.
A section's `published` line gives the papers' figures its files do not. A file an examination
should have written and did not is said in its place. The HTML is the same Markdown rendered
(run_scripts/examination/markdown_html.py), its images embedded by the same relative links.
"""

from __future__ import annotations

import dataclasses
import json
import os
from typing import Sequence

from official.atomic_files import open_atomically
from official.console import format_seconds
from run_scripts.examination.markdown_html import to_html

REPORT_FILE = "REPORT.md"
HTML_FILE = "REPORT.html"
KINDS = ("markdown", "text", "json", "image")


@dataclasses.dataclass(frozen=True)
class Shown:
    """A file of an examination's folder and how the report shows it (one of KINDS)."""
    kind: str
    name: str

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"{self.kind!r}: not one of {', '.join(KINDS)}")


@dataclasses.dataclass(frozen=True)
class Section:
    """An examination in the report.

    Attributes:
      name: its name (examine_checkpoint --skip's).
      group: the part of the report it is in.
      title: its heading.
      folder: where its files are.
      shows: the files shown, in order.
      published: the papers' figures to state beside, when its files do not.
      skipped: why it did not run (None: it ran).
      seconds: how long it ran (None: skipped); reused: done by an earlier run.
      failed: how it failed (its status, last line and log), when it did.
    """
    name: str
    group: str
    title: str
    folder: str
    shows: tuple[Shown, ...]
    published: str = ""
    skipped: str | None = None
    seconds: float | None = None
    reused: bool = False
    failed: str | None = None


def _status(section: Section) -> str:
    if section.skipped is not None:
        return f"skipped: {section.skipped}"
    if section.failed is not None:
        return f"failed: {section.failed}"
    took = format_seconds(section.seconds or 0.0)
    return f"reused ({took} when it ran)" if section.reused else f"ran in {took}"


def _demoted(markdown: str) -> list[str]:
    """An entry point's Markdown with its headings put below a section's (#### to ######)."""
    def demoted(line: str) -> str:
        level = len(line) - len(line.lstrip("#"))
        return "#" * min(6, level + 3) + line[level:]  # Markdown's headings stop at six

    return [demoted(line) if line.startswith("#") else line for line in markdown.splitlines()]


def _scalars(record: dict) -> list[str]:
    """A flat record's numbers and words as a Markdown table."""
    rows = [(key, f"{value:,.4g}" if isinstance(value, float) else str(value))
            for key, value in record.items() if isinstance(value, (str, int, float))]
    return ["| | |", "|---|---:|", *(f"| {key} | {value} |" for key, value in rows)]


def _shown(folder: str, shown: Shown, report_dir: str) -> list[str]:
    path = os.path.join(folder, shown.name)
    if not os.path.isfile(path):
        return [f"*{shown.name} was not written.*"]
    if shown.kind == "image":
        return [f"![{shown.name}]({os.path.relpath(path, report_dir)})"]
    with open(path, encoding="utf-8") as f:
        text = f.read()
    if shown.kind == "markdown":
        return _demoted(text)
    if shown.kind == "text":
        return ["```", *text.rstrip("\n").splitlines(), "```"]
    return _scalars(json.loads(text))


def markdown(title: str, described: Sequence[tuple[str, str]], sections: Sequence[Section],
             report_dir: str) -> str:
    """The report's Markdown (see the module docstring); images linked from `report_dir`."""
    lines = [f"# {title}", "", "| setting | value |", "|---|---|",
             *(f"| {name} | {value} |" for name, value in described), "",
             "| examination | what it is | outcome |", "|---|---|---|",
             *(f"| {s.name} | {s.title} | {_status(s)} |" for s in sections)]
    group = None
    for section in sections:
        if section.group != group:
            group = section.group
            lines += ["", f"## {group}"]
        lines += ["", f"### {section.title}", "", f"*{section.name}: {_status(section)}.*"]
        if section.skipped is None and section.failed is None:
            for shown in section.shows:
                lines += ["", *_shown(section.folder, shown, report_dir)]
        if section.published:
            lines += ["", f"Published: {section.published}"]
    return "\n".join(lines) + "\n"


def write(output_dir: str, title: str, described: Sequence[tuple[str, str]],
          sections: Sequence[Section]) -> tuple[str, str]:
    """Writes REPORT.md and REPORT.html into `output_dir`, each atomically; their paths."""
    text = markdown(title, described, sections, output_dir)
    paths = os.path.join(output_dir, REPORT_FILE), os.path.join(output_dir, HTML_FILE)
    with open_atomically(paths[0]) as f:
        f.write(text)
    with open_atomically(paths[1]) as f:
        f.write(to_html(text, title))
    return paths
