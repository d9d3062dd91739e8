"""Benchmark: create_pretraining_data, ours against Google's original, in one run.

    python -m bench.pretraining_data [--corpus PATH] [--dupe_factor 5] [--skip_4x]

Runs, with the original README's flags (max_seq_length 128, max_predictions_per_seq 20,
masked_lm_prob 0.15, dupe_factor 5, uncased vocab), on the corpus and on 4 copies of it
concatenated: the original (bert-tensorflow), ours with --reproduce_original, and the fast mode
with 1 and 2 workers. Prints MB/s of input, instances/s, peak RSS of the whole process tree, and
each one's speed-up over the original measured in the same run. Wall times include start-up
(importing TensorFlow), as a user experiences them. Then tokenizer throughput: ours, Hugging Face
`tokenizers` and the original (pip install -r bench/requirements.txt for `tokenizers`).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time

import tensorflow as tf

from bench.process_tree import run_measured

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_CORPUS = os.path.join(REPO, "..", "shared", "data", "pretraining_text",
                              "gutenberg_sentences.txt")
VOCAB = os.path.join(REPO, "data", "vocab", "uncased_vocab.txt")


def count_records(paths: list[str]) -> int:
    return sum(1 for _ in tf.data.TFRecordDataset(paths))


def tokenizer_throughput(corpus: str, limit: int = 20000) -> None:
    """Lines/s of our tokenizer, Hugging Face's Rust BertWordPiece and the pure-Python original,
    on the corpus's first `limit` non-blank lines (uncased vocab)."""
    from tokenizers import BertWordPieceTokenizer

    from official.text.tokenizer import FullTokenizer
    from tests.reference_bert import import_original

    with open(corpus, encoding="utf-8") as f:
        lines = [line.strip() for line in f if line.strip()][:limit]
    ours = FullTokenizer(VOCAB, do_lower_case=True)
    ours.tokenize_batch_ids(lines[:10])  # Traces the graph once, as a long run would.
    hugging_face = BertWordPieceTokenizer(VOCAB, lowercase=True)
    original = import_original("bert.tokenization").FullTokenizer(VOCAB, do_lower_case=True)
    batch = 4096
    runs = {
        "ours (tensorflow-text ops)": lambda: [ours.tokenize_batch_ids(lines[i:i + batch])
                                               for i in range(0, len(lines), batch)],
        "Hugging Face tokenizers": lambda: hugging_face.encode_batch(lines,
                                                                      add_special_tokens=False),
        "original (pure Python)": lambda: [original.convert_tokens_to_ids(original.tokenize(x))
                                           for x in lines],
    }
    print(f"\ntokenizer throughput on {len(lines)} lines of {os.path.basename(corpus)}:")
    for label, run in runs.items():
        start = time.perf_counter()
        run()
        seconds = time.perf_counter() - start
        print(f"  {label:<28} {len(lines) / seconds:10.0f} lines/s", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default=DEFAULT_CORPUS)
    parser.add_argument("--dupe_factor", type=int, default=5)
    parser.add_argument("--skip_4x", action="store_true")
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="bench-pretraining-")
    corpora = {"1x": args.corpus}
    if not args.skip_4x:
        corpora["4x"] = os.path.join(work, "corpus_4x.txt")
        with open(corpora["4x"], "wb") as out:
            for _ in range(4):
                with open(args.corpus, "rb") as f:
                    shutil.copyfileobj(f, out)
                out.write(b"\n")
    common = [f"--vocab_file={VOCAB}", "--do_lower_case=true", "--max_seq_length=128",
              "--max_predictions_per_seq=20", "--masked_lm_prob=0.15", "--random_seed=12345",
              f"--dupe_factor={args.dupe_factor}", "--short_seq_prob=0.1"]
    print(f"{'corpus':>6} {'generator':<26} {'seconds':>8} {'MB/s':>7} {'instances':>10} "
          f"{'inst/s':>8} {'peak RSS MiB':>12} {'speed-up':>8}")
    for name, corpus in corpora.items():
        megabytes = os.path.getsize(corpus) / 1e6
        runs = {
            "original (bert-tensorflow)": (["-m", "bench.original_create_pretraining_data"], False),
            "ours --reproduce_original": (["-m", "data_prep.create_pretraining_data",
                                           "--reproduce_original"], False),
            "ours fast, 1 worker": (["-m", "data_prep.create_pretraining_data",
                                     "--num_shards=4", "--num_workers=1"], True),
            "ours fast, 2 workers": (["-m", "data_prep.create_pretraining_data",
                                      "--num_shards=4", "--num_workers=2"], True),
        }
        baseline = None
        for label, (command, sharded) in runs.items():
            out = os.path.join(work, f"{name}-{len(label)}-{sharded}")
            target = [f"--output_dir={out}"] if sharded else [f"--output_file={out}.tfrecord"]
            seconds, rss, result = run_measured(
                [sys.executable, *command, f"--input_file={corpus}", *common, *target], REPO)
            if result.returncode:
                print(f"{label} failed:\n{result.stderr[-2000:]}")
                continue
            paths = (tf.io.gfile.glob(os.path.join(out, "*.tfrecord")) if sharded
                     else [f"{out}.tfrecord"])
            instances = count_records(paths)
            baseline = baseline or seconds
            print(f"{name:>6} {label:<26} {seconds:8.1f} {megabytes / seconds:7.2f} "
                  f"{instances:10d} {instances / seconds:8.0f} {rss / 2**20:12.0f} "
                  f"{baseline / seconds:7.1f}x", flush=True)
    shutil.rmtree(work)
    tokenizer_throughput(args.corpus)


if __name__ == "__main__":
    main()
