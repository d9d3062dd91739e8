"""The ablation studies' logic, without running a stage (official/ablation/): the mean and sample
standard deviation over seeds, the ordering checks against hand-worked cases and against the
papers' own figures, the paper-shaped table, the rows' flags and configs, the task data, and
the parameter count against built encoders (the stages' commands: test_ablation_plan.py)."""

from __future__ import annotations

import dataclasses
import json
import math
import os

import numpy as np
import pytest

from official import configs
from official.ablation import paper, report, studies, task_data
from official.ablation.columns import column
from official.ablation.orderings import (
    FAILS,
    HOLDS,
    UNMEASURED,
    WITHIN,
    AtChance,
    Compare,
    LargerGap,
    chain,
    check,
)
from official.ablation.parameters import count_parameters
from official.ablation.results import Results, Source, collect, read_value, summarised
from official.ablation.summary import Summary, format_summary, summarize
from official.configs import BertConfig

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VOCAB = os.path.join(REPO, "tests", "data", "cased_vocab.txt")
CORPUS = os.path.join(REPO, "tests", "data", "pretraining_sample.txt")


# ---- mean and standard deviation over seeds ---------------------------------------------------

def test_the_mean_and_sample_standard_deviation_of_hand_worked_cases():
    assert summarize([71.0, 73.0, 72.0]) == Summary(72.0, 1.0, 3)
    # 1, 2, 3, 4: mean 2.5, squared deviations 2.25 + 0.25 + 0.25 + 2.25 = 5, over n - 1 = 3.
    four = summarize([1.0, 2.0, 3.0, 4.0])
    assert four.mean == 2.5 and four.std == pytest.approx(math.sqrt(5 / 3), abs=1e-12)
    assert four.std == pytest.approx(np.std([1, 2, 3, 4], ddof=1), abs=1e-12)
    assert summarize([0.5, 0.5]) == Summary(0.5, 0.0, 2)


def test_one_seed_has_no_standard_deviation():
    assert summarize([80.25]) == Summary(80.25, None, 1)
    assert format_summary(summarize([80.25]), 1) == "80.2 ± n/a"
    assert format_summary(summarize([3.0, 5.0]), 2, "+/-") == "4.00 +/- 1.41"
    with pytest.raises(ValueError, match="no values"):
        summarize([])


# ---- the ordering checks ---------------------------------------------------------------------

NAMES = {"a": "A", "b": "B", "c": "C"}


def table_of(**rows):
    """{row: {column: Summary}} from row=(column, values...) pairs."""
    return {row: {key: summarize(values)} for row, (key, *values) in rows.items()}


def test_a_step_holds_only_beyond_two_standard_errors_of_the_difference():
    # a: 70, 72, 74 (mean 72, s 2); b: 78, 79, 80 (mean 79, s 1); se = sqrt(4/3 + 1/3).
    table = table_of(a=("mrpc", 70.0, 72.0, 74.0), b=("mrpc", 78.0, 79.0, 80.0))
    se = math.sqrt(4 / 3 + 1 / 3)
    verdict = check(chain("mrpc", ("a", "b"), "<"), table, NAMES)
    assert verdict.outcome == HOLDS and verdict.holds is True
    assert verdict.line() == (f"A < B on MRPC: holds (7.0 > 2 SE {2 * se:.1f}), "
                              "72.0 +/- 2.0 vs 79.0 +/- 1.0")
    backwards = check(chain("mrpc", ("b", "a"), "<"), table, NAMES)
    assert backwards.outcome == FAILS and backwards.holds is False
    assert check(chain("mrpc", ("b", "a"), ">"), table, NAMES).outcome == HOLDS


def test_a_gap_inside_two_standard_errors_is_within_the_seeds_spread():
    # A gap of 2 against 2 SE = 2 sqrt(4/3 + 4/3) = 3.3: these seeds cannot tell.
    table = table_of(a=("sst2", 70.0, 72.0, 74.0), b=("sst2", 72.0, 74.0, 76.0))
    verdict = check(chain("sst2", ("a", "b"), "<"), table, NAMES)
    assert verdict.outcome == WITHIN and verdict.holds is None
    assert verdict.line().startswith("A < B on SST-2: within the seeds' spread (2.0 within "
                                     "2 SE 3.3)")


def test_a_chain_holds_when_every_step_holds_and_fails_when_any_fails():
    table = table_of(a=("qnli", 60.0, 60.2, 60.4), b=("qnli", 70.0, 70.2, 70.4),
                     c=("qnli", 65.0, 65.2, 65.4))
    assert check(chain("qnli", ("a", "c", "b"), "<"), table, NAMES).outcome == HOLDS
    assert check(chain("qnli", ("a", "b", "c"), "<"), table, NAMES).outcome == FAILS
    wide = table_of(a=("qnli", 60.0, 60.2, 60.4), b=("qnli", 60.0, 70.0, 80.0),
                    c=("qnli", 90.0, 90.2, 90.4))
    assert check(chain("qnli", ("a", "b", "c"), "<"), wide, NAMES).outcome == WITHIN


def test_one_seed_decides_by_the_means_and_says_so():
    table = table_of(a=("mrpc", 70.0), b=("mrpc", 70.5))
    verdict = check(chain("mrpc", ("a", "b"), "<"), table, NAMES)
    assert verdict.outcome == HOLDS and "(one seed: the means alone)" in verdict.line()


def test_cells_of_different_columns_are_named_with_their_columns():
    table = {"a": {"sop_head": summarize([51.0, 52.0, 53.0])},
             "b": {"nsp_head": summarize([78.0, 79.0, 80.0])}}
    verdict = check(Compare((("a", "sop_head"), ("b", "nsp_head")), "<"), table, NAMES)
    assert verdict.claim == "A (SOP (head)) < B (NSP (head))" and verdict.outcome == HOLDS


def test_at_chance_is_within_two_standard_errors_or_three_points_of_it():
    near = {"a": {"sop_head": summarize([52.0, 52.5, 51.5])}}
    assert check(AtChance("a", "sop_head"), near, NAMES).outcome == HOLDS  # 2 points away
    far = {"a": {"sop_head": summarize([60.0, 60.5, 59.5])}}
    verdict = check(AtChance("a", "sop_head"), far, NAMES)
    assert verdict.outcome == FAILS
    assert verdict.line().startswith("A is at chance (50) on SOP (head): does not hold "
                                     "(10.0 from chance; 2 SE 0.6, or 3 points)")


def test_a_missing_row_or_column_is_not_measured():
    table = table_of(a=("mrpc", 70.0))
    verdict = check(chain("mrpc", ("a", "b"), "<"), table, NAMES)
    assert verdict.outcome == UNMEASURED and verdict.holds is None
    assert verdict.line() == "A < B on MRPC: not measured (no B (MRPC))"


def test_a_larger_gap_compares_the_two_columns_differences():
    table = {"a": {"ner": summarize([95.4]), "ner_feature": summarize([94.9])},
             "b": {"ner": summarize([94.9]), "ner_feature": summarize([94.0])}}
    verdict = check(LargerGap("a", "b", "ner_feature", "ner"), table, NAMES)
    # feature-based: 94.9 - 94.0 = 0.9; fine-tuned: 95.4 - 94.9 = 0.5.
    assert verdict.line() == ("A - B is larger on NER feature-based than on NER fine-tuned: "
                              "holds (one seed: the means alone), 0.9 vs 0.5")
    assert check(LargerGap("a", "b", "ner", "ner_feature"), table, NAMES).holds is False


def paper_table(table: paper.PaperTable) -> dict[str, dict[str, Summary]]:
    return {row.id: {key: Summary(value, None, 1) for key, value in row.values.items()}
            for row in table.rows}


def papers_cells(ordering):
    """The ordering with its papers' cells in place of ours (the papers' rows and columns)."""
    if isinstance(ordering, Compare):
        return dataclasses.replace(ordering, cells=ordering.paper)
    if isinstance(ordering, AtChance):
        (row, key), = ordering.paper
        return dataclasses.replace(ordering, row=row, column=key)
    return ordering


@pytest.mark.parametrize("name", ["objectives", "masking", "albert"])
def test_every_expected_ordering_holds_on_the_papers_own_figures(name):
    study = studies.study(name, "mini", 30522)
    table = paper_table(study.paper)
    names = {row.id: row.label for row in study.paper.rows}
    verdicts = [check(papers_cells(o), table, names) for o in study.orderings if o.paper]
    assert all(v.holds is not False for v in verdicts), [v.line() for v in verdicts]
    # Unmeasured only where a paper has no such figure (ALBERT's MRPC).
    assert sum(v.holds is True for v in verdicts) >= 4
    for ordering, verdict in zip([o for o in study.orderings if o.paper], verdicts):
        assert verdict.holds is (True if all(key in table.get(row, {})
                                             for row, key in ordering.paper) else None), \
            verdict.line()


def test_the_size_orderings_hold_on_table_6():
    sizes = paper.sizes({})
    table = paper_table(sizes)
    ids = tuple(row.id for row in sizes.rows)  # the paper's order: smallest first
    names = {row.id: row.label for row in sizes.rows}
    holds = [check(papers_cells(o), table, names).holds for o in studies.size_orderings(ids)]
    assert holds == [True] * 4


# ---- the studies' rows -----------------------------------------------------------------------

def test_the_objectives_rows_and_their_flags():
    study = studies.study("objectives", "mini", 30522)
    rows = {row.id: row for row in study.rows}
    assert [r.name for r in study.rows] == [
        "BERT (MLM+NSP)", "No NSP (split segments)", "No NSP (full segments)",
        "MLM + SOP (ALBERT)", "LTR & No NSP", "Random init (no pretraining)"]
    assert rows["bert"].data == rows["no_nsp"].data  # NSP's records, with and without its loss
    assert rows["no_nsp"].pretraining_flags == ("--nosecond_sentence_loss",)
    assert rows["no_nsp_full"].data == rows["ltr_no_nsp"].data == studies.DataSetting("none")
    assert rows["ltr_no_nsp"].pretraining_flags == ("--objective=ltr",)
    assert rows["ltr_no_nsp"].finetuning_flags == ("--objective=ltr",)
    assert not rows["random"].pretrained and rows["random"].data is None
    assert {r.id: r.second_sentence_head for r in study.rows} == {
        "bert": "nsp", "no_nsp": None, "no_nsp_full": None, "sop": "sop", "ltr_no_nsp": None,
        "random": None}
    assert {r.config for r in study.rows} == {configs.preset("mini", 30522)}


def test_the_masking_rows_are_the_papers_six_mixes():
    study = studies.study("masking", "mini", 30522)
    assert [row.data.flags() for row in study.rows] == [
        ["--objective=nsp"],  # 80/10/10: the generator's default
        ["--objective=nsp", "--masking_mix=1,0,0"],
        ["--objective=nsp", "--masking_mix=0.8,0,0.2"],
        ["--objective=nsp", "--masking_mix=0.8,0.2,0"],
        ["--objective=nsp", "--masking_mix=0,0.2,0.8"],
        ["--objective=nsp", "--masking_mix=0,0,1"]]
    assert [row.name for row in study.rows][:2] == ["80% / 10% / 10%", "100% / 0% / 0%"]
    assert study.rows[1].data.id == "nsp_mix_100_0_0"


def test_the_albert_rows_share_and_factorise_at_the_chosen_size():
    study = studies.study("albert", "mini", 30522)
    shapes = {row.id: (row.config.embedding_width, row.config.hidden_groups,
                       row.config.inner_group_num, row.config.hidden_size)
              for row in study.rows}
    assert shapes == {"not_shared_e_h": (256, 4, 1, 256), "not_shared_e64": (64, 4, 1, 256),
                      "shared_e_h": (256, 1, 1, 256), "shared_e64": (64, 1, 1, 256)}
    assert {row.data.objective for row in study.rows} == {"sop"}
    written = json.loads(study.row("shared_e64").config.to_json_string())
    assert (written["embedding_size"], written["num_hidden_groups"]) == (64, 1)


@pytest.mark.parametrize("size, expected", [
    ("mini", ["L2_H128", "L4_H256", "L4_H512"]),
    ("tiny", ["L2_H128", "L4_H256", "L4_H512"]),
    ("base", ["L8_H512", "L12_H768", "L24_H1024"]),
    ("large", ["L8_H512", "L12_H768", "L24_H1024"]),
    ("L6_H512", ["L6_H256", "L6_H512", "L6_H768"]),
    ("L2_H128", ["L2_H128", "L2_H256", "L2_H512"])])
def test_the_sizes_rows_around_the_chosen_size(size, expected):
    study = studies.study("sizes", size, 1000)
    assert [row.id for row in study.rows] == expected
    assert [row.config.num_hidden_layers * row.config.hidden_size for row in study.rows] == \
        sorted(row.config.num_hidden_layers * row.config.hidden_size for row in study.rows)


def test_an_unknown_study_or_size_is_one_line_naming_the_flag():
    with pytest.raises(ValueError, match=r"^--study=tables: not a study; one of objectives, "):
        studies.study("tables", "mini", 100)
    with pytest.raises(ValueError, match=r"^--size=huge: not a preset; one of tiny, mini, "):
        studies.study("sizes", "huge", 100)


# ---- task data -------------------------------------------------------------------------------

def test_the_sst2_subset_is_a_fixed_sample_with_the_dev_set_as_it_is(tmp_path):
    (tmp_path / "glue" / "SST-2").mkdir(parents=True)
    rows = [f"sentence {i} \t{i % 2}\n" for i in range(50)]
    (tmp_path / "glue" / "SST-2" / "train.tsv").write_text("sentence\tlabel\n" + "".join(rows))
    (tmp_path / "glue" / "SST-2" / "dev.tsv").write_text("sentence\tlabel\nfine \t1\n")
    assert task_data.sst2_subset(str(tmp_path / "glue"), 20, str(tmp_path / "a")) == (20, 50)
    assert task_data.sst2_subset(str(tmp_path / "glue"), 20, str(tmp_path / "b")) == (20, 50)
    first = (tmp_path / "a" / "train.tsv").read_text()
    assert first == (tmp_path / "b" / "train.tsv").read_text()
    lines = first.splitlines(keepends=True)
    assert lines[0] == "sentence\tlabel\n" and len(set(lines[1:])) == 20
    assert set(lines[1:]) <= set(rows) and lines[1:] != rows[:20]
    assert (tmp_path / "a" / "dev.tsv").read_text() == "sentence\tlabel\nfine \t1\n"


def test_the_squad_sample_is_split_by_article(tmp_path):
    def article(title, questions):
        qas = [{"id": f"{title}{i}", "question": "q?",
                "answers": [{"text": "a", "answer_start": 0}, {"text": "a b", "answer_start": 0}]}
               for i in range(questions)]
        return {"title": title, "paragraphs": [{"context": "a b c", "qas": qas}]}

    source = tmp_path / "squad.json"
    source.write_text(json.dumps({"data": [article(t, 3) for t in "abcde"], "version": "1.1"}))
    counts = task_data.squad_split(str(source), 5, 100, str(tmp_path / "split"))
    assert counts == {"train": (2, 5), "dev": (1, 3)}
    train = json.loads((tmp_path / "split" / "train.json").read_text())
    dev = json.loads((tmp_path / "split" / "dev.json").read_text())
    assert [a["title"] for a in train["data"]] == ["a", "b"]  # 4 training articles, 5 questions
    assert [a["title"] for a in dev["data"]] == ["e"]
    assert all(len(qa["answers"]) == 1 for a in train["data"] for p in a["paragraphs"]
               for qa in p["qas"])
    assert len(dev["data"][0]["paragraphs"][0]["qas"][0]["answers"]) == 2
    (tmp_path / "one.json").write_text(json.dumps({"data": [article("a", 2)]}))
    with pytest.raises(ValueError, match="1 article.*needs two or more"):
        task_data.read_articles(str(tmp_path / "one.json"))


# ---- parameters ------------------------------------------------------------------------------

def test_bert_base_and_albert_have_their_published_parameter_counts():
    assert count_parameters(configs.preset("base")) == 109_482_240  # Hugging Face's BertModel
    # albert-base-v2 and albert-large-v2 (E=128, every layer shared; 30,000 pieces), as
    # tests/test_albert.py has them.
    albert = dict(vocab_size=30000, type_vocab_size=2, embedding_size=128, num_hidden_groups=1)
    assert count_parameters(BertConfig(**albert)) == 11_683_584
    assert count_parameters(BertConfig(**albert, hidden_size=1024, num_hidden_layers=24,
                                       num_attention_heads=16, intermediate_size=4096)) == \
        17_683_968


@pytest.mark.parametrize("changes", [
    {}, {"embedding_size": 16}, {"num_hidden_groups": 1}, {"embedding_size": 16,
                                                           "num_hidden_groups": 1},
    {"num_hidden_groups": 2, "num_hidden_layers": 4}])
def test_the_count_is_the_built_encoders(changes):
    from official.modeling.encoder import BertEncoder

    config = BertConfig(**{**dict(vocab_size=100, hidden_size=32, num_hidden_layers=2,
                                  num_attention_heads=2, intermediate_size=48,
                                  max_position_embeddings=40, type_vocab_size=2), **changes})
    encoder = BertEncoder(**config.to_dict())
    assert count_parameters(config) == sum(int(np.prod(v.shape)) for v in encoder.weights)


# ---- results and the report ------------------------------------------------------------------

def write_eval(path, **fields):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{k} = {v}\n" for k, v in sorted(fields.items())))


def test_numbers_are_read_as_their_source_says(tmp_path):
    write_eval(tmp_path / "eval_results.txt", eval_accuracy=0.75, masked_lm_loss=1.5, f1=81.25)
    path = str(tmp_path / "eval_results.txt")
    assert read_value(Source(path, "eval_accuracy", "percent")) == 75.0
    assert read_value(Source(path, "f1", "as_is")) == 81.25
    assert read_value(Source(path, "masked_lm_loss", "exp")) == pytest.approx(math.exp(1.5))
    with pytest.raises(ValueError, match="eval_results.txt: no eval_f1"):
        read_value(Source(path, "eval_f1", "percent"))
    with pytest.raises(ValueError, match="missing.txt: no such file"):
        read_value(Source(str(tmp_path / "missing.txt"), "f1", "as_is"))


def albert_outcome(tmp_path, seeds=(1, 2)):
    """An albert study of two rows on SST-2 whose runs "wrote" hand-picked accuracies."""
    study = studies.study("albert", "tiny", 100)
    rows = ("not_shared_e_h", "shared_e_h")
    accuracy = {("not_shared_e_h", 1): 0.80, ("not_shared_e_h", 2): 0.82,
                ("shared_e_h", 1): 0.78, ("shared_e_h", 2): 0.76}
    sources = {}
    for (row, seed), value in accuracy.items():
        path = tmp_path / "rows" / row / f"seed{seed}" / "sst2" / "eval_results.txt"
        write_eval(path, eval_accuracy=value)
        sources[row, seed, "sst2"] = Source(str(path), "eval_accuracy", "percent")
    measured = study.measured_columns(("sst2",), (), False)
    found = summarised(collect(study, rows, seeds, sources, measured))
    return report.Outcome(study, rows, seeds, measured, found, sources, [("seeds", "1, 2")],
                          str(tmp_path))


def test_the_albert_table_counts_parameters_and_accuracy_per_parameter(tmp_path):
    outcome = albert_outcome(tmp_path)
    assert outcome.measured == ("params", "sst2", "sst2_per_m")
    params = {row: count_parameters(outcome.study.row(row).config) / 1e6
              for row in outcome.rows}
    assert params["shared_e_h"] < params["not_shared_e_h"]
    table = outcome.results.table
    assert table["not_shared_e_h"]["sst2"].mean == pytest.approx(81.0)
    assert table["not_shared_e_h"]["sst2"].std == pytest.approx(math.sqrt(2))
    assert table["shared_e_h"]["sst2_per_m"].mean == pytest.approx(77.0 / params["shared_e_h"])
    intrinsic, fine_tuned = report.tables(outcome)
    assert intrinsic.splitlines()[0] == "| row | params (M) |"
    lines = fine_tuned.splitlines()
    assert lines[0] == "| row | SST-2 | SST-2 / M params |"
    not_shared = params["not_shared_e_h"]
    per_m = np.std([80 / not_shared, 82 / not_shared], ddof=1)
    assert lines[2] == f"| not shared, E=128 (ours) | 81.0 ± 1.4 | {81 / not_shared:.2f} ± " \
                       f"{per_m:.2f} |"
    assert lines[3] == "| ALBERT-base not-shared, E=768 (paper) | 92.8 | 0.85 |"
    assert lines[4].startswith("| all shared, E=128 (ours) |")
    # Parameters are the same for every seed: written without a spread.
    assert intrinsic.splitlines()[2] == f"| not shared, E=128 (ours) | {not_shared:.2f} |"
    # The paper's rows beside none of ours come last.
    assert [line.split(" | ")[0] for line in lines[6:]] == [
        "| ALBERT-base not-shared, E=64 (paper)", "| ALBERT-base all-shared, E=64 (paper)"]


def test_the_report_says_each_ordering_and_where_each_number_came_from(tmp_path):
    outcome = albert_outcome(tmp_path)
    text = report.markdown(outcome)
    # A gap of 4 against 2 SE = 2 sqrt(2/2 + 2/2) = 2.8: it holds.
    assert "- all shared, E=128 < not shared, E=128 on SST-2: holds (4.0 > 2 SE 2.8), 77.0 +/- " \
           "1.4 vs 81.0 +/- 1.4 [ALBERT (issue 32's figures); the paper: 90.6 vs 92.8]" in text
    assert "- not shared, E=128 < all shared, E=128 on SST-2 / M params: holds" in text
    # The E=64 rows were not run: their orderings are said to be unmeasured.
    assert "- all shared, E=64 < not shared, E=64 on SST-2: not measured (no all shared, E=64 " \
           "(SST-2), not shared, E=64 (SST-2)) [ALBERT (issue 32's figures); the paper: 89.4 vs " \
           "91.5]" in text
    assert "Not measured here (their tasks were not run): all shared, E=128 < not shared, " \
           "E=128 on MRPC [ALBERT (issue 32's figures)];" in text
    assert ("- SST-2: dev accuracy (%) after the last fine-tuning epoch (run_scripts."
            "run_classifier --task_name=SST-2, trained on the SST-2 subset): "
            "`rows/<row>/seed<k>/sst2/eval_results.txt`, field `eval_accuracy` x 100") in text
    data = report.to_json(outcome)
    assert data["rows"][1]["values"]["sst2"] == {"1": 78.0, "2": 76.0}
    assert data["rows"][1]["sources"]["sst2"]["2"] == {
        "path": "rows/shared_e_h/seed2/sst2/eval_results.txt", "field": "eval_accuracy",
        "transform": "percent"}
    assert data["rows"][1]["config"]["num_hidden_groups"] == 1
    assert data["orderings"][0]["outcome"] == "holds"
    report.write(outcome)
    assert (tmp_path / "REPORT.md").read_text() == text
    assert json.loads((tmp_path / "results.json").read_text()) == json.loads(json.dumps(data))


def test_the_references_stand_in_the_tables_and_the_resolution_tests_the_base_against_them():
    study = studies.study("objectives", "tiny", 100)
    table = {"bert": {"mlm_loss": summarize([5.0, 5.1, 4.9]), "mlm_acc": summarize([20, 21, 22]),
                      "qnli": summarize([60.0, 61.0, 62.0]), "blimp": summarize([55, 56, 57]),
                      "nsp_head": summarize([64, 65, 66]), "sop_head": summarize([51, 52, 50])},
             "random": {"qnli": summarize([59.0, 60.0, 61.0])}}
    references = {report.UNIGRAM: {"mlm_loss": summarize([6.5, 6.6, 6.7]),
                                   "mlm_acc": summarize([5.0, 5.0, 5.0])},
                  report.CHANCE: {"qnli": Summary(51.7, 0.0, 1), "blimp": Summary(50, 0.0, 1),
                                  "nsp_head": Summary(50, 0.0, 1),
                                  "sop_head": Summary(50, 0.0, 1)}}
    outcome = report.Outcome(study, ("bert", "random"), (1, 2, 3),
                             ("mlm_loss", "mlm_acc", "nsp_head", "sop_head", "blimp", "qnli"),
                             Results({}, table), {}, [], "out", references,
                             {"bert": 3600.0, "random": 600.0})
    intrinsic, fine_tuned = report.tables(outcome)
    assert "| Unigram baseline (the same held-out text) | 5.0 ± 0.0 | — | — | 6.60 ± 0.10 | — |" \
        in intrinsic
    assert "| Majority class / chance | — | 50.0 | 50.0 | — | 50.0 |" in intrinsic
    assert "Random init" not in intrinsic  # no measures of its own
    assert "| Majority class / chance | — | 51.7 |" in fine_tuned  # the QNLI column
    lines = report.resolution(outcome)
    assert lines[0].startswith("BERT (MLM+NSP) < Unigram baseline (the same held-out text) on "
                               "MLM loss: holds")
    assert lines[1].startswith("BERT (MLM+NSP) > Unigram baseline (the same held-out text) on "
                               "MLM acc: holds")
    # A constant has no spread: the test is our seeds' standard error alone.
    assert "BERT (MLM+NSP) > Majority class / chance on QNLI: holds (9.3 > 2 SE 1.2), 61.0 " \
           "+/- 1.0 vs 51.7 +/- 0.0" in lines
    assert lines[-1].startswith("BERT (MLM+NSP) > Random init (no pretraining) on QNLI: "
                                "within the seeds' spread")
    # Its NSP head must beat chance; its SOP head is expected at chance (ALBERT's asymmetry, an
    # ordering of its own), so it is no test of whether the row learnt.
    assert any(line.startswith("BERT (MLM+NSP) > Majority class / chance on NSP (head): holds")
               for line in lines)
    assert not any("SOP" in line for line in lines)
    text = report.markdown(outcome)
    assert "- BERT (MLM+NSP): 1 h 00 min over 3 seed(s), 20 min 00 s a seed" in text


def test_one_seed_is_written_n_a():
    study = studies.study("objectives", "tiny", 100)
    outcome = report.Outcome(study, ("bert", "no_nsp"), (3,), ("qnli",),
                             Results({}, {"bert": {"qnli": Summary(71.25, None, 1)},
                                          "no_nsp": {"qnli": Summary(70.0, None, 1)}}),
                             {}, [], "out")
    lines = report.tables(outcome)[1].splitlines()
    assert lines[0] == "| row | MNLI-m | QNLI | MRPC | SST-2 | SQuAD F1 | SQuAD 2.0 F1 | RACE |"
    assert lines[2] == "| BERT (MLM+NSP) (ours) | — | 71.2 ± n/a | — | — | — | — | — |"
    assert lines[3] == "| BERT-Base (MLM+NSP) (paper) [BERT T5] | 84.4 | 88.4 | 86.7 | 92.7 | " \
                       "88.5 |  |  |"
    assert "over 1 seed (3)" in report.markdown(outcome)
    assert column("mrpc_per_m").title == "MRPC / M params"


def test_a_corpus_of_many_files_is_named_by_count_and_folder():
    assert report._files(("a/x.txt", "b/y.txt")) == "a/x.txt, b/y.txt"
    books = tuple(f"books/{name}.txt.gz" for name in "abcdef")
    assert report._files(books) == "6 files in books"


def test_the_crosslingual_rows_share_one_pretraining_and_the_papers_figures_order_the_languages():
    study = studies.study("crosslingual", "tiny", 8192)
    rows = {row.id: row for row in study.rows}
    assert rows["multi"].data == rows["multi_cs"].data == rows["multi_mix"].data == \
        studies.DataSetting("none", languages=("en", "de", "es"))
    assert rows["en"].data.languages == ("en",) and rows["en"].config == rows["multi"].config
    assert rows["multi_cs"].pretrained_as == rows["multi_mix"].pretrained_as == "multi"
    assert rows["multi_cs"].code_switching and not rows["multi_mix"].code_switching
    assert rows["multi_mix"].finetuning_flags == ("--mix_layers",)
    assert study.cased and study.heldout == rows["multi"].data
    # Pires et al.: mBERT transfers from English to German (89.4) better than to Spanish (85.9).
    table = paper_table(study.paper)
    names = {row.id: row.label for row in study.paper.rows}
    verdicts = [check(papers_cells(o), table, names) for o in study.orderings if o.paper]
    assert [v.holds for v in verdicts] == [True], [v.line() for v in verdicts]
