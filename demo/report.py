"""The demo's report: output_dir/REPORT.md with its figures, and PNG plots of the curves.

    python -m demo.report --output_dir=demo_output --run_file=demo_output/stages/last_run.json
    (run by demo/run_demo.py, last)

Everything is read back from what the stages wrote: the vocab, the records' summary.json, the
TensorBoard curves and eval_results.txt of run_pretraining and run_classifier, the classifier's
test_results.tsv (scored here against the task's test.tsv labels), the exported models' answers
(on new sentences, and on the passages' test split: the passage accuracy), the passage run's
long_documents.json, probe_layers' probe_results.json, examine_checkpoint's REPORT.md (linked,
with its table of examinations), and run_demo's --run_file (its budget, data paths and stage
times). The baseline is the majority class of the training set, predicted
for every test sentence (or passage). Prints the headline figures and where the files are.
"""

from __future__ import annotations

import json
import math
import os
import platform
import statistics
import time
from typing import Sequence

import numpy as np
from absl import flags

from data_prep import attack_data, glue
from official import command_line, records
from official.atomic_files import open_atomically
from official.console import format_seconds
from official.probing import report as probing_report
from official.robustness.text_words import WordText
from official.tasks import glue_metrics, long_doc_settings
from official.training.summaries import read_eval_results, read_scalars

flags.DEFINE_string("output_dir", None, "run_demo's output_dir: the report goes there.")
flags.DEFINE_string("run_file", None, "run_demo's account of the run (budget, data, stages).")
FLAGS = flags.FLAGS

REPORT_FILE = "REPORT.md"
# The header of examine_checkpoint's table of examinations (run_scripts/examination/report.py).
EXAMINATION_TABLE = "| examination | what it is | outcome |"
PRETRAINING_PLOT = "pretraining.png"
FINETUNING_PLOT = "finetuning.png"
# (output folder, how the report names it)
CLASSIFIERS = (("classifier", "pretrained, then fine-tuned"),
               ("classifier_adapters", "pretrained, then adapters trained (encoder frozen)"),
               ("classifier_scratch", "fine-tuned from random weights"),
               ("classifier_distilled", "distilled from the first into its first layer"))


def _test_accuracy(output_dir: str, labels: list[str], gold: list[str]) -> float:
    """Accuracy of run_classifier's test_results.tsv (probabilities per line) on `gold`."""
    probabilities = np.loadtxt(os.path.join(output_dir, "test_results.tsv"), ndmin=2)
    predicted = probabilities.argmax(axis=-1)
    ids = [labels.index(label) for label in gold]
    return glue_metrics.task_metrics("tsv", ids, predicted)["accuracy"]


def _checkpoint_bytes(folder: str) -> int:
    """The bytes of the checkpoint in `folder` (what a task costs to keep: best/)."""
    return sum(os.path.getsize(os.path.join(folder, name)) for name in os.listdir(folder)
               if ".index" in name or ".data-" in name)


def _classifier_figures(out: str, task_dir: str) -> dict[str, dict]:
    """Per classifier: its dev curve, training loss curve, best dev accuracy and test accuracy;
    and the majority-class baseline."""
    processor = glue.get_processor(glue.TSV_TASK, task_dir)  # as run_classifier reads it
    labels = processor.get_labels()
    train, dev, test = ([e.label for e in processor.get_examples(task_dir, split)]
                        for split in glue.SPLITS)
    majority = max(labels, key=train.count)
    figures = {"majority": {"label": majority,
                            "dev_accuracy": dev.count(majority) / len(dev),
                            "test_accuracy": test.count(majority) / len(test)},
               "labels": labels, "train_examples": len(train), "dev_examples": len(dev),
               "test_examples": len(test)}
    for name, _ in CLASSIFIERS:
        directory = os.path.join(out, name)
        best = read_eval_results(os.path.join(directory, "best", "eval_results.txt"))
        figures[name] = {
            "dev_curve": {step: v["eval_accuracy"]
                          for step, v in read_scalars(os.path.join(directory, "eval")).items()},
            "loss_curve": {step: v["loss"]
                           for step, v in read_scalars(os.path.join(directory, "train")).items()},
            "best_dev_accuracy": best["eval_accuracy"], "best_step": int(best["global_step"]),
            "test_accuracy": _test_accuracy(directory, labels, test),
            "kept_bytes": _checkpoint_bytes(os.path.join(directory, "best"))}
    return figures


def _passage_figures(out: str, passages_dir: str, classified: dict) -> dict:
    """The passage classifier's figures: its run's reading of passages and best dev accuracy,
    the data's counts, the majority-class baseline, and per author the served test passages
    and how many were labelled right."""
    processor = glue.get_processor(glue.TSV_TASK, passages_dir)
    labels = processor.get_labels()
    train, dev, test = (processor.get_examples(passages_dir, split) for split in glue.SPLITS)
    train_labels = [e.label for e in train]
    majority = max(labels, key=train_labels.count)
    words = [len(e.text_a.split()) for e in (*train, *dev, *test)]
    run = os.path.join(out, "classifier_passages")
    best = read_eval_results(os.path.join(run, "best", "eval_results.txt"))
    served = classified["passages"]
    if sorted(p["gold"] for p in served) != sorted(e.label for e in test):
        raise ValueError(f"{passages_dir}: the served passages are not its test split")
    # The record beside the best checkpoint (the stage evaluates, so best/ is kept), read as
    # official/checkpoints/finetuned.py reads it, without loading TensorFlow.
    settings = records.read(os.path.join(run, "best", long_doc_settings.RECORD_FILE),
                            long_doc_settings.LongDocSettings)
    return {"settings": settings, "train_passages": len(train),
            "dev_passages": len(dev), "test_passages": len(test),
            "words": (min(words), max(words)),
            "best_dev_accuracy": best["eval_accuracy"], "best_step": int(best["global_step"]),
            "majority": majority,
            "majority_accuracy": sum(p["gold"] == majority for p in served) / len(served),
            "accuracy": classified["accuracy"], "mean_windows": classified["mean_windows"],
            "per_author": {label: (sum(p["gold"] == label == p["label"] for p in served),
                                   sum(p["gold"] == label for p in served))
                           for label in labels}}


def _save(figure, path: str) -> None:
    """The figure as a PNG at `path`, which appears only when complete."""
    from matplotlib import pyplot as plt

    figure.tight_layout()
    with open_atomically(path, "wb") as f:
        figure.savefig(f, format="png", dpi=100)
    plt.close(figure)


def _plot_pretraining(curve: dict[int, dict[str, float]], vocab_size: int, path: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    steps = sorted(curve)
    figure, (loss_axes, accuracy_axes) = plt.subplots(1, 2, figsize=(11, 4))
    loss_axes.plot(steps, [curve[s]["masked_lm_loss"] for s in steps], label="masked-LM loss")
    loss_axes.axhline(math.log(vocab_size), color="grey", linestyle="--",
                      label=f"chance, ln({vocab_size})")
    loss_axes.set(xlabel="step", ylabel="loss (training, per log window)",
                  title="Pretraining: masked-LM loss")
    loss_axes.legend()
    accuracy_axes.plot(steps, [curve[s]["masked_lm_accuracy"] for s in steps],
                       label="masked-LM accuracy")
    if all("next_sentence_accuracy" in curve[s] for s in steps):
        accuracy_axes.plot(steps, [curve[s]["next_sentence_accuracy"] for s in steps],
                           label="next-sentence accuracy")
        accuracy_axes.axhline(0.5, color="grey", linestyle="--", label="next-sentence chance")
    accuracy_axes.set(xlabel="step", ylabel="accuracy", ylim=(0, 1),
                      title="Pretraining: accuracies")
    accuracy_axes.legend()
    _save(figure, path)


def _plot_finetuning(figures: dict, path: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    figure, (loss_axes, accuracy_axes) = plt.subplots(1, 2, figsize=(11, 4))
    for name, title in CLASSIFIERS:
        loss = figures[name]["loss_curve"]
        loss_axes.plot(sorted(loss), [loss[s] for s in sorted(loss)], label=title)
        dev = figures[name]["dev_curve"]
        accuracy_axes.plot(sorted(dev), [dev[s] for s in sorted(dev)], marker="o", label=title)
    accuracy_axes.axhline(figures["majority"]["dev_accuracy"], color="grey", linestyle="--",
                          label="majority class")
    loss_axes.set(xlabel="step", ylabel="cross-entropy (training)",
                  title="Fine-tuning: training loss")
    loss_axes.legend()
    accuracy_axes.set(xlabel="step (an epoch's end)", ylabel="dev accuracy", ylim=(0, 1),
                      title="Fine-tuning: authorship, dev accuracy")
    accuracy_axes.legend()
    _save(figure, path)


def _size(count: int) -> str:
    return f"{count / 1e6:.2f} MB" if count >= 1e6 else f"{count / 1e3:.0f} kB"


def _table(header: Sequence[str], rows: list[Sequence]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]


def _probing_results(run: dict) -> dict:
    with open(os.path.join(run["probing"], probing_report.RESULTS_FILE), encoding="utf-8") as f:
        return json.load(f)


def _probing_headline(results: dict) -> str:
    best = max(results["layers"], key=lambda e: e["dev"]["accuracy"])
    return (f"part-of-speech probes: best layer {best['layer']} of "
            f"{results['num_hidden_layers']} (test accuracy {best['test']['accuracy']:.3f}, "
            f"selectivity {best['selectivity']['test']:.3f}), the mix's E_s[l] "
            f"{results['mix']['expected_layer']:.2f}")


def _probing_section(run: dict, results: dict) -> list[str]:
    """The probing stage's table and curves (run_scripts.probe_layers' own files)."""
    folder = run["probing"]
    mix = results["mix"]
    words = results["words"]
    return [
        "## Probing: what each layer knows", "",
        f"Linear probes read the pretrained model's word vectors, frozen, layer by layer (0: the "
        f"embedding layer's output), and predict each word's universal part of speech: "
        f"{words['train']} training, {words['dev']} dev and {words['test']} test words of the "
        "shipped UD English-EWT sample (`data/ud_ewt_sample`, a word's vector its first "
        "WordPiece's). The control task gives each word type a random tag of its own (Hewitt & "
        "Liang 2019): selectivity, task minus control accuracy, is what the layer knows beyond "
        "the word's identity. The mix is one probe of all layers, its weights learnt "
        f"(Tenney et al. 2019): E_s[l] = {mix['expected_layer']:.2f}.", "",
        *_table(["layer", "dev accuracy", "test accuracy", "control (test)",
                 "selectivity (test)"],
                [[str(e["layer"]), f"{e['dev']['accuracy']:.3f}", f"{e['test']['accuracy']:.3f}",
                  f"{e['control']['test']['accuracy']:.3f}", f"{e['selectivity']['test']:.3f}"]
                 for e in results["layers"]] +
                [["mix of all", f"{mix['dev']['accuracy']:.3f}", f"{mix['test']['accuracy']:.3f}",
                  "", ""]]),
        "", f"![probing curves]({os.path.basename(folder)}/{probing_report.PLOT_FILE})", ""]


def _attack_results(run: dict) -> tuple[dict, list[dict]]:
    """(TextAttack's summary, each example's attack) of the attack stage."""
    with open(attack_data.summary_path(run["attack"]), encoding="utf-8") as f:
        summary = json.load(f)
    with open(run["attack"], encoding="utf-8") as f:
        return summary, [json.loads(line) for line in f]


def _attack_headline(summary: dict) -> str:
    return (f"attack: accuracy {summary['Original accuracy']:.1f}% -> "
            f"{summary['Accuracy under attack']:.1f}% under attack, "
            f"{summary['Attack success rate']:.1f}% of attacks succeed, "
            f"{summary['Average perturbed word %']:.1f}% of words changed")


def _marked(text: str, changes: list[dict]) -> str:
    """`text` with the changed words in bold (a change names its word by index, the same in
    the original and the perturbed text: a word is replaced by one word)."""
    words = WordText(text)
    for change in sorted(changes, key=lambda c: -c["word"]):
        start, end = words.spans[change["word"]]
        text = f"{text[:start]}**{text[start:end]}**{text[end:]}"
    return text


def _attack_section(summary: dict, examples: list[dict]) -> list[str]:
    """The attack stage's summary and three of its successful attacks."""
    flipped = [e for e in examples if e["status"] == "successful"][:3]
    return [
        "## Where it breaks: a word-substitution attack", "",
        "`run_scripts.attack_classifier` attacked the exported classifier on the test "
        "sentences (TextFooler's search, Jin et al. 2020): the words whose deletion lowers the "
        "right author's probability most are swapped, one at a time, for synonyms from "
        "`data/synonyms_sample` (PPDB's pairs) until the predicted author changes; stop words "
        "are never touched, and sentences it gets wrong are skipped. The demo has no sentence "
        "encoder to check that a swap keeps the meaning (a user gives one with "
        "`--similarity_export_dir`), so read the examples.", "",
        *_table(["TextAttack's measure", "value"],
                [[name, f"{value:g}"] for name, value in summary.items()]),
        "", *_table(["original", "perturbed", "author", "predicted after"],
                    [[_marked(e["original"], e["changes"]),
                      _marked(e["perturbed"], e["changes"]), e["label"],
                      e["predicted"]] for e in flipped]), ""]


def _examination_section(run: dict) -> list[str]:
    """A link to examine_checkpoint's report of the pretrained model, with its table of what
    ran, what was skipped and why (the rows of the report's outcome table)."""
    folder = os.path.basename(run["examination"])
    with open(os.path.join(run["examination"], "REPORT.md"), encoding="utf-8") as f:
        lines = f.read().splitlines()
    start = lines.index(EXAMINATION_TABLE)
    end = next((i for i in range(start, len(lines)) if not lines[i].startswith("|")),
               len(lines))
    outcomes = lines[start:end]
    return [
        "## Every examination that applies", "",
        "`run_scripts.examine_checkpoint --budget=quick` ran every examination that applies to "
        "the pretrained model (BLiMP's minimal pairs scored by its masked LM, its vocab on a "
        "biomedical domain's text, CrowS-Pairs and a names probe for bias), each beside the "
        f"papers' figures: [{folder}/REPORT.md]({folder}/REPORT.md) "
        f"([HTML]({folder}/REPORT.html)). The same command examines any checkpoint "
        "(README: One report for any checkpoint).", "", *outcomes, ""]


def write(out: str, run: dict) -> tuple[list[str], list[str]]:
    """Writes REPORT.md and the two plots in `out`; returns (their paths, the headline figures
    as lines for the terminal). `run`: run_demo's last_run.json."""
    budget, corpus, task_dir = run["budget"], run["corpus"], run["task_dir"]

    with open(os.path.join(out, "vocab.txt"), encoding="utf-8") as f:
        vocab_size = sum(1 for line in f if line.strip())
    with open(os.path.join(out, "pretraining_data", "summary.json"), encoding="utf-8") as f:
        data = json.load(f)
    pretrained = os.path.join(out, "pretrained")
    curve = read_scalars(os.path.join(pretrained, "train"))
    held_out = read_eval_results(os.path.join(pretrained, "eval_results.txt"))
    figures = _classifier_figures(out, task_dir)
    with open(run["classified"], encoding="utf-8") as f:
        classified = [json.loads(line) for line in f]
    with open(run["serving_speed"], encoding="utf-8") as f:
        speed = json.load(f)
    with open(run["classified_passages"], encoding="utf-8") as f:
        passages = _passage_figures(out, run["passages_dir"], json.load(f))
    windows = passages["settings"]
    probing = _probing_results(run)
    attack_summary, attacked = _attack_results(run)
    rates = speed["sentences_per_second"]
    steps = sorted(curve)
    # The first window includes tracing and compiling: the median of the others is the speed.
    speeds = [curve[s]["examples_per_second"] for s in steps[1:]] or \
             [curve[s]["examples_per_second"] for s in steps]
    throughput = statistics.median(speeds)

    plots = [os.path.join(out, PRETRAINING_PLOT), os.path.join(out, FINETUNING_PLOT)]
    _plot_pretraining(curve, vocab_size, plots[0])
    _plot_finetuning(figures, plots[1])

    first, last = curve[steps[0]], curve[steps[-1]]
    lines = [
        "# BERT demo report", "",
        f"Made by `make demo` on {time.strftime('%Y-%m-%d %H:%M')}, {os.cpu_count()} CPU cores "
        f"({platform.machine()}), in {format_seconds(run['seconds'])} (stages reused from an "
        "earlier run take no time; the table at the end gives the time each took when it "
        "ran).", "",
        "## Data", "",
        f"- Corpus: `{corpus}`, {data['documents']} documents, "
        f"{data['input_bytes'] / 1e6:.1f} MB.",
        f"- Vocab learned from it: {vocab_size} WordPieces (`vocab.txt`).",
        f"- Pretraining records: {data['instances']} instances of up to "
        f"{data['options']['max_seq_length']} tokens in {data['num_shards']} shards "
        f"(dupe_factor {data['options']['dupe_factor']}, {data['fraction_masked']:.1%} of "
        f"tokens masked); shard 0 (whole documents) is held out for evaluation.",
        f"- Authorship task (`{task_dir}`): which of "
        f"{len(figures['labels'])} authors ({', '.join(figures['labels'])}) wrote a sentence; "
        f"{figures['train_examples']} training, {figures['dev_examples']} dev and "
        f"{figures['test_examples']} test sentences, dev and test from documents that neither "
        "pretraining nor fine-tuning saw.",
        f"- The same authors on passages (`{run['passages_dir']}`): "
        f"{passages['train_passages']} training, {passages['dev_passages']} dev and "
        f"{passages['test_passages']} test passages of {passages['words'][0]} to "
        f"{passages['words'][1]} words, each consecutive lines of one document; dev and test "
        "from the sentence task's held-out documents.", "",
        "## Pretraining", "",
        f"BERT-Tiny (`bert_config.json`), {steps[-1]} steps of batch "
        f"{budget['pretrain_batch_size']}, learning rate {budget['pretrain_learning_rate']}; "
        f"{throughput:.0f} examples/s (median over the log windows after the first).", "",
        *_table(["", "masked-LM loss", "masked-LM accuracy", "next-sentence accuracy"], [
            [f"training, first {budget['log_steps']} steps", f"{first['masked_lm_loss']:.3f}",
             f"{first['masked_lm_accuracy']:.3f}",
             f"{first.get('next_sentence_accuracy', float('nan')):.3f}"],
            [f"training, last {budget['log_steps']} steps", f"{last['masked_lm_loss']:.3f}",
             f"{last['masked_lm_accuracy']:.3f}",
             f"{last.get('next_sentence_accuracy', float('nan')):.3f}"],
            ["held-out shard (`pretrained/eval_results.txt`)",
             f"{held_out['masked_lm_loss']:.3f}", f"{held_out['masked_lm_accuracy']:.3f}",
             f"{held_out.get('next_sentence_accuracy', float('nan')):.3f}"],
            ["chance", f"{math.log(vocab_size):.3f} (ln {vocab_size})",
             f"{1 / vocab_size:.4f}", "0.500"]]),
        "", f"![pretraining curves]({PRETRAINING_PLOT})", "",
        "## Fine-tuning: authorship attribution", "",
        f"{budget['finetune_epochs']:g} epochs of batch {budget['finetune_batch_size']}, "
        f"learning rate {budget['finetune_learning_rate']}, sequences of "
        f"{budget['finetune_seq_length']} tokens; the dev set picks the best epoch "
        "(`best/`), whose test predictions are scored here. The adapters run "
        f"(`--adapter_size={budget['adapter_size']}`, learning rate "
        f"{budget['adapter_learning_rate']}) trains the adapters, LayerNorms and head "
        "on the frozen pretrained encoder (whose pooler learnt from next-sentence "
        "prediction), and keeps only those: its `best/` is what each "
        "further task would cost to keep beside the one shared encoder.", "",
        *_table(["model", "best dev accuracy", "test accuracy", "kept per task (best/)"], [
            *[[title, f"{figures[name]['best_dev_accuracy']:.3f} (step "
                      f"{figures[name]['best_step']})", f"{figures[name]['test_accuracy']:.3f}",
               _size(figures[name]["kept_bytes"])]
              for name, title in CLASSIFIERS],
            [f"majority class ({figures['majority']['label']})",
             f"{figures['majority']['dev_accuracy']:.3f}",
             f"{figures['majority']['test_accuracy']:.3f}", ""]]),
        "", f"![fine-tuning curves]({FINETUNING_PLOT})", "",
        "## Distillation: a faster student", "",
        f"The fine-tuned classifier taught a student made of its layer "
        f"{budget['student_layers']} (with its embeddings, pooler and head: "
        f"`run_classifier --teacher_checkpoint --student_layers={budget['student_layers']}`), "
        "trained on its soft targets at temperature 2 and on the labels, the same budget. Both "
        f"exports serve the test sentences, timed side by side ({budget['serving_rounds']} rounds, "
        "`demo/serving_speed.py`).", "",
        *_table(["model", "test accuracy", "kept (best/)",
                 *[f"sentences/s, batch {b}" for b in speed["batch_sizes"]]], [
            [title, f"{figures[name]['test_accuracy']:.3f}",
             _size(figures[name]["kept_bytes"]),
             *[f"{rates[role][str(b)]:.0f}" for b in speed["batch_sizes"]]]
            for name, title, role in (("classifier", "teacher (fine-tuned)", "teacher"),
                                      ("classifier_distilled", "distilled student",
                                       "student"))]),
        "", "Student over teacher: " + ", ".join(
            f"{rates['student'][str(b)] / rates['teacher'][str(b)]:.2f}x at batch {b}"
            for b in speed["batch_sizes"]) + ".", "",
        "## Serving: the exported SavedModel on new sentences", "",
        "Loaded with TensorFlow and tensorflow_text alone (`demo/classify.py`); each sentence is "
        "by one of the five authors, from a book the data does not hold.", "",
        *_table(["sentence", "from", "predicted", "probability"],
                [[c["text"], c["source"], c["label"], f"{c['probability']:.2f}"]
                 for c in classified]),
        "", "## Long documents: whole passages, read in windows", "",
        "The pretrained model fine-tuned on the passages (`run_classifier --long_doc=windows`, "
        f"`classifier_passages/`): each passage is read in windows of "
        f"{budget['finetune_seq_length']} tokens, {windows.doc_stride} apart, whose logits are "
        f"pooled into one prediction (`--window_pool={windows.window_pool}`); training reads at "
        f"most {windows.max_windows} windows of a passage ({budget['passages_epochs']:g} epochs "
        f"of {budget['passages_batch_size']} passages a step), evaluation all of them. Best dev "
        f"accuracy {passages['best_dev_accuracy']:.3f} (step {passages['best_step']}). Its "
        "export (`export_passages/`) takes a passage's whole text and makes the windows in the "
        "graph; `demo/classify.py` served it the test passages, from books that neither "
        "pretraining nor fine-tuning saw. Beside it, the sentence classifier on the test "
        "sentences.", "",
        *_table(["model", "test items", "windows per item (mean)", "test accuracy",
                 "majority class"], [
            ["pretrained, then fine-tuned on sentences (`classifier`)",
             f"{figures['test_examples']} sentences", "1",
             f"{figures['classifier']['test_accuracy']:.3f}",
             f"{figures['majority']['test_accuracy']:.3f} ({figures['majority']['label']})"],
            ["pretrained, then fine-tuned on passages in windows (`export_passages`, served)",
             f"{passages['test_passages']} passages", f"{passages['mean_windows']:.1f}",
             f"{passages['accuracy']:.3f}",
             f"{passages['majority_accuracy']:.3f} ({passages['majority']})"]]),
        "", "Passages labelled right per author (the test passages are uneven: read these, "
        "not only accuracy): " + ", ".join(
            f"{label} {right}/{count}" for label, (right, count)
            in passages["per_author"].items()) + ".",
        "", *_probing_section(run, probing), *_attack_section(attack_summary, attacked),
        *_examination_section(run),
        "## Stages", "",
        *_table(["stage", "time", "command"],
                [[stage["name"], format_seconds(stage["seconds"]) +
                  (" (reused)" if stage["reused"] else ""),
                  "`python " + " ".join(stage["command"]) + "`"] for stage in run["stages"]]),
        ""]
    path = os.path.join(out, REPORT_FILE)
    with open_atomically(path) as f:
        f.write("\n".join(lines))
    headline = [
        f"held-out masked-LM accuracy {held_out['masked_lm_accuracy']:.3f} (loss "
        f"{held_out['masked_lm_loss']:.2f}, chance {math.log(vocab_size):.2f}), next-sentence "
        f"accuracy {held_out.get('next_sentence_accuracy', float('nan')):.3f}",
        *[f"authorship test accuracy, {title}: {figures[name]['test_accuracy']:.3f} "
          f"({_size(figures[name]['kept_bytes'])} kept)" for name, title in CLASSIFIERS],
        f"authorship test accuracy, majority class: {figures['majority']['test_accuracy']:.3f}",
        f"authorship passage accuracy, windows, unseen books: {passages['accuracy']:.3f} "
        f"({passages['test_passages']} passages, {passages['mean_windows']:.1f} windows each on "
        f"average; sentences: {figures['classifier']['test_accuracy']:.3f})",
        "distilled student's serving speed over the teacher's: " + ", ".join(
            f"{rates['student'][str(b)] / rates['teacher'][str(b)]:.2f}x at batch {b}"
            for b in speed["batch_sizes"]),
        _probing_headline(probing), _attack_headline(attack_summary)]
    return [path, *plots], headline


def prepare() -> dict:
    """The run's account."""
    with open(FLAGS.run_file, encoding="utf-8") as f:
        return json.load(f)


def job(run: dict) -> None:
    try:
        written, headline = write(FLAGS.output_dir, run)
    except KeyError as e:  # an account without a field the report reads
        raise ValueError(f"{FLAGS.run_file}: no {e}") from None
    print("\n".join("   " + line for line in headline))
    print("   " + ", ".join(written))


if __name__ == "__main__":
    command_line.main("report", prepare, job, required=["output_dir", "run_file"],
                      tensorflow=False)
