"""Benchmark: pretraining throughput of our training step against keras-hub and Hugging Face.

    python -m bench.pretraining_throughput [--sizes=small,base] [--warmup=N] [--rounds=N]
                                           [--steps=N] [--no-loss_curve] [--loss_curve_steps=200]

One run, one configuration for every peer: batch 16, sequence length 128, 20 masked predictions
per sequence, vocab 30,522, dropout 0.1, AdamW-style update with global-norm clipping at 1.0, at
BERT-Small (L4/H512/A8, FFN 2048) and BERT-Base (L12/H768/A12, FFN 3072). Peers:

  ours        official/training/trainer.py's compiled loop (Trainer + PretrainingTask +
              create_optimizer("adamw") + BertPretrainer), float32 and mixed_bfloat16, each
              without and with jit_compile;
  keras-hub   keras_hub.models.BertBackbone + keras_hub.layers.MaskedLMHead (tied to the token
              embedding, gathers the masked positions as ours does) + a Dense NSP head,
              keras.optimizers.AdamW, one tf.function train step, plain and jit_compile=True;
  HF          transformers.BertForPreTraining in torch (float32, torch.optim.AdamW), whose MLM
              head projects all 128 positions to the vocabulary (its design), 2 threads.

A size's peers are all built first (their first steps, which trace and compile, are timed
apart), then timed together in rounds (bench/rounds.py): each round gives each peer --steps timed
steps in turn, so that a slow phase of the machine lands on every peer. Prints sequences/s
(batch / median step time, the median over rounds), the ratios against keras-hub float32 and
Hugging Face (the median of the rounds' ratios), and the achieved training FLOP/s as a fraction
of this machine's float32 matmul peak, measured in the same run. Then, unless --no-loss_curve,
a float32-vs-bfloat16 loss curve of ours on real pretraining records (BERT-Mini, made from
../shared/data/pretraining_text by data_prep's fast generator).
Needs torch and transformers (bench/requirements.txt).
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import tempfile
import time
from typing import Callable

import keras
import numpy as np
import tensorflow as tf

from bench.rounds import load_average, ratios, round_medians, seconds_of, time_in_rounds
from official.configs import BertConfig, preset
from official.modeling.encoder import build_encoder
from official.modeling.models import BertPretrainer
from official.tasks.pretraining import PretrainingTask
from official.training.job_setup import DTYPE_POLICIES
from official.training.optimization import create_optimizer, decay_exempt_variables
from official.training.trainer import LoopOptions, Trainer

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(REPO, "..", "shared", "data", "pretraining_text", "gutenberg_sentences.txt")
VOCAB = os.path.join(REPO, "data", "vocab", "uncased_vocab.txt")

BATCH, SEQ_LEN, PREDICTIONS = 16, 128, 20
SEED = 12345
LEARNING_RATE = 1e-4
# (untimed steps after the first, rounds, timed steps per round) when --warmup, --rounds and
# --steps are not given; other sizes get (1, 3, 1). The first step traces or compiles, and the
# second of a plain-TensorFlow peer can still take 2-4x a steady one, hence one untimed step
# more. A Base float32 step is 1.1 TFLOP, ~8-12 s on 2 idle cores (twice that while other
# processes share them), so Base gets three rounds of one step. Measured here: Small 4.5 minutes,
# Base 10 (before the loss curve), Base's seven peers holding 23 GB at the peak (all are alive
# during the rounds; this machine has 24 GB).
DEFAULT_STEPS = {"small": (1, 4, 2), "base": (1, 3, 1)}
# The issue's targets.
TARGET_FP32_VS_KERAS_HUB = 1.1
TARGET_BASE_PEAK = 0.80
TARGET_BF16_VS_KERAS_HUB = 1.5
TARGET_BF16_VS_HF = 1.5


# ---- work per sequence ---------------------------------------------------------------------------

def forward_macs(config: BertConfig, seq_len: int, mlm_positions: int) -> dict[str, int]:
    """Multiply-accumulates of the forward pass's matmuls for one sequence, by component.

    L layers, S = seq_len, H hidden, I intermediate (FFN), V vocab, P = mlm_positions (the
    positions the MLM head transforms and projects: 20 gathered ones for ours and keras-hub, all
    128 for Hugging Face). Attention over all heads together: heads x S x S x head_size = S^2 H.
    Embedding lookups, LayerNorm, softmax, GELU, dropout and the optimiser are not matmuls and are
    not counted (they are O(S H) per layer against O(S H^2)).
    """
    layers, s, h = config.num_hidden_layers, seq_len, config.hidden_size
    i, v, p = config.intermediate_size, config.vocab_size, mlm_positions
    return {
        "QKV projection":         layers * s * h * 3 * h,
        "attention scores QK^T":  layers * s * s * h,
        "attention context PV":   layers * s * s * h,
        "attention output proj":  layers * s * h * h,
        "FFN (H->I->H)":          layers * 2 * s * h * i,
        "pooler":                 h * h,
        "MLM transform":          p * h * h,
        "MLM vocab projection":   p * h * v,
        "NSP":                    h * 2,
    }


def training_flops(config: BertConfig, seq_len: int, mlm_positions: int) -> float:
    """FLOPs of one sequence's training step: 6 x forward MACs.

    A MAC is 2 FLOPs, and the backward pass does two matmuls of the same size for each forward
    one (gradient w.r.t. each operand; for the weight-free attention matmuls too, and the first
    layer's input gradient is needed because the embeddings are trained): 2 x (1 + 2) = 6.
    """
    return 6.0 * sum(forward_macs(config, seq_len, mlm_positions).values())


def torch_matmul_peak(n: int = 2048, repeats: int = 10) -> float:
    """The same float32 product by PyTorch (2 threads): another library's reach on this CPU."""
    import torch

    torch.set_num_threads(2)
    a, b = torch.randn(n, n), torch.randn(n, n)
    a @ b
    return 2.0 * n ** 3 / min(seconds_of(lambda: a @ b) for _ in range(repeats))


def matmul_peak(dtype: tf.DType, n: int = 2048, repeats: int = 10) -> float:
    """FLOP/s of the best of `repeats` n x n x n matmuls (the reduce that forces it is ~0.1%)."""
    a = tf.cast(tf.random.stateless_normal([n, n], [1, 2]), dtype)
    b = tf.cast(tf.random.stateless_normal([n, n], [3, 4]), dtype)
    run = tf.function(lambda: tf.reduce_sum(tf.cast(tf.matmul(a, b), tf.float32)))
    run().numpy()
    best = min(seconds_of(lambda: run().numpy()) for _ in range(repeats))
    return 2.0 * n ** 3 / best


# ---- inputs ------------------------------------------------------------------------------------

def synthetic_features(num: int, vocab_size: int, seed: int = SEED) -> dict[str, np.ndarray]:
    """`num` full-length sequences of random ids in the pretraining-record layout: two segments,
    20 distinct masked positions among the non-[CLS] ones, every prediction weighted 1."""
    rng = np.random.default_rng(seed)
    positions = np.sort(np.stack([rng.choice(np.arange(1, SEQ_LEN), PREDICTIONS, replace=False)
                                  for _ in range(num)]), axis=1).astype(np.int32)
    types = np.zeros((num, SEQ_LEN), np.int32)
    types[:, SEQ_LEN // 2:] = 1
    return {
        "input_word_ids": rng.integers(999, vocab_size, (num, SEQ_LEN), dtype=np.int32),
        "input_mask": np.ones((num, SEQ_LEN), np.int32),
        "input_type_ids": types,
        "masked_lm_positions": positions,
        "masked_lm_ids": rng.integers(999, vocab_size, (num, PREDICTIONS), dtype=np.int32),
        "masked_lm_weights": np.ones((num, PREDICTIONS), np.float32),
        "next_sentence_labels": rng.integers(0, 2, num, dtype=np.int32),
    }


def synthetic_dataset(vocab_size: int, batch_size: int) -> tf.data.Dataset:
    """An in-memory stream of 8 distinct batches, repeated: input costs nothing."""
    features = synthetic_features(8 * batch_size, vocab_size)
    return (tf.data.Dataset.from_tensor_slices(features).repeat()
            .batch(batch_size, drop_remainder=True).prefetch(2))


# ---- the peers: each one training step per call, blocking until its update is done ------------

def _release() -> None:
    keras.backend.clear_session()
    gc.collect()


def make_trainer(config: BertConfig, dtype: str, jit: bool, output_dir: str,
                 num_train_steps: int, num_warmup_steps: int,
                 learning_rate: float = LEARNING_RATE, batch: int = BATCH) -> Trainer:
    """Our training setup as run_pretraining builds it (official/training/pretraining.py), at a
    global batch of `batch` (this bench's CPU-sized BATCH; bench/device_check.py's GPU one).

    run() also turns on op determinism on a machine without a GPU; that is process-wide (it would
    apply to the keras-hub peer too), so it is left off here.
    """
    keras.utils.set_random_seed(SEED)
    strategy = tf.distribute.get_strategy()
    with strategy.scope():
        model = BertPretrainer(build_encoder(config, dtype=DTYPE_POLICIES[dtype]))
        optimizer = create_optimizer("adamw", learning_rate, num_train_steps, num_warmup_steps,
                                     decay_exempt=decay_exempt_variables(model))
    big = 10 ** 9  # no log, summary or checkpoint boundary inside the timed calls
    return Trainer(strategy, model, optimizer, PretrainingTask(), LoopOptions(
        output_dir=output_dir, num_train_steps=big, train_batch_size=batch, steps_per_loop=1,
        log_steps=big, save_checkpoints_steps=big, jit_compile=jit))


def ours_step(config: BertConfig, dtype: str, jit: bool, output_dir: str) -> Callable:
    """One update of our Trainer's compiled loop per call, blocking until it is done."""
    trainer = make_trainer(config, dtype, jit, output_dir, 10_000, 1_000)
    # The iterator as Trainer.train builds it; then the loop's compiled function itself, one
    # update per call. `_train_loop` is private: a bench may time it, so that the numbers are the
    # loop users run, without train()'s logging and checkpointing around it.
    iterator = iter(trainer._distribute(
        lambda context, batch_size, start: synthetic_dataset(config.vocab_size, batch_size), 0))
    one = tf.constant(1)
    return lambda: trainer._train_loop(iterator, one)["examples"].numpy()


def keras_hub_step(config: BertConfig, jit: bool) -> Callable:
    """keras-hub's BERT with the same heads, loss and update, in one tf.function step."""
    import keras_hub

    keras.utils.set_random_seed(SEED)
    init = keras.initializers.TruncatedNormal(stddev=config.initializer_range)
    backbone = keras_hub.models.BertBackbone(
        vocabulary_size=config.vocab_size, num_layers=config.num_hidden_layers,
        num_heads=config.num_attention_heads, hidden_dim=config.hidden_size,
        intermediate_dim=config.intermediate_size, dropout=config.hidden_dropout_prob,
        max_sequence_length=config.max_position_embeddings,
        num_segments=config.type_vocab_size)
    # As keras_hub.models.BertMaskedLM builds its head.
    mlm_head = keras_hub.layers.MaskedLMHead(
        token_embedding=backbone.token_embedding, intermediate_activation="gelu",
        kernel_initializer=init, name="mlm_head")
    nsp_head = keras.layers.Dense(2, kernel_initializer=init, name="nsp_head")
    mlm_head.build((None, SEQ_LEN, config.hidden_size), (None, PREDICTIONS))
    nsp_head.build((None, config.hidden_size))
    variables = (backbone.trainable_variables + mlm_head.trainable_variables
                 + nsp_head.trainable_variables)
    optimizer = keras.optimizers.AdamW(learning_rate=LEARNING_RATE, weight_decay=0.01,
                                       beta_1=0.9, beta_2=0.999, epsilon=1e-6,
                                       global_clipnorm=1.0)
    optimizer.exclude_from_weight_decay(var_names=["bias", "gamma", "beta"])
    optimizer.build(variables)
    iterator = iter(synthetic_dataset(config.vocab_size, BATCH))

    @tf.function(jit_compile=jit)
    def train_step(features):
        with tf.GradientTape() as tape:
            outputs = backbone({"token_ids": features["input_word_ids"],
                                "segment_ids": features["input_type_ids"],
                                "padding_mask": features["input_mask"]}, training=True)
            mlm_logits = tf.cast(mlm_head(outputs["sequence_output"],
                                          features["masked_lm_positions"]), tf.float32)
            nsp_logits = tf.cast(nsp_head(outputs["pooled_output"]), tf.float32)
            weights = features["masked_lm_weights"]
            mlm_ce = tf.nn.sparse_softmax_cross_entropy_with_logits(
                labels=features["masked_lm_ids"], logits=mlm_logits)
            nsp_ce = tf.nn.sparse_softmax_cross_entropy_with_logits(
                labels=features["next_sentence_labels"], logits=nsp_logits)
            loss = (tf.reduce_sum(weights * mlm_ce) / (tf.reduce_sum(weights) + 1e-5)
                    + tf.reduce_mean(nsp_ce))
        optimizer.apply(tape.gradient(loss, variables), variables)
        return loss

    return lambda: train_step(next(iterator)).numpy()


def hugging_face_step(config: BertConfig) -> Callable:
    """transformers' BertForPreTraining, float32 on the CPU, eager PyTorch as its users run it."""
    import torch
    import transformers

    torch.set_num_threads(2)
    torch.manual_seed(SEED)
    model = transformers.BertForPreTraining(transformers.BertConfig(
        vocab_size=config.vocab_size, hidden_size=config.hidden_size,
        num_hidden_layers=config.num_hidden_layers,
        num_attention_heads=config.num_attention_heads,
        intermediate_size=config.intermediate_size,
        hidden_act="gelu_new",  # HF's name for the tanh GELU that ours and keras-hub compute
        hidden_dropout_prob=config.hidden_dropout_prob,
        attention_probs_dropout_prob=config.attention_probs_dropout_prob,
        max_position_embeddings=config.max_position_embeddings,
        type_vocab_size=config.type_vocab_size, initializer_range=config.initializer_range))
    model.train()
    exempt = [p for n, p in model.named_parameters() if "bias" in n or "LayerNorm" in n]
    exempt_ids = {id(p) for p in exempt}
    optimizer = torch.optim.AdamW(
        [{"params": [p for p in model.parameters() if id(p) not in exempt_ids]},
         {"params": exempt, "weight_decay": 0.0}],
        lr=LEARNING_RATE, betas=(0.9, 0.999), eps=1e-6, weight_decay=0.01)

    features = synthetic_features(8 * BATCH, config.vocab_size)
    # Labels at every position, -100 (ignored) where nothing is masked.
    labels = np.full((len(features["input_word_ids"]), SEQ_LEN), -100, np.int64)
    np.put_along_axis(labels, features["masked_lm_positions"], features["masked_lm_ids"], axis=1)
    batches = [{
        "input_ids": torch.from_numpy(features["input_word_ids"][i:i + BATCH].astype(np.int64)),
        "attention_mask": torch.from_numpy(features["input_mask"][i:i + BATCH].astype(np.int64)),
        "token_type_ids": torch.from_numpy(
            features["input_type_ids"][i:i + BATCH].astype(np.int64)),
        "labels": torch.from_numpy(labels[i:i + BATCH]),
        "next_sentence_label": torch.from_numpy(
            features["next_sentence_labels"][i:i + BATCH].astype(np.int64)),
    } for i in range(0, len(labels), BATCH)]
    count = iter(range(10 ** 9))

    def train_step():
        loss = model(**batches[next(count) % len(batches)]).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        return loss.item()

    return train_step


# ---- the float32-vs-bfloat16 loss curve ----------------------------------------------------------

def make_records(output_dir: str) -> list[str]:
    """Pretraining TFRecords of the Gutenberg corpus (one pass: dupe_factor 1)."""
    from data_prep.fast_generation import generate
    from data_prep.pretraining_options import PretrainingDataOptions

    summary = generate([CORPUS], output_dir, VOCAB, True, PretrainingDataOptions(
        max_seq_length=SEQ_LEN, max_predictions_per_seq=PREDICTIONS, dupe_factor=1,
        random_seed=SEED), num_shards=2, num_workers=1)
    print(f"records: {summary['instances']} instances from {os.path.basename(CORPUS)} in "
          f"{summary['seconds']:.0f} s", flush=True)
    return sorted(tf.io.gfile.glob(os.path.join(output_dir, "*.tfrecord")))


def loss_curve(files: list[str], dtype: str, steps: int, every: int) -> list[float]:
    """The windowed training loss (every `every` steps) of BERT-Mini from SEED, as the
    trainer's stats give it."""
    from official.training.pretraining_input import pretraining_dataset

    config = preset("mini")
    with tempfile.TemporaryDirectory() as output_dir:
        # A rate high enough to move a fresh model visibly in 200 steps.
        trainer = make_trainer(config, dtype, False, output_dir, steps, steps // 10,
                               learning_rate=5e-4)
        iterator = iter(trainer._distribute(
            lambda context, batch_size, start: pretraining_dataset(
                files, max_seq_length=SEQ_LEN, max_predictions_per_seq=PREDICTIONS,
                batch_size=batch_size, is_training=True, seed=SEED, input_context=context), 0))
        losses = [trainer.task.metrics(trainer._train_loop(iterator, tf.constant(every)))["loss"]
                  for _ in range(steps // every)]
    del trainer, iterator
    _release()
    return losses


def print_loss_curves(steps: int, every: int = 20) -> None:
    with tempfile.TemporaryDirectory() as data_dir:
        files = make_records(data_dir)
        curves = {}
        for dtype in ("float32", "bfloat16"):
            start = time.perf_counter()
            curves[dtype] = loss_curve(files, dtype, steps, every)
            print(f"loss curve {dtype}: {steps} steps in {time.perf_counter() - start:.0f} s",
                  flush=True)
    print(f"\nloss curve: BERT-Mini (L4/H256/A4), batch {BATCH}, {steps} steps, same seed, "
          f"no jit; mean loss (MLM + NSP) over each {every}-step window")
    print(f"{'steps':>9} {'float32':>9} {'bfloat16':>9} {'|diff|':>8}")
    for i, (a, b) in enumerate(zip(curves["float32"], curves["bfloat16"])):
        print(f"{i * every + 1:>4}-{(i + 1) * every:<4} {a:9.4f} {b:9.4f} {abs(a - b):8.4f}")
    print(f"max |float32 - bfloat16| of the windowed loss: "
          f"{max(abs(a - b) for a, b in zip(curves['float32'], curves['bfloat16'])):.4f}")


# ---- the report ----------------------------------------------------------------------------------

# (size, peer, dtype, jit) -> (seconds of the first step, [median seconds per step of each round]).
Runs = dict[tuple[str, str, str, bool], tuple[float, list[float]]]


def print_flops(sizes: list[str]) -> None:
    print("\nforward MACs per sequence (training FLOPs = 6 x MACs)")
    configs = {name: preset(name) for name in sizes}
    rows = {name: (forward_macs(c, SEQ_LEN, PREDICTIONS), forward_macs(c, SEQ_LEN, SEQ_LEN))
            for name, c in configs.items()}
    header = "".join(f" {name + ' P=20':>12} {name + ' P=128':>12}" for name in sizes)
    print(f"{'component':<24}{header}")
    for component in rows[sizes[0]][0]:
        print(f"{component:<24}" + "".join(
            f" {gathered[component] / 1e6:11.1f}M {full[component] / 1e6:11.1f}M"
            for gathered, full in rows.values()))
    print(f"{'training GFLOP/seq':<24}" + "".join(
        f" {training_flops(c, SEQ_LEN, PREDICTIONS) / 1e9:12.2f} "
        f"{training_flops(c, SEQ_LEN, SEQ_LEN) / 1e9:12.2f}" for c in configs.values()))
    print("(P: positions the MLM head projects; 20 for ours and keras-hub, 128 for Hugging Face)")


PEERS = ([("keras-hub", "float32", jit) for jit in (False, True)]
         + [("ours", dtype, jit) for dtype in ("float32", "bfloat16") for jit in (False, True)]
         + [("HF", "float32", False)])


def measure(sizes: list[str], warmup: int | None, rounds: int | None,
            steps: int | None) -> Runs:
    """Every peer at every size: a size's peers are all built (their first step traces and
    compiles), then timed together in rounds (`bench.rounds`)."""
    runs: Runs = {}
    for size in sizes:
        plan = [default if given is None else given
                for default, given in zip(DEFAULT_STEPS.get(size, (1, 3, 1)),
                                          (warmup, rounds, steps))]
        config = preset(size)
        with tempfile.TemporaryDirectory() as output_dir:
            calls, first = {}, {}
            for peer, dtype, jit in PEERS:
                if peer == "ours":
                    call = ours_step(config, dtype, jit,
                                     os.path.join(output_dir, f"{dtype}-{jit}"))
                elif peer == "keras-hub":
                    call = keras_hub_step(config, jit)
                else:
                    call = hugging_face_step(config)
                first[peer, dtype, jit] = seconds_of(call)
                calls[peer, dtype, jit] = call
                print(f"  {size} {peer} {dtype} jit={jit}: first step "
                      f"{first[peer, dtype, jit]:.1f} s; {load_average()}", flush=True)
            # An update takes seconds: the milliseconds of a runtime switch need no settling call.
            seconds = time_in_rounds(calls, *plan, settle=0)
            for key, per_round in seconds.items():
                runs[(size,) + key] = (first[key], round_medians(per_round))
                medians = " ".join(f"{m:.3f}" for m in runs[(size,) + key][1])
                print(f"  {size} {' '.join(map(str, key))}: rounds {medians} s/step; "
                      f"{load_average()}", flush=True)
            del calls
            _release()
    return runs


def print_table(sizes: list[str], runs: Runs, peak: float) -> dict:
    """The results table; returns {(size, "float32" | "bfloat16" | "keras-hub" | "HF"): [seq/s of
    each round]}, ours and keras-hub at their faster jit setting in each round."""
    print(f"\nbatch {BATCH}, seq {SEQ_LEN}, {PREDICTIONS} predictions; seq/s = batch / median "
          f"step (the median over rounds); 'vs keras-hub' (its faster float32 run) and 'vs HF': "
          f"the median of the rounds' ratios; % peak = training FLOP/s (HF: with its 128 "
          f"projected positions) / float32 tf.matmul peak")
    print(f"{'size':<6} {'peer':<10} {'dtype':<9} {'jit':<4} {'first s':>8} {'seq/s':>7} "
          f"{'vs keras-hub':>12} {'vs HF':>6} {'% peak':>7}")
    median = statistics.median
    best = {}
    for size in sizes:
        config = preset(size)
        seq_s = {key[1:]: [BATCH / m for m in per_round]
                 for key, (_, per_round) in runs.items() if key[0] == size}

        def faster(*keys, seq_s=seq_s):
            return [max(in_round) for in_round in zip(*(seq_s[key] for key in keys))]

        keras_hub = faster(("keras-hub", "float32", False), ("keras-hub", "float32", True))
        hf = seq_s["HF", "float32", False]
        for (peer, dtype, jit), rates in seq_s.items():
            flops = training_flops(config, SEQ_LEN, SEQ_LEN if peer == "HF" else PREDICTIONS)
            print(f"{size:<6} {peer:<10} {dtype:<9} {'yes' if jit else 'no':<4} "
                  f"{runs[size, peer, dtype, jit][0]:8.1f} {median(rates):7.2f} "
                  f"{median(ratios(rates, keras_hub)):11.2f}x {median(ratios(rates, hf)):5.2f}x "
                  f"{100 * median(rates) * flops / peak:6.1f}%")
        for dtype in ("float32", "bfloat16"):
            best[size, dtype] = faster(("ours", dtype, False), ("ours", dtype, True))
        best[size, "keras-hub"], best[size, "HF"] = keras_hub, hf
    return best


def print_targets(sizes: list[str], best: dict, peak: float) -> None:
    print("\ntargets (ours at its faster jit setting of each dtype, in each round; the median "
          "of the rounds' ratios)")
    for size in sizes:
        fp32, bf16 = best[size, "float32"], best[size, "bfloat16"]
        median = statistics.median
        checks = [(f"fp32 >= {TARGET_FP32_VS_KERAS_HUB}x keras-hub fp32",
                   median(ratios(fp32, best[size, "keras-hub"])), TARGET_FP32_VS_KERAS_HUB),
                  (f"bf16 >= {TARGET_BF16_VS_KERAS_HUB}x keras-hub fp32",
                   median(ratios(bf16, best[size, "keras-hub"])), TARGET_BF16_VS_KERAS_HUB),
                  (f"bf16 >= {TARGET_BF16_VS_HF}x HF", median(ratios(bf16, best[size, "HF"])),
                   TARGET_BF16_VS_HF)]
        if size == "base":
            checks.append((f"fp32 >= {TARGET_BASE_PEAK:.0%} of peak",
                           median(fp32) * training_flops(preset(size), SEQ_LEN, PREDICTIONS)
                           / peak, TARGET_BASE_PEAK))
        for label, value, target in checks:
            shown = f"{value:.0%}" if "peak" in label else f"{value:.2f}x"
            print(f"  {size:<6} {label:<30} {shown:>7}  {'met' if value >= target else 'NOT met'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="small,base",
                        help="comma-separated presets of official.configs (small, base, ...)")
    parser.add_argument("--warmup", type=int, default=None,
                        help="untimed steps of each peer after its first (which traces and "
                             "compiles), before the rounds; default by size")
    parser.add_argument("--rounds", type=int, default=None,
                        help="rounds in which every peer takes --steps timed steps in turn; "
                             "default by size")
    parser.add_argument("--steps", type=int, default=None,
                        help="timed steps of each peer in each round; default by size")
    parser.add_argument("--loss_curve", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--loss_curve_steps", type=int, default=200)
    args = parser.parse_args()
    sizes = [s.strip() for s in args.sizes.split(",") if s.strip()]
    run_start = time.perf_counter()

    peak = matmul_peak(tf.float32)
    print(f"tf.matmul peak (2048^3, best of 10): float32 {peak / 1e9:.1f} GFLOP/s, bfloat16 "
          f"{matmul_peak(tf.bfloat16) / 1e9:.1f} GFLOP/s; {os.cpu_count()} CPU cores; "
          f"{load_average()}", flush=True)
    if sizes:
        print_flops(sizes)
        runs = measure(sizes, args.warmup, args.rounds, args.steps)
        print(f"torch matmul peak (2048^3, float32, for comparison): "
              f"{torch_matmul_peak() / 1e9:.1f} GFLOP/s", flush=True)
        print_targets(sizes, print_table(sizes, runs, peak), peak)
    if args.loss_curve:
        print_loss_curves(args.loss_curve_steps)
    print(f"\ntotal {time.perf_counter() - run_start:.0f} s; {load_average()}")


if __name__ == "__main__":
    main()
