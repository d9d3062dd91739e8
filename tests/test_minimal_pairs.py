"""official/lm_scoring/minimal_pairs.py and pair_report.py: BLiMP's files read and checked, and
the accuracy tables, against the shipped sample (data/blimp_sample) and hand-counted cases."""

import glob
import gzip
import json
import os

import pytest

from official.lm_scoring import minimal_pairs, pair_report
from official.lm_scoring.minimal_pairs import MinimalPair
from tests.cli import REPO

SAMPLE = os.path.join(REPO, "data", "blimp_sample")
FILES = sorted(glob.glob(os.path.join(SAMPLE, "data", "*.jsonl.gz")))


def test_the_sample_reads_as_67_paradigms_of_10_pairs_named_as_blimp_names_them():
    pairs = minimal_pairs.read_pairs(FILES)
    assert len(pairs) == 670 and len({p.paradigm for p in pairs}) == 67
    first = pairs[0]
    assert (first.paradigm, first.term, first.field) == ("adjunct_island", "island_effects",
                                                         "syntax")
    assert first.good == "Who should Derek hug after shocking Richard?"
    assert first.where == f"{FILES[0]}:1"
    assert len(minimal_pairs.read_pairs(FILES, per_paradigm=3)) == 201
    assert {p.term for p in pairs} >= {"anaphor_agreement", "s-selection", "npi_licensing"}


def test_published_figures_are_blimps_summary_rows():
    published = minimal_pairs.read_published(os.path.join(SAMPLE, "models_summary.jsonl"))
    assert len(published.paradigms) == 67
    assert published.overall["gpt2"] == pytest.approx(0.830238806)
    assert published.terms["anaphor_agreement"]["lstm"] == pytest.approx(0.917)
    assert published.paradigms["adjunct_island"].keys() == minimal_pairs.PUBLISHED_MODELS.keys()
    human = minimal_pairs.read_human(os.path.join(SAMPLE, "human_validation_summary.csv"))
    # Two of its 69 conditions are not among the 67 released paradigms.
    assert len(human) == 69 and human["adjunct_island"] == pytest.approx(0.94)


def write(path, lines):
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "wt", encoding="utf-8") as f:
        f.write("".join(line + "\n" for line in lines))
    return str(path)


@pytest.mark.parametrize("lines, message", [
    (['{"sentence_bad": "Cats sits."}'], r"bad\.jsonl:1: no sentence_good"),
    (['{"sentence_good": "Cats sit.", "sentence_bad": "Cats sit."}', "",
      '{"sentence_good": "  ", "sentence_bad": "x"}'],
     r"bad\.jsonl:3: sentence_good is \"  \", not a sentence"),
    (['{"sentence_good": "a", "sentence_bad": "b"', ], r"bad\.jsonl:1: not JSON"),
    (["[1, 2]"], r"bad\.jsonl:1: not a JSON object"),
    (["", "  "], r"bad\.jsonl: no pairs"),
])
def test_bad_files_are_one_line_naming_file_and_line(tmp_path, lines, message):
    path = write(tmp_path / "bad.jsonl", lines)
    with pytest.raises(ValueError, match=message) as raised:
        minimal_pairs.read_pairs([path])
    assert "\n" not in str(raised.value)


def test_names_default_to_the_file_and_other_and_gzip_is_read_by_its_name(tmp_path):
    path = write(tmp_path / "my_paradigm.jsonl.gz",
                 [json.dumps({"sentence_good": "A cat sat.", "sentence_bad": "A cat sit."})])
    (pair,) = minimal_pairs.read_pairs([path])
    assert (pair.paradigm, pair.term, pair.field) == ("my_paradigm", "other", "other")
    not_gzip = tmp_path / "plain.jsonl.gz"
    not_gzip.write_text('{"sentence_good": "a", "sentence_bad": "b"}\n')
    with pytest.raises(ValueError, match=r"plain\.jsonl\.gz: not gzip-compressed"):
        minimal_pairs.read_pairs([str(not_gzip)])
    with pytest.raises(ValueError, match=r"nowhere\.jsonl: no such file"):
        minimal_pairs.read_pairs([str(tmp_path / "nowhere.jsonl")])


def pairs_of(*paradigms):
    """Pairs of (paradigm, term) in order."""
    return [MinimalPair(f"f:{i}", "good", "bad", uid, term, "syntax")
            for i, (uid, term) in enumerate(paradigms, start=1)]


def test_accuracy_is_the_good_sentence_scoring_higher_ties_wrong_means_over_paradigms():
    pairs = pairs_of(("p1", "t1"), ("p1", "t1"), ("p1", "t1"), ("p1", "t1"), ("p2", "t1"),
                     ("p2", "t1"), ("p3", "t2"), ("p3", "t2"))
    good = [-1.0, -2.0, -3.0, -4.0, -5.0, -5.0, -1.0, -9.0]
    bad = [-2.0, -3.0, -1.0, -4.0, -6.0, -1.0, -3.0, -3.0]
    summary = pair_report.summarize(pairs, good, bad)
    # p1: 2 of 4 right (a tie is wrong); p2: 1 of 2; p3: 1 of 2.
    assert [summary["paradigms"][p]["accuracy"] for p in ("p1", "p2", "p3")] == [50.0] * 3
    assert summary["paradigms"]["p1"]["stderr"] == pytest.approx(100 * (0.25 / 4) ** 0.5)
    assert summary["terms"]["t1"]["accuracy"] == 50.0 and summary["terms"]["t1"]["pairs"] == 6
    assert summary["overall"]["paradigms"] == 3 and summary["overall"]["pairs"] == 8
    # The overall standard error: sqrt(sum p(1-p)/n) / paradigms.
    assert summary["overall"]["stderr"] == pytest.approx(
        100 * (0.25 / 4 + 0.25 / 2 + 0.25 / 2) ** 0.5 / 3)
    unequal = pair_report.summarize(pairs, [0.0] * 4 + [-1.0] * 4, [-1.0] * 4 + [0.0] * 4)
    assert unequal["overall"]["accuracy"] == pytest.approx(100 / 3)  # (100 + 0 + 0) / 3


def test_pairs_are_split_by_which_sentence_is_shorter_in_pieces():
    pairs = pairs_of(*[("p1", "t1")] * 6)
    good = [-1.0, -2.0, -3.0, -4.0, -5.0, -5.0]
    bad = [-2.0, -3.0, -1.0, -4.0, -6.0, -1.0]      # right: yes, yes, no, no (tie), yes, no
    lengths = ([3, 3, 4, 5, 5, 6], [4, 3, 3, 5, 4, 6])
    groups = pair_report.summarize(pairs, good, bad, lengths=lengths)["by_length"]
    # Good shorter: pair 1 (right). Same length: pairs 2, 4, 6 (1 of 3 right). Good longer:
    # pairs 3 and 5 (1 of 2).
    assert {name: (row["right"], row["pairs"]) for name, row in groups.items()} == {
        "good shorter": (1, 1), "same length": (1, 3), "good longer": (1, 2)}
    assert groups["same length"]["accuracy"] == pytest.approx(100 / 3)
    assert groups["same length"]["stderr"] == pytest.approx(100 * (2 / 9 / 3) ** 0.5)
    text = pair_report.markdown(pair_report.summarize(pairs, good, bad, lengths=lengths), "t")
    assert "| same length | 3 | 33.3 | 27.2 |" in text
    assert "by_length" not in pair_report.summarize(pairs, good, bad)
    # A group without pairs has no accuracy rather than 0.
    none_longer = pair_report.summarize(pairs, good, bad, lengths=([1] * 6, [1] * 6))
    assert none_longer["by_length"]["good longer"] == {"right": 0, "pairs": 0, "accuracy": None,
                                                       "stderr": None}
    assert "| good longer | 0 | — | — |" in pair_report.markdown(none_longer, "t")


def test_the_report_puts_the_published_figures_beside_ours():
    published = minimal_pairs.read_published(os.path.join(SAMPLE, "models_summary.jsonl"))
    human = minimal_pairs.read_human(os.path.join(SAMPLE, "human_validation_summary.csv"))
    pairs = pairs_of(("adjunct_island", "island_effects"), ("new_paradigm", "s-selection"))
    summary = pair_report.summarize(pairs, [0.0, 0.0], [-1.0, 1.0], published, human)
    row = summary["paradigms"]["adjunct_island"]
    assert row["published"]["gpt2"] == pytest.approx(89.4)
    assert row["published"]["human"] == pytest.approx(94.0)
    assert summary["paradigms"]["new_paradigm"]["published"] == {}
    assert summary["overall"]["published"]["ngram"] == pytest.approx(61.24029851)
    text = pair_report.markdown(summary, "BLiMP of a test")
    assert text.startswith("# BLiMP of a test")
    assert "| overall | 2 | 50.0 | 0.0 | 61.2 | 69.8 | 69.6 | 83.0 |" in text
    assert "| s-selection | 1 | 0.0 | 0.0 | — | — | — | — |" in text
    assert "its overall is over all 67 paradigms" in text
    assert "| field | pairs | ours | ± |\n|---|---:|---:|---:|\n| syntax | 2 |" in text
    # Every table's header, separator and rows have as many cells (GitHub drops a table whose
    # separator is shorter than its header).
    tables = [block.splitlines() for block in text.split("\n\n") if block.startswith("|")]
    assert len(tables) == 4
    for table in tables:
        assert len({line.count("|") for line in table}) == 1, table
