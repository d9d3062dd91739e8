"""Tests for official.tasks.language_results: the JSON keeps the figures as given, in the order
listed, and the Markdown table shows them a column per language, in percent."""

import json

from official.tasks import language_results


def test_both_files_say_the_same(tmp_path):
    by_language = {"en": {"dev_accuracy": 0.8144578, "dev_examples": 2490,
                          "test_accuracy": 0.81058, "test_examples": 5010},
                   "ur": {"dev_accuracy": 0.58249, "dev_examples": 2490}}
    language_results.write(str(tmp_path), by_language, "xnli-en")
    assert json.loads((tmp_path / "eval_results_by_language.json").read_text()) == by_language
    assert list(json.loads((tmp_path / "eval_results_by_language.json").read_text())) == [
        "en", "ur"]
    lines = (tmp_path / "eval_results_by_language.md").read_text().splitlines()
    assert lines[0] == ("xnli-en: the checkpoint kept by the run (best/, chosen on the training "
                        "language's dev set alone; the newest without one) scored in each "
                        "language, zero-shot; scores in percent.")
    # ur was scored without its test set: a dash, not a number.
    assert lines[2:] == ["| | en | ur |",
                         "|---|---|---|",
                         "| dev accuracy | 81.4 | 58.2 |",
                         "| dev examples | 2490 | 2490 |",
                         "| test accuracy | 81.1 | – |",
                         "| test examples | 5010 | – |"]
