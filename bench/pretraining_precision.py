"""Benchmark: the ablation miniature's pretraining step in float32 and bfloat16, with and without
XLA, in rounds on this CPU; then whether the fastest keeps the results.

    python -m bench.pretraining_precision [--rounds=5] [--steps=20] [--check_steps=400]
        [--size=small]

The model and batch are the miniature preset's (official/ablation/settings.py: BERT-Tiny, an
8,192-piece vocab, 128 tokens, its batch, dropout 0); --size times another size at that batch
(e.g. small, where bfloat16 alone was once only 1.1x float32). Six peers, each in a process of
its own (XLA's clustering flags are read once per process):

    float32                  oneDNN's float32 kernels, every op on its own
    float32 + jit_compile    the whole step compiled by XLA (--jit_compile)
    float32 + fuse           XLA fuses the elementwise ops, matmuls stay oneDNN's
                             (--fuse_elementwise)
    bfloat16                 mixed bfloat16 (--dtype=bfloat16 --nofuse_elementwise)
    bfloat16 + jit_compile
    bfloat16 + fuse          run_pretraining's bfloat16 default

Each round gives every peer --steps timed steps in turn (after its own warmup), so a slow phase
of the machine lands on all of them; the table is each peer's median sequences/s over the
rounds and the median of its per-round ratio to float32. Why bfloat16 alone gains little on a
CPU with bfloat16 units (AMX): oneDNN's bfloat16 matmuls run several times faster than
float32's, and then the unfused elementwise ops (GELU, LayerNorm, softmax, the casts around them,
the optimizer's per-variable updates) are most of the step; XLA's own CPU matmuls (jit_compile)
use no bfloat16 units. The profile that showed it: official/training/job_setup.py's
`fuse_elementwise`.

Then the results check, unless --check_steps=0: run_pretraining for --check_steps steps on real
records (the books of ../shared/data/pretraining_text/books_en, made by data_prep's fast
generator) in float32 and in bfloat16 + fuse, the same seed, and the held-out masked-LM loss of
each: the faster is the miniature's default only if its loss is within CHECK_TOLERANCE of
float32's.
"""

from __future__ import annotations

import argparse
import dataclasses
import glob
import os
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BOOKS = os.path.join(REPO, "..", "shared", "data", "pretraining_text", "books_en")
# (dtype, jit_compile, fuse_elementwise) of each peer.
PEERS = {"float32": ("float32", False, False), "float32 + jit_compile": ("float32", True, False),
         "float32 + fuse": ("float32", False, True), "bfloat16": ("bfloat16", False, False),
         "bfloat16 + jit_compile": ("bfloat16", True, False),
         "bfloat16 + fuse": ("bfloat16", False, True)}
CHECK_TOLERANCE = 0.02  # nats of held-out masked-LM loss
WARMUP_STEPS = 5


def miniature(size: str | None = None):
    """(config, batch) of the miniature preset (of `size` if given), its vocab's size as the
    preset's."""
    from official.ablation.settings import PRESETS
    from official.configs import preset

    values = PRESETS["miniature"]
    config = dataclasses.replace(preset(size or values["size"], values["vocab_size"]),
                                 hidden_dropout_prob=values["pretrain_dropout"],
                                 attention_probs_dropout_prob=values["pretrain_dropout"])
    return config, values["pretrain_batch_size"]


def worker(name: str, size: str | None) -> None:
    """One peer: build, warm up, then time the steps each line of stdin asks for ("N"),
    answering with the seconds on stdout."""
    dtype, jit, fuse = PEERS[name]
    if fuse:
        from official.training import job_setup
        from official.training.options import TrainingOptions

        job_setup.fuse_elementwise(TrainingOptions(output_dir=tempfile.mkdtemp(), dtype=dtype,
                                                   bert_config_file=None,
                                                   fuse_elementwise=True))
    import tensorflow as tf

    from bench.pretraining_throughput import make_trainer, synthetic_dataset

    config, batch = miniature(size)
    trainer = make_trainer(config, dtype, jit, tempfile.mkdtemp(), 10_000, 100, batch=batch)
    iterator = iter(trainer._distribute(
        lambda context, batch_size, start: synthetic_dataset(config.vocab_size, batch_size), 0))
    one = tf.constant(1)

    def step():
        trainer._train_loop(iterator, one)["examples"].numpy()

    for _ in range(WARMUP_STEPS):
        step()
    print("ready", flush=True)
    for line in sys.stdin:
        start = time.perf_counter()
        for _ in range(int(line)):
            step()
        print(time.perf_counter() - start, flush=True)


def _cpu() -> str:
    with open("/proc/cpuinfo", encoding="utf-8") as f:
        text = f.read()
    model = next((line.split(":", 1)[1].strip() for line in text.splitlines()
                  if line.startswith("model name")), "unknown CPU")
    flags = next((line.split(":", 1)[1].split() for line in text.splitlines()
                  if line.startswith("flags")), [])
    units = [f for f in ("avx512_bf16", "amx_bf16", "avx512f", "avx2") if f in flags]
    return f"{model}, {os.cpu_count()} cores, {' '.join(units)}"


def measure(rounds: int, steps: int, size: str | None) -> None:
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    sized = [f"--size={size}"] if size else []
    workers = {name: subprocess.Popen([sys.executable, "-m", "bench.pretraining_precision",
                                       f"--worker={name}", *sized], cwd=REPO, env=env, text=True,
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE)
               for name in PEERS}
    for name, process in workers.items():
        if process.stdout.readline().strip() != "ready":
            raise SystemExit(f"{name}: the worker failed to start")
    config, batch = miniature(size)
    rates = {name: [] for name in PEERS}
    for _ in range(rounds):
        for name, process in workers.items():
            process.stdin.write(f"{steps}\n")
            process.stdin.flush()
            rates[name].append(steps * batch / float(process.stdout.readline()))
    for process in workers.values():
        process.stdin.close()
        process.wait()
    base = rates["float32"]
    print(f"\nThe miniature's pretraining step (L{config.num_hidden_layers}/H{config.hidden_size}, "
          f"batch {batch}, 128 tokens), {rounds} rounds of "
          f"{steps} steps; {_cpu()}; load average {os.getloadavg()[0]:.2f}\n")
    print("| peer | sequences/s (median) | x float32 (median of rounds) |\n|---|---:|---:|")
    for name, found in rates.items():
        ratio = statistics.median(r / b for r, b in zip(found, base))
        print(f"| {name} | {statistics.median(found):.1f} | {ratio:.2f} |")


def check(steps: int) -> None:
    """The held-out masked-LM loss after `steps` steps, float32 against bfloat16 + fuse."""
    from official.ablation.settings import PRESETS

    values = PRESETS["miniature"]
    work = tempfile.mkdtemp()
    corpus = os.path.join(work, "books.txt")
    subprocess.run(f"zcat {BOOKS}/*.txt.gz > {corpus}", shell=True, check=True)
    run = lambda *args: subprocess.run([sys.executable, "-m", *args], cwd=REPO, check=True,  # noqa
                                       env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"),
                                       capture_output=True, text=True)
    vocab = os.path.join(work, "vocab.txt")
    run("data_prep.build_vocab", f"--input_file={corpus}", f"--output_file={vocab}",
        f"--vocab_size={values['vocab_size']}")
    records = os.path.join(work, "records")
    run("data_prep.create_pretraining_data", f"--input_file={corpus}",
        f"--output_dir={records}", f"--vocab_file={vocab}", "--max_seq_length=128",
        "--max_predictions_per_seq=20", "--dupe_factor=1", "--num_shards=10",
        "--num_workers=2", "--objective=none")
    config, batch = miniature()
    config_file = os.path.join(work, "bert_config.json")
    config = dataclasses.replace(config, vocab_size=sum(1 for _ in open(vocab)))
    config.to_json_file(config_file)
    shards = sorted(glob.glob(os.path.join(records, "*.tfrecord")))
    losses = {}
    for name in ("float32", "bfloat16 + fuse"):
        dtype, _, fuse = PEERS[name]
        out = os.path.join(work, name.replace(" ", ""))
        run("run_scripts.run_pretraining", f"--input_file={','.join(shards[1:])}",
            f"--eval_input_file={shards[0]}", f"--output_dir={out}",
            f"--bert_config_file={config_file}", "--do_train", "--do_eval",
            f"--train_batch_size={batch}", "--max_seq_length=128",
            "--max_predictions_per_seq=20", f"--num_train_steps={steps}",
            f"--num_warmup_steps={steps // 10}",
            f"--learning_rate={values['pretrain_learning_rate']}", f"--dtype={dtype}",
            f"--{'' if fuse else 'no'}fuse_elementwise", "--max_eval_steps=50", "--seed=1")
        fields = dict(line.split(" = ") for line in open(os.path.join(out, "eval_results.txt"))
                      .read().splitlines())
        losses[name] = float(fields["masked_lm_loss"])
    gap = losses["bfloat16 + fuse"] - losses["float32"]
    print(f"\nHeld-out masked-LM loss after {steps} steps: float32 {losses['float32']:.4f}, "
          f"bfloat16 + fuse {losses['bfloat16 + fuse']:.4f} (difference {gap:+.4f}; "
          f"tolerance {CHECK_TOLERANCE}): "
          + ("keeps the results" if abs(gap) <= CHECK_TOLERANCE else "DOES NOT keep them"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--worker", choices=list(PEERS))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--check_steps", type=int, default=400)
    parser.add_argument("--size", help="a size of official/configs.py (the preset's without)")
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.size)
        return
    measure(args.rounds, args.steps, args.size)
    if args.check_steps:
        check(args.check_steps)


if __name__ == "__main__":
    main()
