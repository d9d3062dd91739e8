"""A zero-shot cross-lingual run's scores by language: eval_results_by_language.json and .md.

A model fine-tuned in one language (XNLI's English training set, say) is scored unchanged on
other languages' dev and test sets (data_prep/cross_lingual.py), the checkpoint chosen on the
training language's dev set alone. The two files say the same:

    eval_results_by_language.json   {language: {"dev_accuracy": 0.705, "dev_examples": 2490,
                                     "test_accuracy": ..., "test_examples": ...}}: fractions
                                     and counts, in the order the languages were listed
    eval_results_by_language.md     a column per language and a row per figure, accuracies in
                                     percent to one decimal, as the original's multilingual
                                     README shows XNLI

Example:
    >>> print(markdown_table({"en": {"dev_accuracy": 0.81449, "dev_examples": 2490},
    ...                       "de": {"dev_accuracy": 0.7051, "dev_examples": 2490}}, "xnli-en"))
    xnli-en: the checkpoint kept by the run (best/, chosen on the training language's dev set
    alone; the newest without one) scored in each language, zero-shot; scores in percent.
    <BLANKLINE>
    | | en | de |
    |---|---|---|
    | dev accuracy | 81.4 | 70.5 |
    | dev examples | 2490 | 2490 |
"""

from __future__ import annotations

import json
import os
from typing import Mapping

from official.atomic_files import open_atomically

RESULTS_FILE = "eval_results_by_language.json"
TABLE_FILE = "eval_results_by_language.md"


def markdown_table(by_language: Mapping[str, Mapping[str, float | int]], task_name: str) -> str:
    """The table of `by_language` ({language: {figure: value}}), with a line saying what was
    scored; a "*_examples" figure is a count, any other a fraction shown in percent."""
    languages = list(by_language)
    figures = list(dict.fromkeys(key for row in by_language.values() for key in row))

    def cell(language: str, figure: str) -> str:
        value = by_language[language].get(figure)
        if value is None:
            return "–"
        return str(int(value)) if figure.endswith("_examples") else f"{100 * value:.1f}"

    lines = [f"{task_name}: the checkpoint kept by the run (best/, chosen on the training "
             "language's dev set alone; the newest without one) scored in each language, "
             "zero-shot; scores in percent.",
             "", "| | " + " | ".join(languages) + " |", "|---|" + "---|" * len(languages)]
    for figure in figures:
        lines.append(f"| {figure.replace('_', ' ')} | "
                     + " | ".join(cell(language, figure) for language in languages) + " |")
    return "\n".join(lines)


def write(output_dir: str, by_language: Mapping[str, Mapping[str, float | int]],
          task_name: str) -> None:
    """Writes both files into `output_dir` (each complete under its name, or not at all)."""
    with open_atomically(os.path.join(output_dir, RESULTS_FILE)) as f:
        json.dump(by_language, f, indent=2)
        f.write("\n")
    with open_atomically(os.path.join(output_dir, TABLE_FILE)) as f:
        f.write(markdown_table(by_language, task_name) + "\n")
