"""Tests for demo/run_demo.py: `make demo`'s pipeline end to end at its smoke size on a slice of
the shipped data, every stage's outputs checked, then a rerun that reuses every stage and one
that reruns only the stage whose input changed."""

import json
import os
import subprocess
import sys

import pytest

from tests.cli import ENV, REPO

DATA = os.path.join(REPO, "data", "gutenberg")
STAGES = ["vocab", "config", "records", "pretrain", "pretrain_eval", "finetune",
          "finetune_adapters", "finetune_scratch", "distill", "export", "export_distilled",
          "classify", "serving_speed"]


def slice_of_shipped_data(root):
    """The first 10 documents of the corpus, the first rows of each split, the labels."""
    with open(os.path.join(DATA, "corpus.txt"), encoding="utf-8") as f:
        documents = f.read().split("\n\n")[:10]
    (root / "corpus.txt").write_text("\n\n".join(documents) + "\n", encoding="utf-8")
    task = root / "authorship"
    task.mkdir()
    for name, rows in (("labels.txt", None), ("train.tsv", 200), ("dev.tsv", 40),
                       ("test.tsv", 40)):
        with open(os.path.join(DATA, "authorship", name), encoding="utf-8") as f:
            lines = f.readlines()
        (task / name).write_text("".join(lines if rows is None else lines[:rows + 1]),
                                 encoding="utf-8")
    return str(root / "corpus.txt"), str(task)


def run_demo(out, corpus, task_dir, sentences):
    result = subprocess.run(
        [sys.executable, "-m", "demo.run_demo", "--smoke", f"--output_dir={out}",
         f"--corpus={corpus}", f"--task_dir={task_dir}", f"--sentences={sentences}"],
        cwd=REPO, env=ENV, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    assert "Traceback" not in result.stderr
    return result.stdout


def reused_stages(stdout):
    """The stages a run's output says it reused, by name, in order."""
    titles = stdout.split("\n== [")[1:]
    return [STAGES[i] for i, block in enumerate(titles) if ": reused" in block]


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("demo")
    corpus, task_dir = slice_of_shipped_data(root)
    sentences = root / "sentences.txt"
    sentences.write_text(open(os.path.join(REPO, "demo", "sentences.txt")).read())
    out = root / "out"
    stdout = run_demo(out, corpus, task_dir, sentences)
    return {"out": out, "stdout": stdout, "corpus": corpus, "task_dir": task_dir,
            "sentences": sentences}


def test_every_stage_runs_and_leaves_its_outputs(demo_run):
    out, stdout = demo_run["out"], demo_run["stdout"]
    assert [f"== [{i}/13]" in stdout for i in range(1, 14)] == [True] * 13
    assert reused_stages(stdout) == []
    vocab = (out / "vocab.txt").read_text().splitlines()
    assert {"[PAD]", "[CLS]", "[SEP]", "[MASK]", "[UNK]"} <= set(vocab)
    assert json.loads((out / "bert_config.json").read_text())["vocab_size"] == len(vocab)
    summary = json.loads((out / "pretraining_data" / "summary.json").read_text())
    assert summary["instances"] > 0 and summary["num_shards"] == 2
    assert (out / "pretrained" / "model.ckpt-20.index").exists()
    held_out = (out / "pretrained" / "eval_results.txt").read_text()
    assert "masked_lm_accuracy = " in held_out and "global_step = 20" in held_out
    for name in ("classifier", "classifier_adapters", "classifier_scratch",
                 "classifier_distilled"):
        assert (out / name / "best" / "eval_results.txt").exists()
        probabilities = (out / name / "test_results.tsv").read_text().splitlines()
        assert len(probabilities) == 40 and all(len(p.split("\t")) == 5 for p in probabilities)
    # Adapters keep their share of BERT-Tiny: the adapters, LayerNorms, pooler and head.
    def kept(name):
        folder = out / name / "best"
        return sum(os.path.getsize(folder / f) for f in os.listdir(folder) if ".data-" in f)
    assert kept("classifier_adapters") < 0.2 * kept("classifier")
    # The student is BERT-Tiny's first layer: embeddings, pooler and head kept, one layer less.
    student_config = json.loads((out / "classifier_distilled" / "bert_config.json").read_text())
    assert student_config["num_hidden_layers"] == 1
    assert kept("classifier_distilled") < kept("classifier")
    speed = json.loads((out / "serving_speed.json").read_text())
    assert set(speed["sentences_per_second"]) == {"teacher", "student"}
    assert all(rate > 0 for rates in speed["sentences_per_second"].values()
               for rate in rates.values())
    versions = os.listdir(out / "export")
    assert len(versions) == 1 and (out / "export" / versions[0] / "saved_model.pb").exists()
    labels = (out.parent / "authorship" / "labels.txt").read_text().split()
    classified = [json.loads(line) for line in (out / "classified.jsonl").read_text().splitlines()]
    assert len(classified) == 9
    assert all(c["label"] in labels and 1 / 5 <= c["probability"] <= 1 for c in classified)
    assert classified[0]["source"].startswith("Jane Austen")


def test_the_report_has_the_figures_and_the_plots(demo_run):
    out = demo_run["out"]
    report = (out / "REPORT.md").read_text()
    for heading in ("## Data", "## Pretraining", "## Fine-tuning: authorship attribution",
                    "## Distillation: a faster student", "## Serving", "## Stages"):
        assert heading in report
    for row in ("| held-out shard", "| pretrained, then fine-tuned |",
                "| pretrained, then adapters trained (encoder frozen) |",
                "| fine-tuned from random weights |",
                "| distilled from the first into its first layer |",
                "| distilled student |", "Student over teacher: ", "| majority class ("):
        assert row in report
    assert "It is a truth universally acknowledged" in report
    for plot in ("pretraining.png", "finetuning.png"):
        data = (out / plot).read_bytes()
        assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 10_000
    assert "authorship test accuracy, majority class: 0.200" in demo_run["stdout"]


def test_a_rerun_reuses_every_stage_but_the_one_whose_input_changed(demo_run):
    args = demo_run["out"], demo_run["corpus"], demo_run["task_dir"], demo_run["sentences"]
    with open(demo_run["sentences"], "a", encoding="utf-8") as f:  # classify's input
        f.write("To be, or not to be, that is the question.\tWilliam Shakespeare, Hamlet\n")
    assert reused_stages(run_demo(*args)) == [s for s in STAGES if s != "classify"]
    assert len((demo_run["out"] / "classified.jsonl").read_text().splitlines()) == 10


def test_make_demo_fresh_starts_over():
    result = subprocess.run(["make", "-n", "demo", "FRESH=1"], cwd=REPO, capture_output=True,
                            text=True)
    assert "-m demo.run_demo --output_dir=demo_output --fresh" in result.stdout
