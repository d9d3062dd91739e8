r"""The BERT paper's Table 7 on all-MiniLM-L6-v2: fine-tuning against the feature-based
approach (run_ner --feature_based) on CoNLL-2003, under one budget, dev entity F1.

    python -m bench.feature_based_ner [--max_train_sentences=2000] [--num_train_epochs=2]
        [--feature_lstm_units=128] [--choices=concat_last_4,...] [--work_dir=/tmp/feature_ner]

Every run is `python -m run_scripts.run_ner` as a user runs it, on the same training
sentences (the first --max_train_sentences of eng.train) for the same epochs, batch and
max_seq_length, evaluated on the whole of eng.testa (the paper's Table 7 is dev F1) after
every epoch, the best kept. Fine-tuning trains the whole model at --learning_rate; each
feature-based run freezes the encoder and trains its BiLSTM (--feature_lstm_units per
direction; the paper's 768 is too slow for a 2-core CPU) and classifier at
--feature_learning_rate, higher because they start from nothing.

Prints our dev F1 beside the paper's (BERT-base, its Table 7) and, for each ordering the paper
shows, whether it holds here. all-MiniLM-L6-v2 is not BERT-base: 6 layers of 384, distilled
from a larger model and then trained on sentence pairs for mean-pooled sentence vectors, so
its upper layers were pulled towards what a sentence means as a whole, which a tagger needs
least; the orderings that rest on the top layers are the ones to watch.

The weights: --model_dir, a converted TF2 checkpoint with bert_config.json and vocab.txt
(default /work/benchwork/peft/minilm when it is there), else converted from Hugging Face as
bench/finetune_ner.py does.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import sys
import time

from bench.finetune_ner import convert_minilm, prepare_data, read_results, run_logged
from official.modeling.feature_layers import CHOICES

PREPARED = "/work/benchwork/peft/minilm"
# The paper's Table 7: BERT-base, CoNLL-2003 dev F1.
PAPER = {"fine-tuning": 96.4, "embeddings": 91.0, "second_to_last": 95.6, "last": 94.9,
         "weighted_sum_last_4": 95.9, "concat_last_4": 96.1, "weighted_sum_all": 95.5}
# The orderings Table 7 shows: (higher, lower, strictly).
ORDERINGS = [("concat_last_4", "weighted_sum_last_4", False),
             ("weighted_sum_last_4", "last", True), ("last", "embeddings", True)]


def run(name: str, args, model_dir: str, data_dir: str) -> tuple[float, float]:
    """(dev F1 in %, seconds) of one run_ner run: fine-tuning, or a feature-based choice."""
    output_dir = os.path.join(args.work_dir, name)
    shutil.rmtree(output_dir, ignore_errors=True)  # a fresh run each time: it measures
    how = ([f"--learning_rate={args.learning_rate}"] if name == "fine-tuning" else
           [f"--feature_based={name}", f"--feature_lstm_units={args.feature_lstm_units}",
            f"--learning_rate={args.feature_learning_rate}"])
    command = [
        sys.executable, "-m", "run_scripts.run_ner", f"--data_dir={data_dir}",
        f"--vocab_file={os.path.join(model_dir, 'vocab.txt')}", "--do_lower_case=True",
        f"--bert_config_file={os.path.join(model_dir, 'bert_config.json')}",
        f"--init_checkpoint={model_dir}", f"--output_dir={output_dir}", "--do_train",
        "--do_eval", f"--max_seq_length={args.max_seq_length}",
        f"--train_batch_size={args.train_batch_size}", f"--eval_batch_size={args.eval_batch_size}",
        f"--num_train_epochs={args.num_train_epochs}", f"--log_steps={args.log_steps}",
        f"--iterations_per_loop={args.log_steps}", *how]
    print("$ " + shlex.join(command), flush=True)
    started = time.perf_counter()
    status, log = run_logged(command)
    if status:
        sys.exit(f"feature_based_ner: run_ner failed (exit {status}):\n{''.join(log[-20:])}")
    dev = read_results(os.path.join(output_dir, "best", "eval_results.txt"))
    return 100 * dev["f1"], time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max_train_sentences", type=int, default=2000)
    parser.add_argument("--num_train_epochs", type=float, default=2.0)
    parser.add_argument("--max_seq_length", type=int, default=64)
    parser.add_argument("--train_batch_size", type=int, default=32)
    parser.add_argument("--eval_batch_size", type=int, default=128)
    parser.add_argument("--learning_rate", type=float, default=1e-4)
    parser.add_argument("--feature_learning_rate", type=float, default=2e-3)
    parser.add_argument("--feature_lstm_units", type=int, default=128)
    parser.add_argument("--choices", default=",".join(CHOICES))
    parser.add_argument("--log_steps", type=int, default=20)
    parser.add_argument("--model_dir", default=PREPARED if os.path.isdir(PREPARED) else None)
    parser.add_argument("--work_dir", default="/tmp/feature_ner")
    args = parser.parse_args()
    choices = [c for c in args.choices.split(",") if c]
    unknown = [c for c in choices if c not in CHOICES]
    if unknown:
        sys.exit(f"--choices: unknown {', '.join(unknown)}; known: {', '.join(CHOICES)}")

    os.makedirs(args.work_dir, exist_ok=True)
    started = time.perf_counter()
    model_dir = args.model_dir or convert_minilm(args.work_dir)
    data_dir = prepare_data(args.work_dir, args.max_train_sentences, 0)
    results = {name: run(name, args, model_dir, data_dir) for name in ["fine-tuning", *choices]}

    print(f"\nall-MiniLM-L6-v2 (uncased, L6/H384) on CoNLL-2003: "
          f"{args.max_train_sentences or 'all'} training sentences, {args.num_train_epochs:g} "
          f"epoch(s), batch {args.train_batch_size}, max_seq_length {args.max_seq_length}; dev "
          f"(eng.testa, all of it) entity F1 of the best epoch. Fine-tuning lr "
          f"{args.learning_rate:g}; feature-based: BiLSTM {args.feature_lstm_units} units per "
          f"direction, lr {args.feature_learning_rate:g}. {os.cpu_count()} CPUs.")
    print(f"| {'approach':<22} | {'paper (BERT-base)':>17} | {'MiniLM here':>11} | {'time':>6} |")
    print(f"|{'-' * 24}|{'-' * 19}|{'-' * 13}|{'-' * 8}|")
    for name, (f1, seconds) in results.items():
        print(f"| {name:<22} | {PAPER[name]:>17.1f} | {f1:>11.2f} | {seconds:>5.0f}s |")
    print("\nThe paper's orderings, here:")
    f1 = {name: value for name, (value, _) in results.items()}
    best_features = max((f1[c] for c in choices), default=None)
    for higher, lower, strict in ORDERINGS:
        if higher in f1 and lower in f1:
            held = f1[higher] > f1[lower] if strict else f1[higher] >= f1[lower]
            print(f"  {higher} {'>' if strict else '>='} {lower}: "
                  f"{'held' if held else 'NOT held'} ({f1[higher]:.2f} vs {f1[lower]:.2f})")
    if best_features is not None:
        held = f1["fine-tuning"] > best_features
        print(f"  fine-tuning best: {'held' if held else 'NOT held'} ({f1['fine-tuning']:.2f} vs "
              f"the best feature-based {best_features:.2f})")
    print(f"\nthe bench took {time.perf_counter() - started:.0f} s")
    print("bench command:\n  " + shlex.join([sys.executable, "-m", "bench.feature_based_ner",
                                             *sys.argv[1:]]))


if __name__ == "__main__":
    main()
