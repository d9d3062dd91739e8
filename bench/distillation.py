r"""Knowledge distillation on the real all-MiniLM-L6-v2 weights: accuracy kept, serving speed won.

    .venv/bin/python -m bench.distillation [--tasks=SST-2,MRPC] [--train_examples=SST-2:4000] \
        [--transfer_examples=SST-2:4000] [--rounds=N] [--work_dir=DIR]

Per task, each run as a user runs it (`python -m run_scripts.run_classifier`, the students with
--teacher_checkpoint, --do_train --do_eval, batch 32, warmup 10%, lr 5e-5, 3 epochs; SST-2 at
seq 64, MRPC at 128; ../shared/data/glue):

  teacher     MiniLM (6 layers) fine-tuned on the labelled training rows
  student     3 layers made of the teacher's layers 0, 2, 4 (embeddings, pooler and head too):
    (a) fine-tuned        on the labels alone (run_classifier from the same initialisation)
    (b) distilled         soft targets at T=2 (alpha_soft 0.5, alpha_hard 0.5); on SST-2 the
                          next --transfer_examples training sentences, unlabelled, as transfer data
    (c) + hidden states   (b) with --alpha_hidden=1 (student layer i against teacher layer 0, 2, 4)

The dev accuracy of each run's best epoch (best/eval_results.txt), and the share of the
teacher's it keeps. Then serving: the teacher's and (b)'s classifier exports
(`export_saved_model --export_type=classifier`), raw SST-2 dev sentences in, timed together in
rounds (bench/rounds.py, bench/serving_throughput.py's harness) at batch 1 and 32: sentences/s
and the student's ratio per round (median, range).

The issue's targets: the distilled student keeps >= 97% of the teacher's dev accuracy and beats
(a) by >= 1 point on SST-2; its export serves >= 1.8x the teacher's sentences/s at batch 1 and 32.
Results go to DIR/results.json as runs finish; a rerun with the same --work_dir does what is
missing.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile

import tensorflow as tf

from bench.finetune_glue import GLUE_DIR, majority_accuracy, minilm_checkpoint, read_results
from bench.rounds import load_average, ratios, round_medians, time_in_rounds
from data_prep import glue

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SEQ_LENGTH = {"SST-2": 64, "MRPC": 128}
STUDENT_LAYERS = "0,2,4"
TARGET_KEPT, TARGET_POINTS, TARGET_SPEED = 0.97, 1.0, 1.8
COMMON = ("--do_train", "--do_eval", "--train_batch_size=32", "--eval_batch_size=64",
          "--learning_rate=5e-5", "--num_train_epochs=3", "--log_steps=50",
          "--save_checkpoints_steps=100000")
RUNS = {  # name -> (distilled from the teacher, its own flags); {transfer} filled per task
    "teacher": (False, ()),
    "(a) fine-tuned": (True, (f"--student_layers={STUDENT_LAYERS}", "--alpha_soft=0",
                              "--alpha_hard=1")),
    "(b) distilled": (True, (f"--student_layers={STUDENT_LAYERS}", "--alpha_soft=0.5",
                             "--alpha_hard=0.5", "{transfer}")),
    "(c) + hidden states": (True, (f"--student_layers={STUDENT_LAYERS}", "--alpha_soft=0.5",
                                   "--alpha_hard=0.5", "--alpha_hidden=1", "{transfer}")),
}


def split_train(task: str, labelled: int | None, transfer: int,
                work_dir: str) -> tuple[str, str | None]:
    """(a GLUE folder whose train.tsv is the first `labelled` rows (the task's own folder for
    None), the next `transfer` rows' sentences as a transfer file (None when 0)); made once in
    work_dir."""
    source = os.path.join(GLUE_DIR, task)
    if labelled is None:
        if transfer:
            raise ValueError("transfer data needs a --train_examples limit: it is the rows after")
        return source, None
    folder = os.path.join(work_dir, f"{task}-{labelled}")
    transfer_file = os.path.join(work_dir, f"{task}-transfer-{labelled}-{transfer}.txt")
    with open(os.path.join(source, "train.tsv"), encoding="utf-8") as f:
        header, *rows = f.readlines()
    if not os.path.isfile(os.path.join(folder, "train.tsv")):
        os.makedirs(folder, exist_ok=True)
        for name in os.listdir(source):
            if name != "train.tsv":
                os.symlink(os.path.join(source, name), os.path.join(folder, name))
        with open(os.path.join(folder, "train.tsv.tmp"), "w", encoding="utf-8") as f:
            f.writelines([header, *rows[:labelled]])
        os.replace(os.path.join(folder, "train.tsv.tmp"), os.path.join(folder, "train.tsv"))
    if not transfer:
        return folder, None
    if task != "SST-2":
        raise ValueError("transfer data is made from SST-2's sentences only")
    with open(transfer_file + ".tmp", "w", encoding="utf-8") as f:
        f.writelines(row.split("\t")[0] + "\n" for row in rows[labelled:labelled + transfer])
    os.replace(transfer_file + ".tmp", transfer_file)
    return folder, transfer_file


def run_one(task: str, name: str, data_dir: str, transfer: str | None, minilm: str,
            work_dir: str) -> dict:
    """Trains one run (skipped when its best/ is there); its dev results."""
    student, own = RUNS[name]
    output_dir = os.path.join(work_dir, task, name.split()[0].strip("()"))
    teacher_dir = os.path.join(work_dir, task, "teacher")
    flags = [f"--task_name={task}", f"--data_dir={data_dir}", f"--output_dir={output_dir}",
             f"--vocab_file={minilm}/vocab.txt", f"--max_seq_length={SEQ_LENGTH[task]}",
             *COMMON]
    if student:
        flags.append(f"--teacher_checkpoint={teacher_dir}")
    else:
        flags += [f"--bert_config_file={minilm}/bert_config.json", f"--init_checkpoint={minilm}"]
    for flag in own:
        if flag == "{transfer}":
            flag = f"--transfer_data={transfer}" if transfer else None
        if flag:
            flags.append(flag)
    best = os.path.join(output_dir, "best", "eval_results.txt")
    if not os.path.isfile(best):
        print(f"{task} {name}: python -m run_scripts.run_classifier {' '.join(flags)}",
              flush=True)
        subprocess.run([sys.executable, "-m", "run_scripts.run_classifier", *flags], cwd=REPO,
                       check=True)
    results = read_results(best)
    return {"accuracy": float(results["eval_accuracy"]), "f1": float(results.get("eval_f1", 0)),
            "output_dir": output_dir}


def export(task: str, output_dir: str, minilm: str, work_dir: str) -> str:
    """The run's classifier export (made once); its versioned folder."""
    export_dir = os.path.join(work_dir, "exports", task, os.path.basename(output_dir))
    if not os.path.isdir(export_dir):
        subprocess.run([sys.executable, "-m", "run_scripts.export_saved_model",
                        "--export_type=classifier", f"--task_name={task}",
                        f"--init_checkpoint={output_dir}",
                        f"--vocab_file={minilm}/vocab.txt",
                        f"--max_seq_length={SEQ_LENGTH[task]}", f"--export_dir={export_dir}"],
                       cwd=REPO, check=True)
    return os.path.join(export_dir, sorted(os.listdir(export_dir))[-1])


def serving(task: str, exports: dict[str, str], batch_sizes: list[int], rounds: int,
            calls: int) -> dict:
    """{batch: {name: [sentences/s of each round]}} of the exports, timed together."""
    texts = [e.text_a for e in glue.get_processor(task).get_dev_examples(
        os.path.join(GLUE_DIR, task))]
    pair = task == "MRPC"
    seconds_by_batch = {}
    for batch in batch_sizes:
        calls_of = {}
        for name, path in exports.items():
            serve = tf.saved_model.load(path).signatures["serving_default"]
            batches = itertools.cycle([texts[i:i + batch]
                                       for i in range(0, len(texts) - batch + 1, batch)])

            def call(serve=serve, batches=batches):
                chunk = tf.constant(next(batches))
                args = {"text_a": chunk, "text_b": chunk} if pair else {"text_a": chunk}
                return serve(**args)["probabilities"].numpy()
            calls_of[name] = call
        per_round = time_in_rounds(calls_of, warmup=3, rounds=rounds, timed=calls)
        seconds_by_batch[batch] = {name: [batch / m for m in round_medians(values)]
                                   for name, values in per_round.items()}
        print(f"  batch {batch} timed; {load_average()}", flush=True)
    return seconds_by_batch


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", default="SST-2")
    parser.add_argument("--train_examples", default="SST-2:4000",
                        help="TASK:N, the first N training rows labelled (all when absent)")
    parser.add_argument("--transfer_examples", default="SST-2:4000",
                        help="TASK:N, the next N training sentences unlabelled (SST-2 only)")
    parser.add_argument("--runs", default=",".join(RUNS))
    parser.add_argument("--batch_sizes", default="1,32")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=5)
    parser.add_argument("--work_dir", default=None)
    args = parser.parse_args()
    work_dir = args.work_dir or tempfile.mkdtemp(prefix="bench_distillation_")
    minilm = minilm_checkpoint(work_dir)
    labelled = dict(item.split(":") for item in args.train_examples.split(",") if item)
    transfer = dict(item.split(":") for item in args.transfer_examples.split(",") if item)
    names = args.runs.split(",")
    results_file = os.path.join(work_dir, "results.json")
    results = json.load(open(results_file)) if os.path.isfile(results_file) else {}
    for task in args.tasks.split(","):
        count = int(labelled[task]) if task in labelled else None
        data_dir, transfer_file = split_train(task, count, int(transfer.get(task, 0)), work_dir)
        for name in names:
            results.setdefault(task, {})[name] = run_one(task, name, data_dir, transfer_file,
                                                          minilm, work_dir)
            with open(results_file + ".tmp", "w") as f:
                json.dump(results, f, indent=1)
            os.replace(results_file + ".tmp", results_file)
        runs = results[task]
        teacher = runs["teacher"]["accuracy"]
        print(f"\n{task}: {count or 'all'} labelled training rows, "
              f"{transfer.get(task, 0)} transfer sentences; dev accuracy (best epoch); "
              f"majority {majority_accuracy(task):.4f}")
        print(f"{'run':<22} {'accuracy':>9} {'F1':>6} {'of teacher':>11} {'vs (a)':>7}")
        has_f1 = task == "MRPC"
        for name, run in runs.items():
            kept = run["accuracy"] / teacher
            vs_a = ((run["accuracy"] - runs["(a) fine-tuned"]["accuracy"]) * 100
                    if "(a) fine-tuned" in runs and name.startswith(("(b)", "(c)")) else None)
            f1 = f"{run['f1']:6.3f}" if has_f1 else f"{'-':>6}"
            print(f"{name:<22} {run['accuracy']:9.4f} {f1} {kept * 100:10.1f}% "
                  f"{'' if vs_a is None else f'{vs_a:+6.1f}'}")
        if "(b) distilled" in runs:
            b = runs["(b) distilled"]
            exports = {name: export(task, runs[name]["output_dir"], minilm, work_dir)
                       for name in ("teacher", "(b) distilled")}
            batches = [int(b) for b in args.batch_sizes.split(",")]
            speeds = serving(task, exports, batches, args.rounds, args.calls)
            print(f"serving (SavedModel, raw sentences, seq {SEQ_LENGTH[task]}): sentences/s, "
                  f"median over {args.rounds} rounds")
            for batch, rates in speeds.items():
                per_round = ratios(rates["(b) distilled"], rates["teacher"])
                print(f"  batch {batch:>3}: teacher {statistics.median(rates['teacher']):8.1f}  "
                      f"student {statistics.median(rates['(b) distilled']):8.1f}  "
                      f"ratio {statistics.median(per_round):.2f}x "
                      f"({min(per_round):.2f}-{max(per_round):.2f}) "
                      f"{'met' if statistics.median(per_round) >= TARGET_SPEED else 'NOT met'}")
            kept = b["accuracy"] / teacher
            print(f"targets: kept {kept * 100:.1f}% of the teacher (>= {TARGET_KEPT * 100:.0f}%: "
                  f"{'met' if kept >= TARGET_KEPT else 'NOT met'})", end="")
            if "(a) fine-tuned" in runs:
                points = (b["accuracy"] - runs["(a) fine-tuned"]["accuracy"]) * 100
                print(f"; {points:+.1f} points over (a) (>= {TARGET_POINTS}: "
                      f"{'met' if points >= TARGET_POINTS else 'NOT met'})")
            else:
                print()
    print(f"work_dir: {work_dir}")


if __name__ == "__main__":
    main()
