"""run_ablation_study --join (official/ablation/joined.py): a study run in pieces, its rows and
seeds from several runs' results.json summarised as one.

The library's join is checked on results.json files written by the report itself from
hand-made numbers, against means and sample standard deviations worked by hand; each refusal
names the file; and the entry point joins a seed run earlier into the next run's report, whose
numbers are checked against the two runs' own eval_results.txt.
"""

from __future__ import annotations

import json
import math

import pytest

from official.ablation import joined, report, studies
from official.ablation.results import Source, summarised
from official.ablation.settings import AblationSettings
from official.ablation.summary import Summary
from tests.cli import refused, run_module, succeeded
from tests.test_run_ablation_study import MODULE, toy_flags, write_mrpc

STUDY = studies.study("objectives", "tiny", 100)


def _settings(tmp_path, **changes) -> AblationSettings:
    return AblationSettings(**{"study": "objectives", "corpus": ("/data/books/a.txt.gz",),
                               "output_dir": str(tmp_path / "out"), "size": "tiny", **changes})


def _write_run(folder, values, unigram, seconds, experiment) -> str:
    """A results.json as a finished run writes it: `values` {row: {column: {seed: number}}},
    each number's source under the run's own rows/<row>/seed<k>/."""
    folder.mkdir(parents=True, exist_ok=True)
    sources = {(row, seed, key): Source(str(folder / "rows" / row / f"seed{seed}" / key /
                                            "eval_results.txt"), "eval_accuracy", "percent")
               for row, per_column in values.items() for key, by_seed in per_column.items()
               for seed in by_seed}
    rows = tuple(r.id for r in STUDY.rows if r.id in values)
    seeds = tuple(sorted({s for _, s, _ in sources}))
    outcome = report.Outcome(STUDY, rows, seeds, ("mlm_acc", "qnli"), summarised(values),
                             sources, [("preset", "--preset=miniature")], str(folder),
                             {report.UNIGRAM: {}, report.CHANCE: {}}, seconds,
                             {report.UNIGRAM: unigram}, experiment)
    return report.write(outcome)[1]


def test_runs_in_pieces_join_into_the_summary_of_all_their_seeds(tmp_path):
    experiment = _settings(tmp_path).experiment()
    first = _write_run(tmp_path / "a", {"bert": {"qnli": {1: 60.0, 2: 62.0}},
                                        "random": {"qnli": {1: 55.0}}},
                       {"mlm_acc": {1: 5.0, 2: 5.5}}, {"bert": 100.0, "random": 10.0},
                       experiment)
    second = _write_run(tmp_path / "b", {"bert": {"qnli": {3: 64.0}}},
                        {"mlm_acc": {3: 6.0}}, {"bert": 50.0}, experiment)
    earlier = [joined.read(path, STUDY, experiment) for path in (first, second)]
    joined.check_apart(earlier, [("random", 2)])
    own = joined.Pieces({"random": {"qnli": {2: 57.0}}}, {}, {"random": 20.0},
                        {report.UNIGRAM: {"mlm_acc": {2: 5.5}}}, {"qnli": 51.7}, ("qnli",))
    pieces = joined.join(own, earlier)
    table = summarised(pieces.values).table
    # BERT: 60, 62, 64 -> mean 62, sample SD 2; random: 55, 57 -> 56, sqrt(2).
    assert (table["bert"]["qnli"].mean, table["bert"]["qnli"].std, table["bert"]["qnli"].n) == \
        (62.0, 2.0, 3)
    assert table["random"]["qnli"].mean == 56.0
    assert math.isclose(table["random"]["qnli"].std, math.sqrt(2.0))
    # Seed 2's baseline was measured by two runs, alike: one number, three seeds in all.
    assert pieces.reference_values[report.UNIGRAM]["mlm_acc"] == {1: 5.0, 2: 5.5, 3: 6.0}
    assert pieces.seconds == {"random": 30.0, "bert": 150.0}
    assert pieces.chance == {"qnli": 51.7}
    # A source keeps pointing at the run that wrote it.
    assert pieces.sources["bert", 3, "qnli"].path == str(
        tmp_path / "b" / "rows" / "bert" / "seed3" / "qnli" / "eval_results.txt")
    outcome = report.of_pieces(pieces, STUDY, "out", experiment)
    assert (outcome.rows, outcome.seeds) == (("bert", "random"), (1, 2, 3))
    # The first pieces name mlm_acc among their columns, but only the baseline has it: it goes.
    assert pieces.measured == ("qnli", "mlm_acc") and outcome.measured == ("qnli",)
    assert outcome.references[report.CHANCE] == {"qnli": Summary(51.7, 0.0, 1)}
    # The baseline's 5.0, 5.5 and 6.0: mean 5.5, sample SD 0.5.
    unigram = outcome.references[report.UNIGRAM]["mlm_acc"]
    assert (unigram.mean, unigram.n) == (5.5, 3) and math.isclose(unigram.std, 0.5)
    text = report.markdown(outcome)
    # Each number's file as it lies in any run's folder, though the pieces ran elsewhere.
    assert "trained on its other 4,463 (QNLI's train set is not available offline; " \
           "run_scripts.run_classifier --task_name=QNLI): `rows/<row>/seed<k>/qnli/" \
           "eval_results.txt`, field `eval_accuracy` x 100" in text
    assert "- BERT (MLM+NSP): 2 min 30 s over 3 seed(s), 50 s a seed" in text
    assert "- Random init (no pretraining): 30 s over 2 seed(s), 15 s a seed" in text


def _edited(path, change) -> None:
    with open(path, encoding="utf-8") as f:
        found = json.load(f)
    change(found)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(found, f)


def _bert_row(found) -> dict:
    return next(row for row in found["rows"] if row["id"] == "bert")


@pytest.mark.parametrize("change, message", [
    (lambda f: f.update(study="sizes"), "a sizes study, not objectives"),
    (lambda f: f["experiment"].update(pretrain_steps=9600),
     "made with --pretrain_steps=9600, this run has --pretrain_steps=1000: only runs of the same "
     "settings join"),
    (lambda f: f.pop("experiment"), "says nothing of its settings"),
    (lambda f: _bert_row(f)["config"].update(hidden_size=64),
     "row bert: another config or other flags than this run's"),
    (lambda f: _bert_row(f).update(id="bart"), "row 'bart' is not a row of the objectives study"),
    (lambda f: _bert_row(f)["values"]["qnli"].update({"2": "62%"}),
     "row bert, qnli: seed '2' = '62%' is not a seed's number"),
], ids=["study", "settings", "old file", "config", "row", "value"])
def test_a_file_of_another_study_or_settings_is_named_and_refused(tmp_path, change, message):
    experiment = _settings(tmp_path).experiment()
    path = _write_run(tmp_path / "a", {"bert": {"qnli": {1: 60.0, 2: 62.0}}},
                      {"mlm_acc": {1: 5.0}}, {"bert": 1.0}, experiment)
    _edited(path, change)
    with pytest.raises(ValueError, match="^--join: " + path + ": ") as caught:
        joined.read(path, STUDY, experiment)
    assert message in str(caught.value)


def test_not_a_results_file_is_named(tmp_path):
    experiment = _settings(tmp_path).experiment()
    (tmp_path / "notes.json").write_text("{\"rows\": 3")
    with pytest.raises(ValueError, match="notes.json: not a results.json of run_ablation_study"):
        joined.read(str(tmp_path / "notes.json"), STUDY, experiment)
    with pytest.raises(ValueError, match="gone.json: no such file"):
        joined.read(str(tmp_path / "gone.json"), STUDY, experiment)


def test_a_row_and_seed_from_two_runs_is_refused(tmp_path):
    experiment = _settings(tmp_path).experiment()
    first = joined.read(_write_run(tmp_path / "a", {"bert": {"qnli": {1: 60.0}}},
                                   {"mlm_acc": {1: 5.0}}, {}, experiment), STUDY, experiment)
    second = joined.read(_write_run(tmp_path / "b", {"bert": {"qnli": {1: 61.0, 2: 62.0}}},
                                    {"mlm_acc": {1: 5.0, 2: 5.5}}, {}, experiment), STUDY,
                         experiment)
    with pytest.raises(ValueError, match=f"b/results.json: row bert, seed 1 is measured by "
                                         f"{tmp_path}/a/results.json too"):
        joined.check_apart([first, second], [])
    with pytest.raises(ValueError, match="row bert, seed 1 is measured by this run"):
        joined.check_apart([first], [("bert", 1)])


def test_a_seeds_reference_measured_apart_must_agree(tmp_path):
    """The same data seed and settings make the same held-out text: another baseline means
    another text."""
    experiment = _settings(tmp_path).experiment()
    earlier = joined.read(_write_run(tmp_path / "a", {"bert": {"qnli": {1: 60.0}}},
                                     {"mlm_acc": {1: 5.0}}, {}, experiment), STUDY, experiment)
    own = joined.Pieces({"no_nsp": {"qnli": {1: 59.0}}}, {}, {},
                        {report.UNIGRAM: {"mlm_acc": {1: 5.2}}}, {}, ("qnli",))
    with pytest.raises(ValueError, match="seed 1's unigram mlm_acc is 5.0, another run's 5.2: "
                                         "not the same held-out text"):
        joined.join(own, [earlier])


def test_the_settings_that_join_leave_out_where_files_are_and_what_runs(tmp_path):
    here = _settings(tmp_path, seeds=1, first_seed=3, rows=("sop",), data_workers=1,
                     glue_dir="/a/glue").experiment()
    there = _settings(tmp_path, output_dir=str(tmp_path / "elsewhere"),
                      corpus=("/other/place/a.txt.gz",), glue_dir="/b/glue").experiment()
    assert here == there
    assert here["corpus"] == ["a.txt.gz"] and here["pretrain_steps"] == 1000
    assert _settings(tmp_path, pretrain_steps=5).experiment() != here


def test_the_command_joins_an_earlier_seed_into_its_report(tmp_path):
    """Seed 1 of the random row, then seed 2 in another output_dir joining it: the second
    report's MRPC is the two runs' own dev accuracies summarised."""
    write_mrpc(tmp_path / "glue")
    flags = ["--measures=none", "--pretrain_steps=2"]
    first = tmp_path / "first"
    succeeded(run_module(MODULE, *toy_flags(tmp_path, *flags, f"--output_dir={first}",
                                            rows="random")))
    second = tmp_path / "second"
    succeeded(run_module(MODULE, *toy_flags(tmp_path, *flags, f"--output_dir={second}",
                                            "--first_seed=2",
                                            f"--join={first / 'results.json'}", rows="random")))
    accuracies = []
    for folder, seed in ((first, 1), (second, 2)):
        lines = (folder / "rows" / "random" / f"seed{seed}" / "mrpc" /
                 "eval_results.txt").read_text().splitlines()
        accuracies.append(100 * float(next(line.split(" = ")[1] for line in lines
                                           if line.startswith("eval_accuracy = "))))
    results = json.loads((second / "results.json").read_text())
    row = next(row for row in results["rows"] if row["id"] == "random")
    assert row["values"]["mrpc"] == {"1": accuracies[0], "2": accuracies[1]}
    mean = sum(accuracies) / 2
    assert math.isclose(row["summary"]["mrpc"]["mean"], mean)
    assert math.isclose(row["summary"]["mrpc"]["std"],
                        math.sqrt(sum((a - mean) ** 2 for a in accuracies)))
    assert row["sources"]["mrpc"]["1"]["path"] == \
        "../first/rows/random/seed1/mrpc/eval_results.txt"
    text = (second / "REPORT.md").read_text()
    assert f"| joined | {first / 'results.json'}: random seed 1 |" in text
    # The same seed again is refused before any work, naming the file.
    again = tmp_path / "again"
    refused(run_module(MODULE, *toy_flags(tmp_path, *flags, f"--output_dir={again}",
                                          f"--join={first / 'results.json'}", rows="random")),
            f"run_ablation_study: --join: {first / 'results.json'}: row random, seed 1 is "
            "measured by this run")
    assert not again.exists()
