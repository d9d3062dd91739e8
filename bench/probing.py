r"""Layer-wise probing of the real all-MiniLM-L6-v2 weights on UD English-EWT, against the papers.

    .venv/bin/python -m bench.probing [--max_train_sentences=N] [--work_dir=DIR]
        [--tasks=upos,deprel,distance,depth]

Runs `python -m run_scripts.probe_layers` as a user does, once per task, on the MiniLM weights
(bench/weights.txt, converted by bench/finetune_glue.minilm_checkpoint; 6 layers of 384, so
layers 0..6, uncased) and ../shared/data/ud_english_ewt (v2.16: train capped by
--max_train_sentences, full dev and test):

    upos, deprel   linear probes per layer with Hewitt & Liang's control task (selectivity),
                   the scalar mix of all layers (E_s) and the cumulative mixes (E_Delta)
    distance       Hewitt & Manning's distance probe per layer: UUAS and DSpr.
    depth          their depth probe per layer: root accuracy and NSpr.

The vectors are cached in DIR/cache (shared by the tasks: the same words, weights and settings),
so a rerun trains the probes only. Prints each task's table, then the literature beside ours:

    Tenney, Das & Pavlick (2019), Table 1, BERT-large (24 layers): POS E_Delta 3.39, E_s 11.68;
    dependencies E_Delta 5.69, E_s 13.75; as fractions of the depth: POS 0.14 / 0.49,
    dependencies 0.24 / 0.57.
    Hewitt & Manning (2019), Table 1, BERT-large layer 16: UUAS 82.5, DSpr. 0.86, root% 90.1,
    NSpr. 0.89.
    Hewitt & Liang (2019): linear probes on ELMo layer 1 POS 97.2 accuracy with 71.2 on the
    control task (selectivity about 26 points).

and judges the orderings the literature expects: E_s(upos) < E_s(deprel) and E_Delta(upos) <
E_Delta(deprel) (part of speech draws on lower layers than dependencies), selectivity well
above zero at every layer (above 10 points), linear UPOS at the best layer in the mid-to-high
90s (at least 0.95). Writes
DIR/<task>/probe_results.{json,txt}, probe_curves.png and DIR/summary.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time

from bench.finetune_glue import minilm_checkpoint

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
UD = os.path.join(REPO, "..", "shared", "data", "ud_english_ewt")
TASK_FLAGS = {
    "upos": ["--control_task", "--mix=scalar", "--cumulative"],
    "deprel": ["--control_task", "--mix=scalar", "--cumulative"],
    "distance": [],
    "depth": [],
}
TENNEY_LARGE = {"upos": (3.39, 11.68), "deprel": (5.69, 13.75)}  # (E_Delta, E_s), 24 layers


def run_task(task: str, model_dir: str, work_dir: str, max_train: int) -> tuple[dict, float]:
    output_dir = os.path.join(work_dir, task)
    command = [sys.executable, "-m", "run_scripts.probe_layers", f"--task={task}",
               f"--init_checkpoint={model_dir}", "--do_lower_case=True",
               f"--train_file={os.path.join(UD, 'en_ewt-ud-train.conllu')}",
               f"--dev_file={os.path.join(UD, 'en_ewt-ud-dev.conllu')}",
               f"--test_file={os.path.join(UD, 'en_ewt-ud-test.conllu')}",
               f"--max_train_sentences={max_train}", f"--output_dir={output_dir}",
               f"--cache_dir={os.path.join(work_dir, 'cache')}", *TASK_FLAGS[task]]
    print("$ " + " ".join(command), flush=True)
    start = time.monotonic()
    subprocess.run(command, cwd=REPO, check=True)
    with open(os.path.join(output_dir, "probe_results.json"), encoding="utf-8") as f:
        return json.load(f), time.monotonic() - start


def cpu_name() -> str:
    """The CPU's model name (/proc/cpuinfo on Linux), else what platform says."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def verdict(holds: bool) -> str:
    return "holds" if holds else "does NOT hold"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", default="upos,deprel,distance,depth")
    parser.add_argument("--max_train_sentences", type=int, default=4000)
    parser.add_argument("--work_dir", default="/tmp/bench_probing")
    args = parser.parse_args()
    model_dir = minilm_checkpoint(args.work_dir)
    results, seconds = {}, {}
    for task in args.tasks.split(","):
        results[task], seconds[task] = run_task(task, model_dir, args.work_dir,
                                                args.max_train_sentences)
    layers = results[next(iter(results))]["num_hidden_layers"]
    print(f"\nMiniLM-L6 ({layers} layers), UD English-EWT, train capped at "
          f"{args.max_train_sentences} sentences; CPU: {cpu_name()}, "
          f"{os.cpu_count()} cores; seconds per task: "
          + ", ".join(f"{t} {s:.0f}" for t, s in seconds.items()))
    summary = {"tasks": results, "seconds": seconds, "checks": {}}
    for task, (e_delta, e_s) in TENNEY_LARGE.items():
        if task in results and "mix" in results[task]:
            r = results[task]
            print(f"{task}: E_s {r['mix']['expected_layer']:.2f} of {layers} "
                  f"({r['mix']['expected_layer'] / layers:.2f} of the depth; BERT-large "
                  f"{e_s / 24:.2f}), E_Delta {r['expected_delta_layer']:.2f} "
                  f"({r['expected_delta_layer'] / layers:.2f}; BERT-large {e_delta / 24:.2f})")
    checks = summary["checks"]
    if "upos" in results and "deprel" in results:
        upos, deprel = (results[t]["mix"]["expected_layer"] for t in ("upos", "deprel"))
        checks["E_s(upos) < E_s(deprel)"] = upos < deprel
        upos, deprel = (results[t]["expected_delta_layer"] for t in ("upos", "deprel"))
        checks["E_Delta(upos) < E_Delta(deprel)"] = upos < deprel
    for task in ("upos", "deprel"):
        if task in results:
            least = min(e["selectivity"]["test"] for e in results[task]["layers"])
            checks[f"{task}: selectivity > 0.10 at every layer (least {least:.3f})"] = least > 0.10
    if "upos" in results:
        best = max(e["test"]["accuracy"] for e in results["upos"]["layers"])
        checks[f"linear UPOS at the best layer >= 0.95 (ours {best:.4f})"] = best >= 0.95
    if "distance" in results:
        best = max(results["distance"]["layers"], key=lambda e: e["dev"]["uuas"])
        print(f"distance: best layer {best['layer']}: UUAS {100 * best['test']['uuas']:.1f}, "
              f"DSpr. {best['test']['spearman']:.2f} (BERT-large16: UUAS 82.5, DSpr. 0.86)")
    if "depth" in results:
        best = max(results["depth"]["layers"], key=lambda e: e["dev"]["root_accuracy"])
        print(f"depth: best layer {best['layer']}: root% "
              f"{100 * best['test']['root_accuracy']:.1f}, NSpr. {best['test']['spearman']:.2f}"
              " (BERT-large16: root% 90.1, NSpr. 0.89)")
    for check, holds in checks.items():
        print(f"  {check}: {verdict(holds)}")
    with open(os.path.join(args.work_dir, "summary.json"), "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=2)


if __name__ == "__main__":
    main()
