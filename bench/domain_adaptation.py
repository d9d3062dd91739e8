r"""What each step of domain adaptation buys, on the real all-MiniLM-L6-v2 weights: ChemProt and
ACL-ARC (../shared/data/domain), fine-tuned four ways under one recipe.

    .venv/bin/python -m bench.domain_adaptation [--tasks=chemprot,citation_intent] [--seeds=1]
        [--tapt_steps=200] [--num_train_epochs=2] [--work_dir=DIR]

    (1) as is          MiniLM fine-tuned (run_classifier --task_name=scibert_jsonl)
    (2) TAPT           continued masked-LM pretraining on the task's train text first
                       (create_pretraining_data --objective=none, run_pretraining; MiniLM has no
                       masked-LM head, so the head is built fresh), then fine-tuned
    (3) new vocab      extend_vocab on the train text (--max_new_tokens over [unusedN] lines),
                       convert_checkpoint --extend_vocab (new rows: the mean of their pieces'),
                       then fine-tuned
    (4) new vocab + TAPT  (3)'s checkpoint, its new rows trained alone for the first half of
                       the TAPT budget (--train_only_new_embeddings_steps), then everything

Every step is the command a user runs, in a process of its own; finished steps are reused from
--work_dir (results.json). Printed: pieces per word before and after the extension; held-out
masked-LM loss and accuracy on the dev text before and after TAPT (before = the fresh head: how
far it has to go) and the head's accuracy along the TAPT run; test micro- and macro-F1 per way
(mean and spread over seeds) beside SciBERT's and "Don't Stop Pretraining"'s figures; each
expected ordering with whether it holds here; each step's wall time on this CPU.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

import numpy as np

from bench.finetune_glue import minilm_checkpoint, read_results
from data_prep import glue
from official.tasks import glue_metrics
from official.training.summaries import read_scalars

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOMAIN = os.path.join(REPO, "..", "shared", "data", "domain")
WAYS = ("as_is", "tapt", "vocab", "vocab_tapt")
TITLES = {"as_is": "(1) as is", "tapt": "(2) TAPT", "vocab": "(3) new vocab",
          "vocab_tapt": "(4) new vocab + TAPT"}
METRIC = {"chemprot": "micro_f1", "citation_intent": "macro_f1"}
# Test figures of BERT-base-sized models (means over the authors' runs): SciBERT's results file
# cls_lr2e5_epochs3.csv (../shared/data/domain/README.md), and Gururangan et al. 2020, Table 5
# (RoBERTa-base; ChemProt micro-F1, ACL-ARC macro-F1).
PUBLISHED = {
    "chemprot": [("BERT-base (base vocab)", 78.8), ("SciBERT, base vocab", 81.0),
                 ("SciBERT, own vocab", 83.4), ("RoBERTa", 81.9), ("RoBERTa + TAPT", 82.6)],
    "citation_intent": [("BERT-base (base vocab)", 59.6), ("SciBERT, base vocab", 69.3),
                        ("SciBERT, own vocab", 66.6), ("RoBERTa", 63.0),
                        ("RoBERTa + TAPT", 67.4)],
}
SEQ, BATCH, PREDICTIONS = 128, 32, 20
ENV = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")


def run(step: str, *command: str) -> float:
    """Runs `python -m command...` from the repository; returns its wall seconds."""
    print(f"  {step}", flush=True)
    started = time.perf_counter()
    result = subprocess.run([sys.executable, "-m", *command], cwd=REPO, env=ENV,
                            capture_output=True, text=True)
    if result.returncode:
        sys.exit(f"{step} failed:\n{result.stderr[-3000:]}")
    return time.perf_counter() - started


def texts(task: str, split: str) -> list[str]:
    with open(os.path.join(DOMAIN, task, f"{split}.txt"), encoding="utf-8") as f:
        return [json.loads(line)["text"] for line in f if line.strip()]


def documents_file(task: str, split: str, folder: str) -> str:
    """The split's texts as pretraining input: each text a document (a blank line after it)."""
    path = os.path.join(folder, f"{split}_text.txt")
    if not os.path.exists(path):
        with open(path + ".tmp", "w", encoding="utf-8") as f:
            f.writelines(text + "\n\n" for text in texts(task, split))
        os.replace(path + ".tmp", path)
    return path


class Bench:
    def __init__(self, args):
        self.args = args
        self.work = args.work_dir
        os.makedirs(self.work, exist_ok=True)
        self.results_file = os.path.join(self.work, "results.json")
        self.results = (json.load(open(self.results_file)) if os.path.exists(self.results_file)
                        else {})
        self.minilm = minilm_checkpoint(self.work)

    def save(self) -> None:
        with open(self.results_file + ".tmp", "w") as f:
            json.dump(self.results, f, indent=1)
        os.replace(self.results_file + ".tmp", self.results_file)

    def cached(self, key: str, make) -> dict:
        if key not in self.results:
            self.results[key] = make()
            self.save()
        return self.results[key]

    # ---- the steps ---------------------------------------------------------------------------

    def extension(self, task: str) -> dict:
        folder = os.path.join(self.work, task)
        os.makedirs(folder, exist_ok=True)

        def make():
            vocab_dir, model_dir = os.path.join(folder, "vocab"), os.path.join(folder, "minilm_ext")
            seconds = run(f"{task}: extend_vocab", "data_prep.extend_vocab",
                          f"--vocab_file={self.minilm}/vocab.txt",
                          f"--input_file={DOMAIN}/{task}/train.txt", "--text_field=text",
                          f"--max_new_tokens={self.args.max_new_tokens}",
                          f"--min_count={self.args.min_count}", f"--output_dir={vocab_dir}")
            seconds += run(f"{task}: convert_checkpoint --extend_vocab",
                           "run_scripts.convert_checkpoint", "--input_format=tf2",
                           f"--input={self.minilm}", f"--extend_vocab={vocab_dir}/vocab.txt",
                           f"--output_dir={model_dir}")
            record = json.load(open(os.path.join(vocab_dir, "vocab_extension.json")))
            return {"model_dir": model_dir, "seconds": seconds,
                    "added": len(record["tokens"]),
                    "pieces_per_word": record["pieces_per_word"],
                    "first_tokens": [t["token"] for t in record["tokens"][:12]]}
        return self.cached(f"{task}/extension", make)

    def records(self, task: str, vocab: str, name: str) -> dict:
        folder = os.path.join(self.work, task)

        def make():
            seconds, dirs = 0.0, {}
            for split in ("train", "dev"):
                dirs[split] = os.path.join(folder, f"records_{name}", split)
                seconds += run(f"{task}: records ({name}, {split})",
                               "data_prep.create_pretraining_data",
                               f"--input_file={documents_file(task, split, folder)}",
                               f"--output_dir={dirs[split]}", f"--vocab_file={vocab}",
                               "--objective=none", f"--max_seq_length={SEQ}",
                               f"--max_predictions_per_seq={PREDICTIONS}",
                               f"--dupe_factor={5 if split == 'train' else 1}",
                               "--num_shards=1")
            return {"dirs": dirs, "seconds": seconds}
        return self.cached(f"{task}/records_{name}", make)

    def mlm_eval(self, task: str, name: str, checkpoint: str, records: dict,
                 output_dir: str) -> dict:
        """Held-out masked-LM loss and accuracy of `checkpoint` on the dev text's records."""
        def make():
            seconds = run(f"{task}: masked-LM eval ({name})", "run_scripts.run_pretraining",
                          f"--input_file={records['dirs']['dev']}/*.tfrecord",
                          f"--output_dir={output_dir}",
                          f"--bert_config_file={checkpoint}/bert_config.json",
                          f"--init_checkpoint={checkpoint}", f"--max_seq_length={SEQ}",
                          f"--max_predictions_per_seq={PREDICTIONS}", "--do_eval",
                          f"--eval_batch_size={BATCH}", "--max_eval_steps=30")
            values = read_results(os.path.join(output_dir, "eval_results.txt"))
            return {"loss": float(values["masked_lm_loss"]),
                    "accuracy": float(values["masked_lm_accuracy"]), "seconds": seconds}
        return self.cached(f"{task}/mlm_{name}", make)

    def tapt(self, task: str, name: str, init: str, vocab: str, new_rows_first: bool) -> dict:
        folder = os.path.join(self.work, task)
        records = self.records(task, vocab, name)
        before = self.mlm_eval(task, f"{name}_before", init, records,
                               os.path.join(folder, f"mlm_{name}_before"))
        output_dir = os.path.join(folder, f"tapt_{name}")

        def make():
            steps = self.args.tapt_steps
            extra = ([f"--train_only_new_embeddings_steps={steps // 2}"] if new_rows_first
                     else [])
            seconds = run(f"{task}: TAPT ({name}, {steps} steps)", "run_scripts.run_pretraining",
                          f"--input_file={records['dirs']['train']}/*.tfrecord",
                          f"--output_dir={output_dir}",
                          f"--bert_config_file={init}/bert_config.json",
                          f"--init_checkpoint={init}", f"--max_seq_length={SEQ}",
                          f"--max_predictions_per_seq={PREDICTIONS}", "--do_train",
                          f"--train_batch_size={BATCH}", f"--num_train_steps={steps}",
                          f"--num_warmup_steps={steps // 10}",
                          f"--learning_rate={self.args.tapt_learning_rate}",
                          f"--save_checkpoints_steps={steps}", "--log_steps=25", *extra)
            return {"seconds": seconds}
        trained = self.cached(f"{task}/tapt_{name}", make)
        for file in ("vocab.txt",):  # the run's folder serves as a model folder
            target = os.path.join(output_dir, file)
            if not os.path.exists(target):
                os.symlink(vocab, target)
        after = self.mlm_eval(task, f"{name}_after", output_dir, records,
                              os.path.join(folder, f"mlm_{name}_after"))
        return {"before": before, "after": after, "seconds": trained["seconds"],
                "model_dir": output_dir}

    def finetune(self, task: str, way: str, model_dir: str, vocab: str, seed: int) -> dict:
        output_dir = os.path.join(self.work, task, f"ft_{way}_seed{seed}")

        def make():
            seconds = run(f"{task}: fine-tune {TITLES[way]} (seed {seed})",
                          "run_scripts.run_classifier", "--task_name=scibert_jsonl",
                          f"--data_dir={DOMAIN}/{task}", f"--vocab_file={vocab}",
                          f"--bert_config_file={model_dir}/bert_config.json",
                          f"--init_checkpoint={model_dir}", f"--output_dir={output_dir}",
                          f"--max_seq_length={SEQ}", f"--train_batch_size={BATCH}",
                          f"--learning_rate={self.args.learning_rate}",
                          f"--num_train_epochs={self.args.num_train_epochs}", f"--seed={seed}",
                          "--do_train", "--do_eval", "--do_predict")
            return dict(test_scores(task, output_dir), seconds=seconds)
        return self.cached(f"{task}/ft_{way}_seed{seed}", make)


def test_scores(task: str, output_dir: str) -> dict:
    """Test micro- and macro-F1 from run_classifier's test_results.tsv (probabilities per
    label, in the task's label order), against the test file's gold labels."""
    processor = glue.get_processor("scibert_jsonl", os.path.join(DOMAIN, task))
    labels = processor.get_labels()
    gold = [labels.index(e.label) for e in processor.get_examples(os.path.join(DOMAIN, task),
                                                                    "test")]
    probabilities = np.loadtxt(os.path.join(output_dir, "test_results.tsv"), ndmin=2)
    return glue_metrics.task_metrics("scibert_jsonl", gold, probabilities.argmax(axis=1))


def spread(values: list[float]) -> str:
    mean = statistics.mean(values)
    if len(values) < 2:
        return f"{100 * mean:.1f} (1 seed)"
    return f"{100 * mean:.1f} +/- {100 * statistics.stdev(values):.1f}"


def report(bench: Bench, task: str, extension: dict, tapts: dict, scores: dict) -> None:
    metric = METRIC[task]
    print(f"\n== {task} ==")
    ppw = extension["pieces_per_word"]
    print(f"pieces per word on the train text: {ppw['before']:.3f} -> {ppw['after']:.3f} "
          f"with {extension['added']} new tokens (first: {', '.join(extension['first_tokens'])})")
    print("held-out masked-LM on the dev text (30 batches of 32):")
    for name, t in tapts.items():
        print(f"  {name:<5} before TAPT loss {t['before']['loss']:.3f} acc "
              f"{t['before']['accuracy']:.3f}  after loss {t['after']['loss']:.3f} acc "
              f"{t['after']['accuracy']:.3f}  ({t['seconds']:.0f} s of TAPT)")
        curve = read_scalars(os.path.join(t["model_dir"], "train"))
        print("        the fresh head while training (step: masked-LM accuracy): " + ", ".join(
            f"{step}: {values['masked_lm_accuracy']:.3f}" for step, values in sorted(
                curve.items()) if "masked_lm_accuracy" in values))
    print(f"test F1 (x100), mean over seeds; {task}'s metric is {metric}:")
    for way in WAYS:
        runs = scores[way]
        print(f"  {TITLES[way]:<22} micro {spread([r['micro_f1'] for r in runs]):<16} "
              f"macro {spread([r['macro_f1'] for r in runs]):<16} "
              f"({statistics.mean(r['seconds'] for r in runs):.0f} s a run)")
    print("published (BERT-base-sized, full budgets): " + "; ".join(
        f"{name} {value}" for name, value in PUBLISHED[task]))
    mean = {way: statistics.mean(r[metric] for r in scores[way]) for way in WAYS}
    seeds = len(scores["as_is"])
    noise = (max(statistics.stdev([r[metric] for r in scores[w]]) for w in WAYS) if seeds > 1
             else None)
    checks = [(f"TAPT lowers held-out MLM loss ({name})",
               t["after"]["loss"] < t["before"]["loss"]) for name, t in tapts.items()]
    margin = mean["tapt"] - mean["as_is"]
    # With one seed there is no spread to beat: the check is not judged (None).
    checks.append((f"(2) TAPT beats (1) by more than the seed spread ({100 * margin:+.1f}"
                   + (f" vs {100 * noise:.1f})" if noise is not None else "; 1 seed: no spread)"),
                   margin > noise if noise is not None else None))
    checks.append(("(3) new vocab >= (1) as is (SciBERT: own vocab above base vocab on "
                   "ChemProt)", mean["vocab"] >= mean["as_is"]))
    checks.append(("(4) new vocab + TAPT >= (2) TAPT", mean["vocab_tapt"] >= mean["tapt"]))
    for text, holds in checks:
        verdict = "not judged" if holds is None else "holds" if holds else "does not hold"
        print(f"  {verdict}: {text}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", default="chemprot,citation_intent")
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument("--tapt_steps", type=int, default=200)
    parser.add_argument("--tapt_learning_rate", type=float, default=1e-4)
    parser.add_argument("--num_train_epochs", type=float, default=2.0)
    parser.add_argument("--learning_rate", type=float, default=5e-5)
    parser.add_argument("--max_new_tokens", type=int, default=500)
    parser.add_argument("--min_count", type=int, default=5)
    parser.add_argument("--work_dir", default=os.path.join(REPO, "..", "benchwork", "domain"))
    args = parser.parse_args()
    bench = Bench(args)
    print(f"CPU: {platform.processor() or platform.machine()}, {os.cpu_count()} cores; MiniLM "
          f"(all-MiniLM-L6-v2), seq {SEQ}, batch {BATCH}, fine-tuning {args.num_train_epochs} "
          f"epochs at {args.learning_rate}, TAPT {args.tapt_steps} steps at "
          f"{args.tapt_learning_rate}, {args.seeds} seed(s)", flush=True)
    base_vocab = os.path.join(bench.minilm, "vocab.txt")
    summaries = []
    for task in args.tasks.split(","):
        extension = bench.extension(task)
        ext_dir = extension["model_dir"]
        ext_vocab = os.path.join(ext_dir, "vocab.txt")
        tapts = {"base": bench.tapt(task, "base", bench.minilm, base_vocab, False),
                 "ext": bench.tapt(task, "ext", ext_dir, ext_vocab, True)}
        models = {"as_is": (bench.minilm, base_vocab),
                  "tapt": (tapts["base"]["model_dir"], base_vocab),
                  "vocab": (ext_dir, ext_vocab),
                  "vocab_tapt": (tapts["ext"]["model_dir"], ext_vocab)}
        scores = {way: [bench.finetune(task, way, *models[way], seed)
                        for seed in range(args.seeds)] for way in WAYS}
        summaries.append((task, extension, tapts, scores))
    for summary in summaries:
        report(bench, *summary)


if __name__ == "__main__":
    main()
