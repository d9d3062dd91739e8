"""Tests for demo/run_demo.py: `make demo`'s pipeline end to end at its smoke size on a slice of
the shipped data, every stage's outputs checked, then a rerun that reuses every stage and one
that reruns only the stage whose input changed."""

import json
import os
import subprocess

import pytest

from tests.cli import REPO, run_module

DATA = os.path.join(REPO, "data", "gutenberg")
STAGES = ["vocab", "config", "records", "pretrain", "pretrain_eval", "finetune",
          "finetune_adapters", "finetune_scratch", "distill", "finetune_passages", "probe",
          "export",
          "export_distilled", "export_passages", "classify", "serving_speed", "attack",
          "examine"]
# The vocab stage learns from the corpus in a real process: its time grows with the text.
CORPUS_DOCUMENTS = 5
PASSAGE_WORDS = 150  # each passage of the slice cut to its first words: a few windows each
TREEBANK = os.path.join(REPO, "data", "ud_ewt_sample")
TREEBANK_SENTENCES = {"train": 60, "dev": 20, "test": 20}


def slice_of_shipped_data(root):
    """The first CORPUS_DOCUMENTS documents of the corpus, the first rows of each split, the
    labels; the same of the passages, each cut to its first PASSAGE_WORDS words."""
    with open(os.path.join(DATA, "corpus.txt"), encoding="utf-8") as f:
        documents = f.read().split("\n\n")[:CORPUS_DOCUMENTS]
    (root / "corpus.txt").write_text("\n\n".join(documents) + "\n", encoding="utf-8")
    task = root / "authorship"
    task.mkdir()
    for name, rows in (("labels.txt", None), ("train.tsv", 200), ("dev.tsv", 40),
                       ("test.tsv", 40)):
        with open(os.path.join(DATA, "authorship", name), encoding="utf-8") as f:
            lines = f.readlines()
        (task / name).write_text("".join(lines if rows is None else lines[:rows + 1]),
                                 encoding="utf-8")
    passages = root / "authorship_passages"
    passages.mkdir()
    for name, rows in (("labels.txt", None), ("train.tsv", 16), ("dev.tsv", 4),
                       ("test.tsv", 6)):
        with open(os.path.join(DATA, "authorship_passages", name), encoding="utf-8") as f:
            lines = f.read().splitlines()
        if rows is not None:
            lines = lines[:1] + [" ".join(text.split()[:PASSAGE_WORDS]) + "\t" + label
                                 for text, label in (line.split("\t") for line in
                                                     lines[1:rows + 1])]
        (passages / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    treebank = root / "treebank"
    treebank.mkdir()
    for split, count in TREEBANK_SENTENCES.items():
        with open(os.path.join(TREEBANK, f"{split}.conllu"), encoding="utf-8") as f:
            blocks = f.read().split("\n\n")[:count]
        (treebank / f"{split}.conllu").write_text("\n\n".join(blocks) + "\n\n",
                                                  encoding="utf-8")
    return str(root / "corpus.txt"), str(task), str(passages), str(treebank)


def run_demo(out, corpus, task_dir, passages_dir, treebank_dir, sentences, *flags):
    result = run_module(
        "demo.run_demo", "--smoke", f"--output_dir={out}", f"--corpus={corpus}",
        f"--task_dir={task_dir}", f"--passages_dir={passages_dir}",
        f"--treebank_dir={treebank_dir}", f"--sentences={sentences}", *flags)
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
    corpus, task_dir, passages_dir, treebank_dir = slice_of_shipped_data(root)
    sentences = root / "sentences.txt"
    sentences.write_text(open(os.path.join(REPO, "demo", "sentences.txt")).read())
    out = root / "out"
    # Two stages at a time, each once those it reads are done (the machine's two cores); the
    # rerun below goes one stage at a time, as `make demo` does.
    stdout = run_demo(out, corpus, task_dir, passages_dir, treebank_dir, sentences, "--jobs=2")
    return {"out": out, "stdout": stdout, "corpus": corpus, "task_dir": task_dir,
            "passages_dir": passages_dir, "treebank_dir": treebank_dir, "sentences": sentences}


def test_every_stage_runs_and_leaves_its_outputs(demo_run):
    out, stdout = demo_run["out"], demo_run["stdout"]
    assert [f"== [{i}/18]" in stdout for i in range(1, 19)] == [True] * 18
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
    probing = json.loads((out / "probing" / "probe_results.json").read_text())
    assert [e["layer"] for e in probing["layers"]] == [0, 1, 2]  # BERT-Tiny's two layers
    assert probing["task"] == "upos" and len(probing["mix"]["weights"]) == 3
    assert all("selectivity" in e for e in probing["layers"])
    attacked = [json.loads(line) for line in (out / "attack.jsonl").read_text().splitlines()]
    assert len(attacked) == 40 and all(a["label"] in labels for a in attacked)
    summary = json.loads((out / "attack.summary.json").read_text())
    assert summary["Number of skipped attacks"] == sum(a["status"] == "skipped"
                                                       for a in attacked)


def test_the_passage_classifier_reads_whole_passages_in_windows(demo_run):
    out = demo_run["out"]
    run = out / "classifier_passages"
    # Windows of 64 tokens half a window apart; the SMOKE budget's 2 windows a passage in training.
    record = json.loads((run / "best" / "long_documents.json").read_text())
    assert record == {"long_doc": "windows", "doc_stride": 31, "max_windows": 2,
                      "window_loss": "document", "window_pool": "mean_logits"}
    assert (run / "best" / "eval_results.txt").exists()
    predicted = [[float(p) for p in line.split("\t")]
                 for line in (run / "test_results.tsv").read_text().splitlines()]
    assert len(predicted) == 6 and all(len(p) == 5 for p in predicted)  # a row per passage
    versions = os.listdir(out / "export_passages")
    assert len(versions) == 1
    assert (out / "export_passages" / versions[0] / "saved_model.pb").exists()
    served = json.loads((out / "classified_passages.json").read_text())
    assert served["export"].endswith(os.path.join("export_passages", versions[0]))
    labels = (out.parent / "authorship_passages" / "labels.txt").read_text().split()
    test = (out.parent / "authorship_passages" / "test.tsv").read_text().splitlines()[1:]
    passages = served["passages"]
    assert [p["gold"] for p in passages] == [line.split("\t")[1] for line in test]
    assert all(p["label"] in labels and 1 / 5 <= p["probability"] <= 1 for p in passages)
    # Each passage whole: 150 words are 150 tokens or more, over 62 a window and 31 a stride.
    assert all(p["words"] == PASSAGE_WORDS and p["num_windows"] >= 4 for p in passages)
    # The export serves a passage as the run predicted it.
    assert [p["label"] for p in passages] == [labels[max(range(5), key=row.__getitem__)]
                                              for row in predicted]
    right = sum(p["label"] == p["gold"] for p in passages)
    assert served["accuracy"] == pytest.approx(right / 6)
    assert served["mean_windows"] == pytest.approx(
        sum(p["num_windows"] for p in passages) / 6)


def test_the_report_has_the_figures_and_the_plots(demo_run):
    out = demo_run["out"]
    report = (out / "REPORT.md").read_text()
    for heading in ("## Data", "## Pretraining", "## Fine-tuning: authorship attribution",
                    "## Distillation: a faster student", "## Serving",
                    "## Long documents: whole passages, read in windows", "## Stages"):
        assert heading in report
    for row in ("| held-out shard", "| pretrained, then fine-tuned |",
                "| pretrained, then adapters trained (encoder frozen) |",
                "| fine-tuned from random weights |",
                "| distilled from the first into its first layer |",
                "| distilled student |", "Student over teacher: ", "| majority class ("):
        assert row in report
    assert "It is a truth universally acknowledged" in report
    served = json.loads((out / "classified_passages.json").read_text())
    assert (f"| 6 passages | {served['mean_windows']:.1f} | {served['accuracy']:.3f} |"
            in report)
    assert "| pretrained, then fine-tuned on sentences (`classifier`) | 40 sentences | 1 |" \
        in report
    assert "- The same authors on passages (" in report
    assert "16 training, 4 dev and 6 test passages of 150 to 150 words" in report
    assert "Passages labelled right per author" in report
    assert "## Probing: what each layer knows" in report
    assert "![probing curves](probing/probe_curves.png)" in report
    assert "| mix of all |" in report
    assert "## Where it breaks: a word-substitution attack" in report
    assert "| Accuracy under attack |" in report
    # The smoke size's examination: the vocab's fit alone, the rest skipped (--skip).
    assert ("[examination/REPORT.md](examination/REPORT.md) ([HTML](examination/REPORT.html))"
            in report)
    assert (out / "examination" / "REPORT.html").exists()
    examined = (out / "examination" / "REPORT.md").read_text()
    assert "| vocab | The vocab on a domain text: pieces per word, words split (vocab_report) " \
           "| ran in " in examined and examined.count("| skipped: ") == 8
    outcomes = [line for line in examined.splitlines()
                if " | skipped: " in line or " | ran in " in line]
    assert all(line in report for line in outcomes) and len(outcomes) == 9
    for plot in ("pretraining.png", "finetuning.png", "probing/probe_curves.png"):
        data = (out / plot).read_bytes()
        assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 10_000
    assert "authorship test accuracy, majority class: 0.200" in demo_run["stdout"]
    assert "part-of-speech probes: best layer " in demo_run["stdout"]
    assert "attack: accuracy " in demo_run["stdout"]
    assert (f"authorship passage accuracy, windows, unseen books: {served['accuracy']:.3f} (6 "
            "passages") in demo_run["stdout"]


def test_a_rerun_reuses_every_stage_but_the_one_whose_input_changed(demo_run):
    args = (demo_run["out"], demo_run["corpus"], demo_run["task_dir"],
            demo_run["passages_dir"], demo_run["treebank_dir"], demo_run["sentences"])
    with open(demo_run["sentences"], "a", encoding="utf-8") as f:  # classify's input
        f.write("To be, or not to be, that is the question.\tWilliam Shakespeare, Hamlet\n")
    assert reused_stages(run_demo(*args)) == [s for s in STAGES if s != "classify"]
    assert len((demo_run["out"] / "classified.jsonl").read_text().splitlines()) == 10
    passages = json.loads((demo_run["out"] / "classified_passages.json").read_text())
    assert len(passages["passages"]) == 6


def test_make_demo_fresh_starts_over():
    result = subprocess.run(["make", "-n", "demo", "FRESH=1"], cwd=REPO, capture_output=True,
                            text=True)
    assert "-m demo.run_demo --output_dir=demo_output --fresh" in result.stdout
