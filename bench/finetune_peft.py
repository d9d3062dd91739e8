r"""Parameter-efficient fine-tuning against full fine-tuning, on the real all-MiniLM-L6-v2 weights.

    .venv/bin/python -m bench.finetune_peft [--tasks=MRPC,SST-2] \
        [--max_train_examples=SST-2:4000] [--methods=full,adapters,...] [--seeds=12345,...] \
        [--work_dir=DIR]

Two parts, each printed as a table:

accuracy  every method of --methods on every task, each run as a user runs it
          (`python -m run_scripts.run_classifier` with the method's flags, --do_train --do_eval,
          batch 32, the task's max_seq_length, warmup 10%) on ../shared/data/glue: the dev metrics
          of its best epoch (best/eval_results.txt), its trained parameters (% of the model), the
          bytes of its artifact (best/: what a task costs to keep) against the base checkpoint's,
          its wall time and its peak RSS (the process tree, sampled); "vs full" against the
          better of the two full fine-tuning runs. With several --seeds each method runs once
          per seed and its metrics are averaged. The runs' results go to
          DIR/results.json as they finish, so a rerun with the same --work_dir does only what is
          missing.
timing    one training step (the Trainer's compiled loop, batch 32, seq 128, synthetic batches)
          of each method on MiniLM, the methods timed together in rounds (bench/rounds.py) so that
          the machine's drift lands on all of them; the ratio to full fine-tuning per round, its
          median and range.

Each method trains with its usual recipe (`METHODS`): full fine-tuning the original's (lr 5e-5, 3
epochs; and 5 epochs, the PEFT runs' budget); adapters of 64 units adapter-bert's MRPC command (lr
3e-4, 5 epochs); LoRA of rank 8 (alpha 8, query and value) Hu et al.'s learning rate for
RoBERTa-base (5e-4), 5 epochs; BitFit the largest of Ben Zaken et al.'s searched learning rates
(1e-3; bias terms move little at small ones), 5 epochs; IA3 Liu et al.'s T-Few learning rate
(3e-3, with Adafactor there; Adam here), 5 epochs. Each PEFT method runs with the pooler
trained and frozen, the measurement behind official/peft/method.DEFAULT_TRAIN_POOLER. The
issue's targets: each PEFT method within 1.0 point of full fine-tuning's dev accuracy, at most 4%
of the parameters trained, an artifact of at most 5% of the base checkpoint, a step time of at
most 0.85x and a peak RSS below full fine-tuning's.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import statistics
import sys
import tempfile

import keras
import numpy as np
import tensorflow as tf

from bench.finetune_glue import (
    limited_data_dir,
    majority_accuracy,
    minilm_checkpoint,
    read_results,
    train_limits,
)
from bench.process_tree import run_measured
from bench.rounds import load_average, ratios, round_medians, time_in_rounds
from official.configs import BertConfig
from official.modeling.encoder import build_encoder
from official.modeling.models import BertClassifier
from official.peft import methods
from official.peft.method import PeftSettings
from official.tasks.classification import ClassificationTask
from official.training.job_setup import TrainingOptions
from official.training.optimization import create_optimizer, decay_exempt_variables
from official.training.trainer import LoopOptions, Trainer

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SEQ_LENGTH = {"MRPC": 128, "SST-2": 64}  # SST-2's sentences: 64 pieces hold nearly all
TARGET_POINTS, TARGET_TRAINED, TARGET_ARTIFACT = 1.0, 0.04, 0.05
TARGET_STEP, BATCH, TIMING_SEQ = 0.85, 32, 128


@dataclasses.dataclass(frozen=True)
class Method:
    """One way of fine-tuning: run_classifier's flags for it, its learning rate and epochs."""
    title: str
    flags: tuple[str, ...]
    learning_rate: float
    epochs: float

    @property
    def settings(self) -> PeftSettings | None:
        """The method's settings, its flags read as run_classifier reads them."""
        values = dict(flag.lstrip("-").split("=") for flag in self.flags)
        kinds = {flag.name: flag.kind for m in methods.METHODS.values() for flag in m.flags}
        pooler = values.pop(methods.POOLER_FLAG, None)
        return methods.from_flags(
            train_pooler=None if pooler is None else pooler == "true",
            **{name: value == "true" if kinds[name] is bool else kinds[name](value)
               for name, value in values.items()})


METHODS = {
    "full": Method("full fine-tuning", (), 5e-5, 3.0),
    # The PEFT methods' 5 epochs, to tell the budget's share from the method's.
    "full_5_epochs": Method("full fine-tuning, 5 epochs", (), 5e-5, 5.0),
    "adapters": Method("adapters 64, pooler trained",
                       ("--adapter_size=64", "--peft_train_pooler=true"), 3e-4, 5.0),
    "adapters_frozen_pooler": Method("adapters 64, pooler frozen",
                                     ("--adapter_size=64", "--peft_train_pooler=false"), 3e-4, 5.0),
    "lora": Method("LoRA r8, pooler trained",
                   ("--lora_rank=8", "--peft_train_pooler=true"), 5e-4, 5.0),
    "lora_frozen_pooler": Method("LoRA r8, pooler frozen",
                                 ("--lora_rank=8", "--peft_train_pooler=false"), 5e-4, 5.0),
    "bitfit": Method("BitFit, pooler trained",
                     ("--bitfit=true", "--peft_train_pooler=true"), 1e-3, 5.0),
    "bitfit_frozen_pooler": Method("BitFit, pooler frozen",
                                   ("--bitfit=true", "--peft_train_pooler=false"), 1e-3, 5.0),
    "ia3": Method("IA3, pooler trained", ("--ia3=true", "--peft_train_pooler=true"), 3e-3, 5.0),
    "ia3_frozen_pooler": Method("IA3, pooler frozen",
                                ("--ia3=true", "--peft_train_pooler=false"), 3e-3, 5.0),
}
FULL_RUNS = ("full", "full_5_epochs")
DEFAULT_SEED = TrainingOptions.seed  # run_classifier's --seed default


def folder_bytes(path: str, suffixes: tuple[str, ...] = (".index", ".data-00000-of-00001")
                 ) -> int:
    """The bytes of the checkpoint files in `path` (the weights; not the small JSON files)."""
    return sum(os.path.getsize(os.path.join(path, name)) for name in os.listdir(path)
               if name.endswith(suffixes))


def trained_fraction(config: BertConfig, method: Method) -> tuple[int, int]:
    """(trained, all) parameters of a two-label classifier under the method."""
    model = BertClassifier(build_encoder(config), 2)
    if method.settings is not None:
        methods.apply(model, method.settings)
    count = lambda variables: sum(int(np.prod(v.shape)) for v in variables)  # noqa: E731
    return count(model.trainable_variables), count(
        [v for v in model.variables if "float" in v.dtype])


# ---- accuracy ----------------------------------------------------------------------------------

def run_key(task: str, name: str, seed: int) -> str:
    """The run's key in results.json and its output_dir's name (seedless for the default)."""
    return f"{task}/{name}" + ("" if seed == DEFAULT_SEED else f"/seed{seed}")


def run_one(task: str, name: str, seed: int, limit: int | None, model_dir: str,
            work_dir: str) -> dict:
    method = METHODS[name]
    output_dir = os.path.join(work_dir, run_key(task, name, seed).replace("/", "-"))
    command = [
        sys.executable, "-m", "run_scripts.run_classifier", f"--task_name={task}",
        f"--data_dir={limited_data_dir(task, limit, work_dir)}",
        f"--vocab_file={os.path.join(model_dir, 'vocab.txt')}",
        f"--bert_config_file={os.path.join(model_dir, 'bert_config.json')}",
        f"--init_checkpoint={model_dir}", f"--output_dir={output_dir}", "--do_train",
        "--do_eval", f"--max_seq_length={SEQ_LENGTH[task]}", f"--train_batch_size={BATCH}",
        "--eval_batch_size=64", f"--learning_rate={method.learning_rate}",
        f"--num_train_epochs={method.epochs:g}", "--log_steps=50", "--keep_checkpoint_max=1",
        f"--seed={seed}", *method.flags]
    print("$", " ".join(command[1:]), flush=True)
    seconds, peak, _, result = run_measured(command, REPO)
    if result.returncode != 0:
        sys.exit(f"{task} {name} failed:\n{result.stderr[-3000:]}")
    best = read_results(os.path.join(output_dir, "best", "eval_results.txt"))
    return {"metrics": {k: float(v) for k, v in best.items()}, "seconds": seconds,
            "peak_rss": peak, "artifact_bytes": folder_bytes(os.path.join(output_dir, "best"))}


def mean_metrics(runs: list[dict]) -> dict[str, float]:
    """Each dev metric averaged over the runs (seeds) of one method."""
    return {k: statistics.mean(r["metrics"][k] for r in runs) for k in runs[0]["metrics"]}


def accuracy(tasks: list[str], names: list[str], seeds: list[int], limits: dict,
             model_dir: str, work_dir: str) -> None:
    results_file = os.path.join(work_dir, "results.json")
    results = {}
    if os.path.exists(results_file):
        with open(results_file, encoding="utf-8") as f:
            results = json.load(f)
    for task in tasks:
        for name in names:
            for seed in seeds:
                key = run_key(task, name, seed)
                if key in results:
                    continue
                results[key] = run_one(task, name, seed, limits.get(task), model_dir, work_dir)
                with open(results_file + ".tmp", "w", encoding="utf-8") as f:
                    json.dump(results, f, indent=1)
                os.replace(results_file + ".tmp", results_file)

    def runs(task: str, name: str) -> list[dict]:
        return [results[run_key(task, name, seed)] for seed in seeds]

    config = BertConfig.from_json_file(os.path.join(model_dir, "bert_config.json"))
    base_bytes = folder_bytes(model_dir)
    print(f"\nall-MiniLM-L6-v2 ({base_bytes / 1e6:.1f} MB checkpoint), batch {BATCH}, seeds "
          f"{', '.join(map(str, seeds))} (metrics averaged; minutes and RSS of the first), "
          f"{load_average()}")
    print("| task (train rows) | method | lr, epochs | dev accuracy (best epoch) | vs full | "
          "other dev metrics | trained params | artifact | minutes | peak RSS |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for task in tasks:
        # The baseline: the better of full fine-tuning's recipes that ran with these seeds.
        fulls = [mean_metrics(runs(task, name)) for name in FULL_RUNS
                 if all(run_key(task, name, seed) in results for seed in seeds)]
        full = max((m["eval_accuracy"] for m in fulls), default=None)
        full_rss = results.get(run_key(task, "full", seeds[0]), {}).get("peak_rss")
        for name in names:
            method, method_runs = METHODS[name], runs(task, name)
            first, metrics = method_runs[0], mean_metrics(method_runs)
            trained, total = trained_fraction(config, method)
            acc = metrics["eval_accuracy"]
            each = "" if len(seeds) == 1 else " (" + ", ".join(
                f"{r['metrics']['eval_accuracy']:.4f}" for r in method_runs) + ")"
            versus = "" if full is None or name in FULL_RUNS else f"{100 * (acc - full):+.1f} pt"
            others = ", ".join(f"{k.removeprefix('eval_')} {v:.4f}" for k, v in
                               sorted(metrics.items())
                               if k.startswith("eval_") and k not in ("eval_loss",
                                                                      "eval_accuracy"))
            rows = "all" if limits.get(task) is None else f"first {limits[task]}"
            rss = "" if full_rss is None else f" ({first['peak_rss'] / full_rss:.2f}x)"
            artifact = first["artifact_bytes"]
            print(f"| {task} ({rows}) | {method.title} | {method.learning_rate:g}, "
                  f"{method.epochs:g} | {acc:.4f}{each} | {versus} | {others} | "
                  f"{trained:,} ({100 * trained / total:.2f}%) | {artifact / 1e6:.2f} MB "
                  f"({100 * artifact / base_bytes:.1f}%) | {first['seconds'] / 60:.1f} | "
                  f"{first['peak_rss'] / 2**20:.0f} MiB{rss} |")
        print(f"| {task} | majority class | | {majority_accuracy(task):.4f} | | | | | | |")


# ---- timing ------------------------------------------------------------------------------------

def train_step(config: BertConfig, method: Method, output_dir: str):
    """One update of the Trainer's compiled loop for a two-label classifier under `method`,
    blocking until done."""
    keras.utils.set_random_seed(0)
    model = BertClassifier(build_encoder(config), 2)
    if method.settings is not None:
        methods.apply(model, method.settings)
    optimizer = create_optimizer("adamw", method.learning_rate, 10_000, 1_000,
                                 decay_exempt=decay_exempt_variables(model))
    big = 10 ** 9  # no log, summary or checkpoint boundary inside the timed calls
    trainer = Trainer(tf.distribute.get_strategy(), model, optimizer,
                      ClassificationTask("MRPC", ["0", "1"]),
                      LoopOptions(output_dir=output_dir, num_train_steps=big,
                                  train_batch_size=BATCH, steps_per_loop=1, log_steps=big,
                                  save_checkpoints_steps=big))
    rng = np.random.default_rng(0)
    n = 8 * BATCH
    features = {"input_word_ids": rng.integers(999, config.vocab_size, (n, TIMING_SEQ),
                                               dtype=np.int32),
                "input_mask": np.ones((n, TIMING_SEQ), np.int32),
                "input_type_ids": np.zeros((n, TIMING_SEQ), np.int32),
                "label_ids": rng.integers(0, 2, n, dtype=np.int32),
                "is_real_example": np.ones(n, np.int32)}
    dataset = tf.data.Dataset.from_tensor_slices(features).repeat().batch(BATCH).prefetch(2)
    # `_train_loop` is the loop users run, without train()'s logging and checkpoints around it.
    iterator = iter(trainer._distribute(lambda context, batch, start: dataset, 0))
    one = tf.constant(1)
    return lambda: trainer._train_loop(iterator, one)["examples"].numpy()


def timing(names: list[str], model_dir: str, work_dir: str, rounds: int, calls: int) -> None:
    config = BertConfig.from_json_file(os.path.join(model_dir, "bert_config.json"))
    steps = {name: train_step(config, METHODS[name], os.path.join(work_dir, f"timing-{name}"))
             for name in names}
    seconds = time_in_rounds(steps, warmup=3, rounds=rounds, timed=calls)
    medians = {name: round_medians(per_round) for name, per_round in seconds.items()}
    print(f"\nOne training step (batch {BATCH}, seq {TIMING_SEQ}), MiniLM, {rounds} rounds of "
          f"{calls} calls, {load_average()}")
    print("| method | seconds per step (median) | vs full (median of rounds) | range |")
    print("|---|---|---|---|")
    for name in names:
        relative = ratios(medians[name], medians["full"]) if "full" in medians else []
        print(f"| {METHODS[name].title} | {statistics.median(medians[name]):.3f} | "
              + (f"{statistics.median(relative):.2f}x | {min(relative):.2f}-{max(relative):.2f}"
                 if relative else " | ") + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", default="MRPC,SST-2")
    parser.add_argument("--max_train_examples", default="SST-2:4000",
                        help="TASK:N,... train on the first N rows of TASK")
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--seeds", default=str(DEFAULT_SEED),
                        help="run_classifier's --seed of each run, comma-separated")
    parser.add_argument("--parts", default="accuracy,timing")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=3)
    parser.add_argument("--work_dir", default=None, help="keep outputs here (default: a temp dir)")
    args = parser.parse_args()
    names = args.methods.split(",")
    unknown = [name for name in names if name not in METHODS]
    if unknown:
        sys.exit(f"--methods: unknown {', '.join(unknown)}; known: {', '.join(METHODS)}")
    limits = train_limits(args.max_train_examples)
    work_dir = args.work_dir or tempfile.mkdtemp(prefix="finetune_peft_")
    model_dir = minilm_checkpoint(work_dir)
    parts = args.parts.split(",")
    if "accuracy" in parts:
        accuracy(args.tasks.split(","), names, [int(seed) for seed in args.seeds.split(",")],
                 limits, model_dir, work_dir)
    if "timing" in parts:
        timing(names, model_dir, work_dir, args.rounds, args.calls)
    print(f"outputs in {work_dir}")


if __name__ == "__main__":
    main()
