"""run_ablation_study as a user runs it (its stage runner, run_scripts/stages.py, has its own
tests in test_stages.py).

The study runs end to end at a toy size: the objectives study's BERT and No NSP rows (three
pretraining data settings, the unigram baseline of the held-out text, two pretrainings from
scratch with their held-out masked LM, BERT's NSP head on held-out NSP and SOP records, BLiMP's
sample zero-shot, MRPC fine-tuned from each) on the shipped pretraining sample, a 3,891-piece
vocab and a toy MRPC written here, with one seed and a few steps: every table and file of the
study is written, and a rerun runs no stage. Then the left-to-right row and the random
initialisation are added, the study is stopped by SIGTERM and resumed. Bad settings are
answered in one line each, in processes where TensorFlow cannot be imported.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from official.tasks.ner_metrics import UPOS_LABELS
from tests.cli import ENV, PATIENCE, REPO, refused, run_module, run_modules, start, succeeded

VOCAB = os.path.join(REPO, "tests", "data", "cased_vocab.txt")
CORPUS = os.path.join(REPO, "tests", "data", "pretraining_sample.txt")
BLIMP = os.path.join(REPO, "data", "blimp_sample")
BLOCKED = os.path.join(REPO, "tests", "without_tensorflow")
MODULE = "run_scripts.run_ablation_study"
WORDS = "the man woman said company year market share price rose fell today week house".split()
FIRST = ("data.none.seed1", "unigram.seed1", "data.nsp.seed1", "bert.seed1.pretrain",
         "data.sop.seed1", "bert.seed1.nsp_head", "bert.seed1.sop_head", "bert.seed1.blimp",
         "bert.seed1.mrpc", "no_nsp.seed1.pretrain", "no_nsp.seed1.blimp", "no_nsp.seed1.mrpc")


def write_mrpc(glue_dir, train=32, dev=16):
    """MRPC's layout (a byte-order mark, its header): a pair is a paraphrase when the second
    sentence repeats the first."""
    rng = random.Random(0)
    folder = glue_dir / "MRPC"
    folder.mkdir(parents=True)
    for split, size in (("train", train), ("dev", dev)):
        lines = ["\ufeffQuality\t#1 ID\t#2 ID\t#1 String\t#2 String"]
        for i in range(size):
            first = " ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 8)))
            second = first if i % 2 == 0 else " ".join(rng.sample(WORDS, 5))
            lines.append(f"{int(i % 2 == 0)}\t{i}\t{1000 + i}\t{first}\t{second}")
        (folder / f"{split}.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")


def toy_flags(root, *extra, rows="bert,no_nsp", steps=4):
    return ["--study=objectives", f"--rows={rows}", "--tasks=mrpc",
            "--measures=heldout,heads,blimp", f"--corpus={CORPUS}", f"--vocab_file={VOCAB}",
            "--nodo_lower_case", f"--glue_dir={root / 'glue'}", f"--blimp_dir={BLIMP}",
            "--blimp_pairs_per_paradigm=1", f"--output_dir={root / 'study'}", "--size=tiny",
            "--seeds=1", "--max_seq_length=64", "--finetune_max_seq_length=32",
            "--pair_max_seq_length=32", f"--pretrain_steps={steps}", "--pretrain_batch_size=8",
            "--dupe_factor=1", "--max_eval_steps=2", "--finetune_epochs=1",
            "--finetune_batch_size=16", "--eval_batch_size=16", "--dtype=float32", "--jobs=2",
            *extra]


@pytest.fixture(scope="module")
def study_run(tmp_path_factory):
    """The BERT and No NSP rows run, then again (nothing to do); then the LTR and random rows
    added and the study stopped by SIGTERM while LTR's pretraining runs, then the same command
    again, which resumes it."""
    root = tmp_path_factory.mktemp("ablation")
    write_mrpc(root / "glue")
    first = succeeded(run_module(MODULE, *toy_flags(root)))
    evals = sorted((root / "study" / "rows").glob("*/seed1/mrpc/eval_results.txt"))
    mtimes = {path: path.stat().st_mtime_ns for path in evals}
    report = (root / "study" / "REPORT.md").read_text()
    results = json.loads((root / "study" / "results.json").read_text())
    second = succeeded(run_module(MODULE, *toy_flags(root)))
    all_rows = toy_flags(root, rows="bert,no_nsp,ltr_no_nsp,random")
    process = start(MODULE, *all_rows)
    for line in process.stderr:
        if "row LTR & No NSP, seed 1: pretrain" in line and ": running" in line:
            break
    time.sleep(2)
    process.send_signal(signal.SIGTERM)
    stopped = subprocess.CompletedProcess(process.args, process.wait(timeout=PATIENCE),
                                          process.stdout.read(), process.stderr.read())
    stamps = {path.stem: json.loads(path.read_text())["state"]
              for path in (root / "study" / "stages").glob("*.json")}
    resumed = succeeded(run_module(MODULE, *all_rows))
    return {"root": root, "out": root / "study", "first": first, "report": report,
            "results": results, "second": second, "mtimes": mtimes, "stopped": stopped,
            "stamps_when_stopped": stamps, "resumed": resumed}


def progress(result):
    return [line for line in result.stderr.splitlines() if line.startswith("[")]


def test_every_stage_runs_once_naming_its_row_seed_and_stage(study_run):
    lines = progress(study_run["first"])
    running = [line.split(": running")[0] for line in lines if ": running (log: " in line]
    assert len(running) == len(FIRST) and sum(": done in " in line for line in lines) == 12
    assert "row BERT (MLM+NSP), seed 1: its NSP head on held-out SOP records " \
           "(run_scripts.run_pretraining --do_eval)" in "\n".join(running)
    stamps = {p.stem for p in (study_run["out"] / "stages").glob("*.json")}
    assert set(FIRST) <= stamps
    out = study_run["out"]
    # No NSP reads NSP's records and trains no NSP loss; BERT trains it.
    no_nsp, bert = ((out / "logs" / f"{row}.seed1.pretrain.log").read_text()
                    for row in ("no_nsp", "bert"))
    assert "objective nsp, its second-sentence loss left out" in no_nsp
    assert "nsp_loss" not in no_nsp and "nsp_loss" in bert
    unigram = json.loads((out / "data" / "none" / "seed1" / "unigram.json").read_text())
    assert unigram["eval_predictions"] > 0


def test_the_report_has_the_studys_tables_orderings_resolution_and_sources(study_run):
    out, text, results = study_run["out"], study_run["report"], study_run["results"]
    values = {row["id"]: row["values"] for row in results["rows"]}
    assert set(values) == {"bert", "no_nsp"}
    assert set(values["bert"]) == {"mlm_loss", "mlm_acc", "nsp_head", "sop_head", "blimp",
                                   "blimp_same", "mrpc"}
    assert set(values["no_nsp"]) == {"mlm_loss", "mlm_acc", "blimp", "blimp_same", "mrpc"}
    assert all(0 <= v["1"] <= 100 for row in values.values() for k, v in row.items()
               if k != "mlm_loss")
    mrpc = values["bert"]["mrpc"]["1"]
    assert f"| BERT (MLM+NSP) (ours) | — | — | {mrpc:.1f} ± n/a | — | — | — | — |" in text
    assert "| No NSP [BERT T5] (paper)" not in text
    assert "| No NSP (paper) [BERT T5] | 83.9 | 84.9 | 86.5 | 92.6 | 87.9 |  |  |" in text
    assert "| Unigram baseline (the same held-out text) |" in text
    assert "| Majority class / chance |" in text
    assert "## Does the study resolve?" in text
    assert "- BERT (MLM+NSP) < Unigram baseline (the same held-out text) on MLM loss: " in text
    # The rows not run: their orderings are said so, never dropped.
    assert "- LTR & No NSP < No NSP (split segments) on MRPC: not measured (no LTR & No NSP " \
           "(MRPC)) [BERT Table 5; the paper: 77.5 vs 86.5]" in text
    assert "| token budget (every row and seed) | 4 x 8 x 64 = 2,048 positions (32 " \
           "sequences) |" in text
    assert "`rows/<row>/seed<k>/mrpc/eval_results.txt`, field `eval_accuracy` x 100" in text
    assert "`rows/<row>/seed<k>/blimp/minimal_pairs.json`, field `overall.accuracy`" in text
    assert "## Wall time per row" in text
    source = results["rows"][0]["sources"]["mrpc"]["1"]
    assert (out / source["path"]).exists() and source["field"] == "eval_accuracy"
    assert results["rows"][0]["config"]["num_hidden_layers"] == 2
    assert results["references"]["unigram"]["mlm_loss"]["n"] == 1
    # The tables on stdout are the report's.
    assert study_run["first"].stdout.splitlines()[0].startswith("| row | MLM acc | NSP (head)")


def test_a_rerun_reuses_every_finished_stage(study_run):
    lines = progress(study_run["second"])
    assert len(lines) == len(FIRST)
    assert all(line.endswith(": reused (done before with the same command and inputs)")
               for line in lines), lines
    assert {path: path.stat().st_mtime_ns for path in study_run["mtimes"]} == \
        study_run["mtimes"]
    assert study_run["second"].stdout == study_run["first"].stdout


def test_a_study_stopped_by_sigterm_stops_its_stage_and_says_so(study_run):
    stopped = study_run["stopped"]
    assert stopped.returncode == 143, stopped.stderr[-3000:]
    last = stopped.stderr.strip().splitlines()[-1]
    assert last.startswith("run_ablation_study: stopped by SIGTERM: during row "), last
    assert last.endswith(": what was done is kept, and rerunning the same command goes on from "
                         "there")
    stamps = study_run["stamps_when_stopped"]
    assert stamps["data.none.seed1"] == stamps["bert.seed1.mrpc"] == "done"
    assert "started" in {state for name, state in stamps.items()
                         if name.startswith(("ltr_no_nsp.", "random."))}


def test_rows_added_later_run_alone_and_a_stopped_stage_resumes(study_run):
    lines = progress(study_run["resumed"])
    new = [line for line in lines if "row LTR" in line or "row Random" in line]
    assert [line.split(": ")[-1] for line in lines if line not in new] == \
        ["reused (done before with the same command and inputs)"] * len(FIRST)
    assert any(": resuming (log: " in line for line in new), new
    assert any("row Random init (no pretraining), seed 1: fine-tune on MRPC from its random "
               "initialisation" in line for line in new)
    out = study_run["out"]
    # The left-to-right row: its pretraining's config is causal, and its fine-tuning kept it.
    config = json.loads((out / "rows" / "ltr_no_nsp" / "seed1" / "pretrained" /
                         "bert_config.json").read_text())
    assert config["causal_attention"] is True
    assert "--objective=ltr" in (out / "logs" / "ltr_no_nsp.seed1.mrpc.log").read_text()
    assert "no_nsp_full" not in os.listdir(out / "rows")
    assert not (out / "rows" / "random" / "seed1" / "pretrained").exists()
    results = json.loads((out / "results.json").read_text())
    ltr = next(row for row in results["rows"] if row["id"] == "ltr_no_nsp")
    assert {"ntp_loss", "ntp_acc", "blimp", "blimp_same", "mrpc"} == set(ltr["values"])
    text = (out / "REPORT.md").read_text()
    assert "- LTR & No NSP < No NSP (split segments) on MRPC: " in text
    assert "- BERT (MLM+NSP) > Random init (no pretraining) on MRPC: " in text


def test_bad_settings_are_one_line_naming_the_flag_before_any_work(tmp_path):
    (tmp_path / "empty").mkdir()
    (tmp_path / "one_article.json").write_text(json.dumps(
        {"data": [{"title": "t", "paragraphs": [{"context": "c", "qas": []}]}]}))
    write_mrpc(tmp_path / "glue")
    out = tmp_path / "out"
    base = {"study": "objectives", "corpus": CORPUS, "vocab_file": VOCAB, "output_dir": out,
            "glue_dir": tmp_path / "glue", "tasks": "mrpc", "size": "tiny", "measures": "none"}

    def command(**changes):
        values = {**base, **changes}
        return [MODULE, *(f"--{k}={v}" for k, v in values.items() if v is not None)]

    cases = [
        (command(study="tables"), "--study=tables: value should be one of <objectives|sizes|"),
        (command(tasks="mrpc,conll"),
         "--tasks=mrpc,conll: the objectives study runs qnli, sst2, pos, mrpc, squad_sample, "
         "not conll"),
        (command(tasks="qqp"), "--tasks=qqp: qqp is not one; the tasks are qnli, sst2, pos, "),
        (command(measures="blimp,ppl"), "--measures=blimp,ppl: ppl is not one; the measures "
                                        "are heldout, heads, probes, blimp, pos_probe"),
        (command(preset="huge"), "--preset=huge: value should be one of <miniature|reduced>"),
        (command(blimp_dir=tmp_path / "empty", measures="blimp"),
         f"--blimp_dir={tmp_path / 'empty'}: no data/*.jsonl* there (measure blimp; "),
        (command(corpus="/nowhere/corpus.txt"), "--corpus: /nowhere/corpus.txt: no such file"),
        (command(corpus="/nowhere/*.txt"), "--corpus: /nowhere/*.txt matches no file"),
        (command(corpus=""), "--corpus: required (no default corpus under "),
        (command(vocab_file="/nowhere/vocab.txt"), "--vocab_file=/nowhere/vocab.txt: no such "
                                                   "file"),
        (command(glue_dir=tmp_path / "empty"),
         f"--glue_dir={tmp_path / 'empty'}: {tmp_path / 'empty' / 'MRPC' / 'train.tsv'} is not "
         "there (task mrpc)"),
        (command(tasks="squad_sample", squad_file=tmp_path / "one_article.json"),
         "one_article.json: 1 article(s); the sample is split by article, so it needs two"),
        (command(seeds=0), "--seeds=0: must be at least 1"),
        (command(size="huge"), "--size=huge: not a preset; one of tiny, mini, small, "),
        (command(rows="bert,xl"),
         "--rows=bert,xl: xl is not a row of the objectives study; its rows are bert, no_nsp, "
         "no_nsp_full, sop, ltr_no_nsp, random"),
        (command(max_seq_length=1024), "--max_seq_length=1024: must be 8 to 512"),
        (command(study="masking", tasks="conll", conll_dir=tmp_path / "empty"),
         f"--conll_dir={tmp_path / 'empty'}: {tmp_path / 'empty' / 'eng.train'} is not there "
         "(task conll)"),
        (command(study="masking", tasks="conll", conll_dir=tmp_path / "conll"),
         "--feature_based=concat_last_4 reads the last 4 transformer layers: the model has 2 "
         "(--size=tiny; --feature_based=none skips it)"),
    ]
    (tmp_path / "conll").mkdir()
    for name in ("eng.train", "eng.testa"):
        (tmp_path / "conll" / name).write_text("-DOCSTART- -X- O O\n")
    env = dict(ENV, PYTHONPATH=os.pathsep.join([BLOCKED, ENV["PYTHONPATH"]]))
    for (_, expected), result in zip(
            cases, run_modules(*(c for c, _ in cases), env=env)):
        assert "ImportError" not in result.stderr, result.stderr[-2000:]
        refused(result, "run_ablation_study: ", expected)
    assert not out.exists()


def test_the_masking_rows_records_follow_their_mix(tmp_path):
    """The masking study's data stages, as its plan makes them, run by the stage runner: all
    [MASK] and all random tokens, as the rows say."""
    from official.ablation.settings import AblationSettings
    from official.ablation.studies import study
    from official.ablation.task_data import plain_corpus
    from run_scripts.ablation.plan import make_plan
    from run_scripts.stages import ProgressLines, Runner

    settings = AblationSettings(
        study="masking", corpus=(CORPUS,), vocab_file=VOCAB, do_lower_case=False,
        output_dir=str(tmp_path), size="mini", seeds=1, rows=("100_0_0", "0_0_100"),
        tasks=("conll",), measures=(), conll_dir=str(tmp_path), max_seq_length=32,
        dupe_factor=1)
    plan = make_plan(settings, study("masking", "mini", 3891))
    plain_corpus(settings.corpus, plan.corpus)
    stages = [stage for stage in plan.stages if stage.name.startswith("data.")]
    Runner(str(tmp_path / "stages"), str(tmp_path / "logs"), cwd=REPO,
           view=ProgressLines(say=lambda _: None)).run(stages)
    splits = {stage.name: json.loads(
        (tmp_path / "data" / stage.name.split(".")[1] / "seed1" / "summary.json").read_text())
        ["masking_split"] for stage in stages}
    assert splits == {"data.nsp_mix_100_0_0.seed1": {"mask": 1.0, "kept": 0.0, "random": 0.0},
                      "data.nsp_mix_0_0_100.seed1": {"mask": 0.0, "kept": 0.0, "random": 1.0}}


def test_a_dry_run_prints_every_command_and_runs_none(tmp_path):
    write_mrpc(tmp_path / "glue")
    result = succeeded(run_module(MODULE, *toy_flags(tmp_path, "--rows=ltr_no_nsp", "--seeds=2",
                                                     "--measures=none", "--dry_run")))
    commands = [line for line in result.stdout.splitlines() if line.startswith("python -m")]
    assert len(commands) == 6  # per seed: the records, the pretraining, MRPC
    assert sum("--objective=ltr" in c for c in commands) == 4
    assert not (tmp_path / "study").exists()


# ---- the crosslingual study, at a toy size on a slice of data/crosslingual_sample ---------------

# The slice: each language's first lines of text (the vocab's learning, a real process that
# loads TensorFlow, took most of the study's time on the sample's 300), and the EWT sample's
# first sentences, as tests/test_demo.py's treebank.
CROSSLINGUAL_LINES = 100
UD_SENTENCES = {"train": 60, "dev": 20, "test": 20}


def crosslingual_slice(root):
    """data/crosslingual_sample's layout under `root` with each text file cut to its first
    CROSSLINGUAL_LINES lines (the treebanks and word lists whole), and the EWT sample's first
    UD_SENTENCES as UD's file names: (crosslingual_dir, ud_dir)."""
    crosslingual = root / "crosslingual"
    shutil.copytree(os.path.join(REPO, "data", "crosslingual_sample"), crosslingual)
    for text in (crosslingual / "text").glob("*/*.txt"):
        lines = text.read_text(encoding="utf-8").splitlines(keepends=True)
        text.write_text("".join(lines[:CROSSLINGUAL_LINES]), encoding="utf-8")
    ud = root / "ud"
    ud.mkdir()
    for split, count in UD_SENTENCES.items():
        with open(os.path.join(REPO, "data", "ud_ewt_sample", f"{split}.conllu"),
                  encoding="utf-8") as f:
            blocks = f.read().split("\n\n")[:count]
        (ud / f"en_ewt-ud-{split}.conllu").write_text("\n\n".join(blocks) + "\n\n",
                                                      encoding="utf-8")
    return crosslingual, ud


def test_the_crosslingual_study_mixes_languages_tags_zero_shot_and_reports_the_claims(tmp_path):
    """The multilingual rows with code-switching and with a layer mix (so the multilingual
    pretraining they start from runs once): the smoothed corpus, a cased vocab learnt from it,
    its overlap, the tagger fine-tuned on the EWT sample's first sentences and scored on German
    and Spanish; every claim line is in the report, the unmeasured ones said so."""
    crosslingual, ud = crosslingual_slice(tmp_path)
    out = tmp_path / "study"
    result = succeeded(run_module(
        MODULE, "--study=crosslingual", "--rows=multi_cs,multi_mix",
        f"--crosslingual_dir={crosslingual}",
        f"--ud_dir={ud}", f"--output_dir={out}", "--size=tiny", "--seeds=1",
        "--vocab_size=300", "--max_seq_length=64", "--finetune_max_seq_length=32",
        "--pretrain_steps=4", "--pretrain_batch_size=8", "--dupe_factor=1",
        "--max_eval_steps=2", "--finetune_epochs=1", "--finetune_batch_size=16",
        "--eval_batch_size=16", "--dtype=float32", "--jobs=2"))
    ran = {line.split(": running")[0] for line in progress(result) if ": running (log" in line}
    assert len(ran) == 8 and sum(".pretrain" in name for name in ran) == 0
    stamps = {p.stem for p in (out / "stages").glob("*.json")}
    assert stamps == {"corpus.en_de_es", "vocab", "overlap", "data.en_de_es_none.seed1",
                      "unigram.seed1", "multi.seed1.pretrain", "multi_cs.seed1.xpos",
                      "multi_mix.seed1.xpos"}
    mixed = json.loads((out / "corpus" / "en_de_es.json").read_text())
    assert list(mixed["languages"]) == ["en", "de", "es"] and mixed["smoothing"] == 0.7
    vocab = (out / "vocab.txt").read_text(encoding="utf-8").split("\n")
    assert "ü" in vocab and "Ü" in vocab  # cased, accents kept
    results = json.loads((out / "results.json").read_text())
    values = {row["id"]: row["values"] for row in results["rows"]}
    for row in ("multi_cs", "multi_mix"):
        assert {"xpos_en", "xpos_de", "xpos_es", "mlm_acc"} <= set(values[row])
        assert all(0 <= values[row][f"xpos_{lang}"]["1"] <= 100 for lang in ("en", "de", "es"))
    assert values["multi_cs"]["mlm_acc"] == values["multi_mix"]["mlm_acc"]
    # Code-switched training records for the one row, a layer-mixing tagger for the other.
    runs = out / "rows" / "{row}" / "seed1" / "xpos"
    switched = json.loads((Path(str(runs).format(row="multi_cs"))
                           / "en_ewt-ud-train.conllu.tf_record.json").read_text())
    assert switched["copies"] == 1 and "code_switching" in switched["key"]
    for row, mix in (("multi_cs", False), ("multi_mix", True)):  # UD's 17 tags recorded too
        assert json.loads((Path(str(runs).format(row=row)) / "tagger.json").read_text()) == {
            "labels": list(UPOS_LABELS), "mix_layers": mix}
    text = (out / "REPORT.md").read_text()
    assert "| mBERT, English UD POS (paper) [Pires] | 96.8 | 89.4 | 85.9 |" in text
    assert "- English + German + Spanish < + code-switching (CoSDA-ML) on UPOS de (zero-shot): " \
           "not measured" in text
    assert "word-piece overlap" in text and "en-de " in text
    assert "corpus en_de_es" in text
