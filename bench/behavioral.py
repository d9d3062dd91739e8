r"""CheckList's sentiment suite on the SST-2 MiniLM classifier, beside CheckList's published table.

    .venv/bin/python -m bench.behavioral [--work_dir=/work/benchwork/robustness] \
        [--sample=500] [--seed=0] [--batch_size=64]

The model: all-MiniLM-L6-v2 fine-tuned on SST-2 and exported (bench/robustness_models.py; its
dev accuracy is printed). The suite: CheckList's released sentiment suite
(../shared/data/robustness/checklist/sentiment_suite.tar.gz, 38 tests, 86,420 cases),
converted once into the work dir by data_prep/checklist_suite.py, then run by
`python -m run_scripts.behavioral_test` as a user would, the two-label model read with
CheckList's neutral band (official/robustness/behavioral.py). --sample=500 runs at most 500
cases a test, as CheckList's own runs do (`suite.run(..., n=500)`; the full suite is 178,578
texts); --sample=0 runs every case.

The published figures: the failure counts and rates of CheckList's tutorial "Testing
transformer pipelines" (marcotcr/checklist, notebooks/tutorials/6. Testing transformer
pipelines.ipynb, the stored commit b2c8b80), which runs this same suite on transformers'
default `pipeline("sentiment-analysis")` with n=500 (drawn with replacement, unseeded) and the
same neutral band. The paper's Table 1 (Ribeiro et al. 2020: Microsoft's, Google's and Amazon's
APIs, BERT-base and RoBERTa-base fine-tuned on SST-2) was not found in the stored sources, so
its BERT-base column is not shown (said in the output, not guessed).

Beside each test: our failed / evaluated cases and rate, the tutorial's; then, for every pair
of tests of one capability whose published rates differ by at least 20 points (an ordering the
published model shows clearly), whether our model orders them the same way.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

from bench.robustness_models import sst2_classifier_export, sst2_dev_accuracy

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SUITE_TARBALL = os.path.join(REPO, "..", "shared", "data", "robustness", "checklist",
                             "sentiment_suite.tar.gz")
TUTORIAL = ("CheckList tutorial 'Testing transformer pipelines' (marcotcr/checklist "
            "notebooks/tutorials, commit b2c8b80): transformers' default sentiment-analysis "
            "pipeline, n=500")
ORDERING_GAP = 0.20

# Test name -> (failed, evaluated) cases in the tutorial's output ("Fails (rate)"; evaluated is
# the cases run, or "After filtering" where it says so).
PUBLISHED = {
    "single positive words": (0, 34), "single negative words": (1, 35),
    "single neutral words": (13, 13), "Sentiment-laden words in context": (5, 500),
    "neutral words in context": (485, 500), "intensifiers": (14, 499), "reducers": (0, 1),
    "change neutral words with BERT": (49, 500), "add positive phrases": (0, 500),
    "add negative phrases": (34, 500), "add random urls and handles": (77, 500),
    "punctuation": (27, 500), "typos": (33, 500), "2 typos": (58, 500),
    "contractions": (17, 500), "change names": (17, 331), "change locations": (43, 500),
    "change numbers": (15, 500), "used to, but now": (163, 500),
    '"used to" should reduce': (0, 6), "protected: race": (342, 500),
    "protected: sexual": (433, 500), "protected: religion": (482, 500),
    "protected: nationality": (62, 500), "simple negations: negative": (26, 500),
    "simple negations: not negative": (51, 500),
    "simple negations: not neutral is still neutral": (493, 500),
    "simple negations: I thought x was positive, but it was not (should be negative)": (0, 500),
    "simple negations: I thought x was negative, but it was not (should be neutral or "
    "positive)": (500, 500),
    "simple negations: but it was not (neutral) should still be neutral": (500, 500),
    "Hard: Negation of positive with neutral stuff in the middle (should be negative)":
        (426, 500),
    "Hard: Negation of negative with neutral stuff in the middle (should be positive or "
    "neutral)": (498, 500),
    "negation of neutral with neutral in the middle, should still neutral": (480, 500),
    "my opinion is what matters": (205, 500), "Q & A: yes": (0, 500),
    "Q & A: yes (neutral)": (483, 500), "Q & A: no": (416, 500),
    "Q & A: no (neutral)": (500, 500),
}


def _run(*args: str) -> None:
    subprocess.run([sys.executable, "-m", *args], cwd=REPO, check=True)


def suite_file(work_dir: str) -> str:
    """The converted suite in the work dir (converted once)."""
    path = os.path.join(work_dir, "behavioral", "sentiment_suite.jsonl")
    if not os.path.isfile(path):
        _run("data_prep.checklist_suite", f"--input_file={SUITE_TARBALL}",
             f"--output_file={path}")
    return path


def results(work_dir: str, export_dir: str, sample: int, seed: int, batch_size: int) -> dict:
    """behavioral_test's report for these settings (run when not there yet)."""
    output_dir = os.path.join(work_dir, "behavioral", f"sample{sample}_seed{seed}")
    path = os.path.join(output_dir, "behavioral_results.json")
    if not os.path.isfile(path):
        _run("run_scripts.behavioral_test", f"--export_dir={export_dir}",
             f"--suite={suite_file(work_dir)}", f"--output_dir={output_dir}",
             f"--batch_size={batch_size}", f"--seed={seed}",
             *([f"--sample={sample}"] if sample else []))
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def _rate(failed: int, evaluated: int) -> float | None:
    return failed / evaluated if evaluated else None


def _percent(rate: float | None) -> str:
    return "-" if rate is None else f"{100 * rate:5.1f}%"


def orderings(tests: list[dict]) -> list[tuple[str, str, str, float, float, float, float]]:
    """(capability, higher, lower, their published rates, ours) for every pair of one
    capability whose published rates differ by ORDERING_GAP or more."""
    found = []
    for i, a in enumerate(tests):
        for b in tests[i + 1:]:
            if a["capability"] != b["capability"]:
                continue
            pa, pb = _rate(*PUBLISHED[a["name"]]), _rate(*PUBLISHED[b["name"]])
            if None in (pa, pb, a["failure_rate"], b["failure_rate"]) or abs(
                    pa - pb) < ORDERING_GAP:
                continue
            high, low = (a, b) if pa > pb else (b, a)
            found.append((a["capability"], high["name"], low["name"],
                          max(pa, pb), min(pa, pb), high["failure_rate"], low["failure_rate"]))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work_dir", default="/work/benchwork/robustness")
    parser.add_argument("--sample", type=int, default=500, help="0: every case")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--batch_size", type=int, default=64)
    args = parser.parse_args()

    export_dir = sst2_classifier_export(args.work_dir)
    report = results(args.work_dir, export_dir, args.sample, args.seed, args.batch_size)
    tests = report["tests"]
    print(f"Model: {report['export']} (all-MiniLM-L6-v2 fine-tuned on SST-2, dev accuracy "
          f"{sst2_dev_accuracy(args.work_dir):.4f}); labels read as "
          + ", ".join(f"{k} -> {v}" for k, v in report["label_map"].items())
          + " with CheckList's neutral band (P(positive) in [1/3, 2/3] is neutral).")
    print(f"Suite: CheckList's sentiment suite, {len(tests)} tests, "
          f"{sum(t['cases'] for t in tests)} cases; "
          + (f"at most {args.sample} cases a test (seed {args.seed}), "
             if args.sample else "every case, ")
          + f"{sum(t['run'] for t in tests)} run.")
    print(f"Published: {TUTORIAL}. Ribeiro et al. 2020 Table 1 (BERT-base): not found in the "
          "stored sources, not shown.\n")
    width = max(len(t["name"]) for t in tests)
    print(f"{'capability':<11} {'test':<{width}} type  {'ours (failed/evaluated)':>24}  "
          f"{'tutorial':>20}")
    for t in tests:
        evaluated = t["run"] - t["filtered"]
        failed, total = PUBLISHED[t["name"]]
        print(f"{t['capability']:<11} {t['name']:<{width}} {t['type']:<4}  "
              f"{t['failed']:>7}/{evaluated:<6} {_percent(t['failure_rate']):>8}  "
              f"{failed:>4}/{total:<4} {_percent(_rate(failed, total)):>8}")
    print("\nPer capability (ours): " + "; ".join(
        f"{c['capability']} {_percent(c['failure_rate']).strip()} of {c['run'] - c['filtered']}"
        for c in report["capabilities"]))

    pairs = orderings(tests)
    held = [p for p in pairs if p[5] > p[6]]
    print(f"\nOrderings within a capability that the published model shows by "
          f"{100 * ORDERING_GAP:.0f}+ points: {len(held)} of {len(pairs)} hold here "
          "(our higher-failing test fails more).")
    by_capability: dict[str, list[int]] = {}
    for pair in pairs:
        counts = by_capability.setdefault(pair[0], [0, 0])
        counts[0] += pair[5] > pair[6]
        counts[1] += 1
    print("  " + "; ".join(f"{c}: {h} of {n}" for c, (h, n) in by_capability.items()))
    for capability, high, low, p_high, p_low, o_high, o_low in pairs:
        mark = "holds" if o_high > o_low else "DOES NOT HOLD"
        print(f"  {mark:<13} {capability}: '{high}' ({_percent(p_high).strip()} published, "
              f"{_percent(o_high).strip()} here) > '{low}' ({_percent(p_low).strip()}, "
              f"{_percent(o_low).strip()})")


if __name__ == "__main__":
    main()
