"""run_scripts/examine_checkpoint.py and run_scripts/examination/: which examinations apply,
their commands at a budget's sizes, the report gathered from hand-made stage outputs and its
HTML against hand-written pages, bad input refused without TensorFlow, and one run end to end
(then run again: every stage reused) on a tiny checkpoint with its masked-LM head and a tiny
classifier export.
"""

import csv
import glob
import json
import os

import pytest

from run_scripts.examination import plan as planning
from run_scripts.examination.markdown_html import to_html
from run_scripts.examination.report import Section, Shown, markdown, write
from tests import cli
from tests.test_crows_pairs import CSV_HEADER, ROWS, write_checkpoint
from tests.test_robustness_classifier import make_export
from tests.test_startup import run_without_tensorflow

BLIMP_PARADIGMS = len(glob.glob(os.path.join(cli.REPO, "data", "blimp_sample", "data",
                                             "*.jsonl.gz")))


def _subject(folder, head=False, classifier=None, encoder=None, score_class=None):
    (folder / "bert_model.ckpt.index").write_bytes(b"")  # a prefix's place is all a plan reads
    return planning.Subject(str(folder), None, str(folder / "vocab.txt"), True, 64, head,
                            classifier, encoder, score_class)


def _body(page: str) -> list[str]:
    return page.split("<body>\n", 1)[1].split("\n</body>", 1)[0].splitlines()


def test_markdown_subset_renders_as_written_by_hand():
    text = ("# Title <1>\n\nA *short* line\nand `a < b` with **bold**.\n\n"
            "| name | n |\n|---|---:|\n| [x](x.html) | 1 |\n\n"
            "- one\n  - one.1\n    * one.1.1\n  - one.2\n* two\n\n"
            "```\n| not a table |\n```\n![plot](d/p.png)\n")
    assert _body(to_html(text, "T")) == [
        "<h1>Title &lt;1&gt;</h1>",
        "<p>A <em>short</em> line and <code>a &lt; b</code> with <strong>bold</strong>.</p>",
        "<table>", "<tr><th>name</th><th align=right>n</th></tr>",
        '<tr><td><a href="x.html">x</a></td><td align=right>1</td></tr>', "</table>",
        "<ul><li>one<ul><li>one.1<ul><li>one.1.1</li></ul></li><li>one.2</li></ul></li>"
        "<li>two</li></ul>",
        "<pre><code>| not a table |</code></pre>",
        '<p><img alt="plot" src="d/p.png"></p>']
    assert "<title>T</title>" in to_html(text, "T")


def test_report_gathers_each_stages_files_and_says_why_one_was_skipped(tmp_path):
    ran = tmp_path / "probing"
    ran.mkdir()
    (ran / "results.md").write_text("# Probe\n\nours 91.0, published 96.7\n## By layer\n"
                                    "##### deep\n", encoding="utf-8")
    (ran / "table.txt").write_text("layer  acc\n0      0.5\n", encoding="utf-8")
    (ran / "summary.json").write_text(json.dumps({"Accuracy under attack": 36.9, "words": 1200,
                                                  "recipe": "textfooler", "list": [1, 2]}))
    (ran / "curves.png").write_bytes(b"\x89PNG")
    sections = [
        Section("probing", "What it knows", "A probe", str(ran),
                (Shown("markdown", "results.md"), Shown("text", "table.txt"),
                 Shown("json", "summary.json"), Shown("image", "curves.png"),
                 Shown("markdown", "missing.md")), "Paper: 96.7.", seconds=75.0),
        Section("blimp", "What it knows", "BLiMP", str(tmp_path / "blimp"),
                (Shown("markdown", "minimal_pairs.md"),), skipped="the checkpoint has no "
                                                                "masked-LM head"),
        Section("seat", "Bias", "SEAT", str(tmp_path / "seat"), (), seconds=3.0, reused=True)]
    md_path, html_path = write(str(tmp_path), "Examination of x", [("budget", "quick")],
                               sections)
    text = open(md_path, encoding="utf-8").read()
    assert text == markdown("Examination of x", [("budget", "quick")], sections, str(tmp_path))
    assert text.splitlines()[:12] == [
        "# Examination of x", "", "| setting | value |", "|---|---|", "| budget | quick |", "",
        "| examination | what it is | outcome |", "|---|---|---|",
        "| probing | A probe | ran in 1 min 15 s |",
        "| blimp | BLiMP | skipped: the checkpoint has no masked-LM head |",
        "| seat | SEAT | reused (3 s when it ran) |", ""]
    probing = text.split("### A probe\n", 1)[1].split("### BLiMP", 1)[0]
    assert probing.splitlines() == [
        "", "*probing: ran in 1 min 15 s.*", "",
        "#### Probe", "", "ours 91.0, published 96.7", "##### By layer", "###### deep", "",
        "```", "layer  acc", "0      0.5", "```", "",
        "| | |", "|---|---:|", "| Accuracy under attack | 36.9 |", "| words | 1200 |",
        "| recipe | textfooler |", "",
        "![curves.png](probing/curves.png)", "", "*missing.md was not written.*", "",
        "Published: Paper: 96.7.", ""]
    assert "*blimp: skipped: the checkpoint has no masked-LM head.*" in text
    assert "minimal_pairs.md" not in text  # a skipped examination's files are not looked for
    page = open(html_path, encoding="utf-8").read()
    assert '<img alt="curves.png" src="probing/curves.png">' in page
    assert "<h2>What it knows</h2>" in page and "<h4>Probe</h4>" in page
    assert "<tr><td>Accuracy under attack</td><td align=right>36.9</td></tr>" in page


def test_plan_skips_what_does_not_apply_and_sizes_samples_by_budget(tmp_path):
    quick = planning.BUDGETS["quick"]
    data = planning.data_for(quick)
    shipped = os.path.join(cli.REPO, "data")
    assert data.ud_files == tuple(os.path.join(shipped, "ud_ewt_sample", f"{s}.conllu")
                                  for s in ("train", "dev", "test"))
    assert data.blimp_dir == os.path.join(shipped, "blimp_sample")
    assert data.eec_templates == os.path.join(shipped, "eec_templates", "eec_templates.json")
    work = planning.make_plan(_subject(tmp_path), data, quick, str(tmp_path / "out"),
                              ("vocab",))
    skipped = {s.name: s.skipped for s in work.sections}
    assert [s.name for s in work.sections] == list(planning.NAMES)
    assert skipped == {"probing": None, "blimp": "the checkpoint has no masked-LM head",
                       "vocab": "--skip", "checklist": "no classifier export (--export_dir)",
                       "attack": "no classifier export (--export_dir)",
                       "seat": "no sentence-encoder export (--sentence_encoder_export_dir)",
                       "crows_pairs": "the checkpoint has no masked-LM head",
                       "eec": "no classifier export (--export_dir)", "names": None}
    assert [stage.name for stage in work.stages] == ["probing", "names"]
    assert work.stages[1].command[-4:-1] == ["--words_per_emotion=1", "--names_per_group=3",
                                             "--folds=3"]
    probing = work.stages[0]
    assert probing.command[:2] == ["-m", "run_scripts.probe_layers"]
    assert "--max_train_sentences=300" in probing.command
    assert f"--output_dir={tmp_path / 'out' / 'probing'}" in probing.command
    assert probing.outputs == [str(tmp_path / "out" / "probing")]
    assert probing.inputs[0] == str(tmp_path / "bert_model.ckpt.index")  # the weights' checksums


def test_plan_of_a_classifier_runs_eec_only_with_its_score_class(tmp_path):
    full = planning.BUDGETS["full"]
    given = planning.data_for(full, attack_file="dev.tsv", blimp_dir="blimp",
                              crows_pairs_file=None)
    assert given.attack_file == "dev.tsv" and given.blimp_dir == "blimp"
    export = tmp_path / "export"
    (export / "variables").mkdir(parents=True)
    (export / "variables" / "variables.index").write_bytes(b"")
    with_class = planning.make_plan(_subject(tmp_path, True, str(export), None, "1"), given,
                                    full, str(tmp_path / "out"), ())
    without = planning.make_plan(_subject(tmp_path, True, str(export)), given, full,
                                 str(tmp_path / "out"), ())
    eec = next(s for s in with_class.stages if s.name == "eec")
    assert eec.command[2:5] == ["--test=eec", f"--export_dir={export}", "--score_class=1"]
    assert next(s.skipped for s in without.sections if s.name == "eec").startswith(
        "no --eec_score_class")
    blimp = next(s for s in with_class.stages if s.name == "blimp")
    assert "--pairs_per_paradigm=100" in blimp.command
    attack = next(s for s in with_class.stages if s.name == "attack")
    assert "--max_examples=500" in attack.command and "--input_file=dev.tsv" in attack.command


def test_crows_pairs_sample_holds_the_first_pairs_as_crows_reads_them(tmp_path):
    from official.robustness import crows_pairs

    source = tmp_path / "pairs.csv"
    source.write_text(CSV_HEADER + "\n".join(ROWS) + "\n", encoding="utf-8")
    sample = planning.crows_pairs_sample(str(source), 2, str(tmp_path / "inputs"))
    with open(source, newline="", encoding="utf-8") as f:
        first_two = list(csv.DictReader(f))[:2]
    assert [p.sent_more for p in crows_pairs.read_pairs(sample)] == [
        row["sent_more"] for row in first_two]
    assert planning.crows_pairs_sample(str(source), None, str(tmp_path)) == str(source)


@pytest.mark.parametrize("flags, expected", [
    (["--init_checkpoint=/nowhere/ckpt", "--budget=quick"], "/nowhere/ckpt: no checkpoint there"),
    (["--budget=quick", "--skip=blimp,probes"], "--skip=blimp,probes: probes is not an "
                                                "examination"),
    (["--budget=huge"], "--budget=huge: value should be one of <quick|full>"),
    (["--budget=full", "--attack_file=/nowhere.tsv"], "--attack_file=/nowhere.tsv: no such file"),
])
def test_bad_input_is_one_line_before_tensorflow(tmp_path, flags, expected):
    write_checkpoint(tmp_path)
    out = tmp_path / "out"
    result = run_without_tensorflow("run_scripts.examine_checkpoint",
                                    f"--init_checkpoint={tmp_path}", f"--output_dir={out}",
                                    *flags)
    assert "ImportError" not in result.stderr
    cli.refused(result, "examine_checkpoint: ", expected)
    assert not out.exists()


def test_examines_a_tiny_checkpoint_and_classifier_end_to_end_then_reuses_it(tmp_path):
    """The first run's domain text is not JSON lines: its vocab examination fails, the others
    run and the report is written, naming the failure; the second, the text mended, runs the
    vocab examination alone."""
    write_checkpoint(tmp_path)
    export = make_export(tmp_path / "exports", ["0", "1"])
    pairs, texts = tmp_path / "pairs.csv", tmp_path / "dev.tsv"
    pairs.write_text(CSV_HEADER + "\n".join(ROWS) + "\n", encoding="utf-8")
    texts.write_text("sentence\tlabel\nthe flight was good\t1\ni hate this crew\t0\n",
                     encoding="utf-8")
    domain = tmp_path / "domain.jsonl"
    domain.write_text("the flight was good\n", encoding="utf-8")
    out = tmp_path / "out"
    command = ["run_scripts.examine_checkpoint", f"--init_checkpoint={tmp_path}",
               "--max_seq_length=32", f"--export_dir={export}", "--eec_score_class=1",
               f"--attack_file={texts}", f"--crows_pairs_file={pairs}",
               f"--domain_file={domain}", "--budget=quick", "--skip=probing,checklist",
               f"--output_dir={out}"]
    cli.refused(cli.run_module(*command), "examine_checkpoint: vocab failed (the report says "
                "how; rerunning the same command runs only what did not finish): "
                f"{out / 'REPORT.md'}")
    report = (out / "REPORT.md").read_text(encoding="utf-8")
    rows = [line[2:-2].split(" | ") for line in report.splitlines() if line.startswith("| ")]
    outcomes = {row[0]: row[-1] for row in rows if row[0] in planning.NAMES}
    vocab_log = (out / "logs" / "vocab.log").read_text(encoding="utf-8").strip().splitlines()
    assert vocab_log[-1].startswith(f"vocab_report: {domain}")
    assert outcomes.pop("vocab") == (f"failed: exit status 1, its last line: {vocab_log[-1]} "
                                     "(log: logs/vocab.log)")
    assert {name: outcome.split(" in ")[0] for name, outcome in outcomes.items()} == {
        "probing": "skipped: --skip", "checklist": "skipped: --skip",
        "seat": "skipped: no sentence-encoder export (--sentence_encoder_export_dir)",
        **{name: "ran" for name in ("blimp", "attack", "crows_pairs", "eec", "names")}}
    assert "*vocab_fit.json was not written.*" not in report  # a failed one shows no files
    blimp = json.loads((out / "blimp" / "minimal_pairs.json").read_text(encoding="utf-8"))
    assert blimp["overall"]["pairs"] == 5 * BLIMP_PARADIGMS  # quick: 5 of each paradigm
    crows = json.loads((out / "crows_pairs" / "bias_results.json").read_text(encoding="utf-8"))
    assert crows["pairs"] == len(ROWS)
    for name in ("crows_pairs", "eec", "names"):  # each stage's own tables, in the report
        table = (out / name / "bias_results.md").read_text(encoding="utf-8")
        assert all(line in report for line in table.splitlines() if line.startswith("|"))
    assert (out / "REPORT.html").read_text(encoding="utf-8").count("<table>") >= 7
    # quick's sample of the EEC: 32 contexts x (20 noun phrases + 2 x 2 x 3 names), 3 folds.
    eec = json.loads((out / "eec" / "bias_results.json").read_text(encoding="utf-8"))
    assert eec["sentences"] == 32 * 32 and eec["names_per_group"] == 3
    names = json.loads((out / "names" / "bias_results.json").read_text(encoding="utf-8"))
    assert (names["occurrences"], names["folds"]) == (32 * 12, 3)

    domain.write_text(json.dumps({"text": "the flight was good"}) + "\n", encoding="utf-8")
    again = cli.succeeded(cli.run_module(*command))
    assert again.stderr.count("reused (done before") == 5
    report = (out / "REPORT.md").read_text(encoding="utf-8")
    assert "| vocab | The vocab on a domain text: pieces per word, words split (vocab_report) " \
           "| ran in " in report
