r"""How fast every entry point answers --help, a misspelt flag and a missing file.

    .venv/bin/python -m bench.startup [--rounds=5]

Each entry point checks its flags, files and settings before it loads TensorFlow
(official/command_line.py), so these answers cost an interpreter and absl, not TensorFlow's
seconds. Every case is a fresh process, timed wall-clock; the cases run in rounds
(bench/rounds.py), each round timing every case once, beside the peer: `python -c "import
tensorflow"`, what each answer cost before. Printed: the median seconds of each case, each entry
point's slowest case, and the median over the entry points of that (the target: at most 1.0 s).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

from bench.rounds import load_average

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET_SECONDS = 1.0
ENTRY_POINTS = ("run_scripts.run_pretraining", "run_scripts.run_classifier",
                "run_scripts.run_squad", "run_scripts.run_ner",
                "run_scripts.run_sentence_embedding", "run_scripts.export_saved_model",
                "run_scripts.extract_features", "run_scripts.build_static_embeddings",
                "run_scripts.convert_checkpoint", "run_scripts.semantic_search",
                "data_prep.create_pretraining_data", "data_prep.build_vocab",
                "data_prep.extend_vocab", "data_prep.vocab_report")


def missing_file_flags(module: str, folder: str) -> list[str]:
    """Flags that pass absl but name a file that is not there (the first thing checked)."""
    nowhere = os.path.join(folder, "nowhere")
    vocab = os.path.join(REPO, "data", "vocab", "uncased_vocab.txt")
    output = os.path.join(folder, "out")
    return {
        "run_scripts.run_pretraining": [f"--input_file={nowhere}/*", f"--output_dir={output}",
                                        "--do_train"],
        "run_scripts.export_saved_model": ["--export_type=encoder", f"--export_dir={output}",
                                           f"--vocab_file={nowhere}"],
        "run_scripts.extract_features": [f"--input_file={nowhere}", f"--output_file={output}",
                                         f"--vocab_file={vocab}"],
        "run_scripts.build_static_embeddings": [f"--init_checkpoint={nowhere}",
                                                f"--corpus_file={nowhere}",
                                                f"--output_dir={output}"],
        "run_scripts.convert_checkpoint": ["--input_format=tf1", f"--input={nowhere}",
                                           f"--output_dir={output}"],
        "run_scripts.semantic_search": [f"--export_dir={nowhere}", f"--corpus_file={nowhere}",
                                        f"--queries_file={nowhere}"],
        "data_prep.create_pretraining_data": [f"--input_file={nowhere}",
                                              f"--vocab_file={vocab}",
                                              f"--output_dir={output}"],
        "data_prep.build_vocab": [f"--input_file={nowhere}", f"--output_file={output}"],
        "data_prep.extend_vocab": [f"--vocab_file={vocab}", f"--input_file={nowhere}",
                                   f"--output_dir={output}"],
        "data_prep.vocab_report": [f"--vocab_file={vocab}", f"--input_file={nowhere}"],
    }.get(module, [f"--vocab_file={nowhere}", f"--output_dir={output}", "--do_train",
                   "--task_name=MRPC", f"--data_dir={folder}", f"--train_file={nowhere}"])


def seconds(command: list[str]) -> float:
    """Wall seconds of one run of `command` from the repository root (its exit ignored)."""
    start = time.perf_counter()
    subprocess.run(command, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"))
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        cases = {"import tensorflow (the peer)": [sys.executable, "-c", "import tensorflow"]}
        for module in ENTRY_POINTS:
            base = [sys.executable, "-m", module]
            cases[f"{module} --helpshort"] = [*base, "--helpshort"]
            cases[f"{module} misspelt flag"] = [*base, "--output_dri=x"]
            cases[f"{module} missing file"] = [*base, *missing_file_flags(module, folder)]
        timings: dict[str, list[float]] = {name: [] for name in cases}
        for _ in range(args.rounds):
            for name, command in cases.items():
                timings[name].append(seconds(command))
    medians = {name: statistics.median(values) for name, values in timings.items()}
    print(f"CPU: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"{load_average()}; {args.rounds} rounds, median wall seconds")
    for name, value in medians.items():
        print(f"  {value:6.2f}  {name}")
    slowest = {module: max(medians[f"{module} {case}"]
                           for case in ("--helpshort", "misspelt flag", "missing file"))
               for module in ENTRY_POINTS}
    overall = statistics.median(slowest.values())
    peer = medians["import tensorflow (the peer)"]
    print(f"median over the entry points of each one's slowest answer: {overall:.2f} s "
          f"(target <= {TARGET_SECONDS:.1f} s: {'met' if overall <= TARGET_SECONDS else 'missed'}"
          f"); importing TensorFlow alone: {peer:.2f} s, {peer / overall:.1f}x that")


if __name__ == "__main__":
    main()
