r"""Keras `fit` of official.api's BertTextClassifier against run_classifier's Trainer: steps/s.

    .venv/bin/python -m bench.api_fit [--work_dir=/tmp/api_fit] [--train_rows=2048]
        [--steps=40 --warmup_steps=5 --rounds=5]

Both peers fine-tune the real all-MiniLM-L6-v2 weights (bench/finetune_glue.py's
`minilm_checkpoint`, converted once into work_dir/minilm; pass
--work_dir=/work/benchwork/serving/work to reuse a converted one) on SST-2's first
`--train_rows` training rows, seq 64, batch 32, learning rate 2e-5, the original's
AdamWeightDecay (warmup, linear decay, clipping at global norm 1), float32, dropout on:

    keras fit      `official.BertTextClassifier.from_checkpoint(path, num_classes=2,
                   seq_length=64)` compiled with `official.optimizer(model, ...)` and
                   SparseCategoricalCrossentropy(from_logits=True); `model.fit` on a
                   tf.data.Dataset of (sentence, label) batches: the WordPiece tokenizer runs
                   inside the model, in every training step
    Trainer        run_classifier's training loop, in process and built as
                   official/training/finetuning.py builds it: FinetuningOptions, the
                   ClassificationTask and its ClassifierData (the TFRecords made offline first;
                   the time that takes is printed apart, never counted in steps/s),
                   job_setup.set_up / create_optimizer / loop_options, `Trainer`, and the
                   records' training dataset (`record_dataset`, shuffled, parsed in tf.data and
                   prefetched); timed through `Trainer._train_loop`, the tf.function that
                   `Trainer.train` calls between its logging and checkpoint points, each call
                   running a round's steps in one graph (run_classifier with
                   --log_steps=<steps per round>)
    keras fit, ids a diagnostic third peer: `fit` of the same task model (a fresh
                   BertTextClassifier's `.model`, same optimizer and loss) on the Trainer's
                   pre-tokenised record batches; it splits the gap into tokenising (keras fit
                   vs this) and the loop (this vs the Trainer)

After `--warmup_steps` untimed steps each (the first call traces), every round gives each peer
one untimed step (a new fit call makes a new iterator and fills its shuffle buffer) and then
steps/rounds timed steps, the peers' order reversed every other round (bench/rounds.py: this
shared 2-core machine's speed drifts, so ratios are taken within a round and their median
reported). A fit call's rate is read by a callback from its first step's end to its last's, so
neither fit's per-call setup nor the Trainer's Python loop around `_train_loop` is counted. The
tokenizer's own cost (the model's TextPreprocessor on one batch, in a tf.function) is timed
apart, to say how much of a fit step is tokenising. A fit call's own time before its first step
and after its last is printed too, never counted in steps/s: in this process of three models the
end of a call has been seen to take seconds, where a probe with one model in its process took
milliseconds; the cause was not found.

Both run in one process, so what set_up does to the process holds for both: as run_classifier
does on a CPU-only machine, op determinism is on (tf.config.experimental.enable_op_determinism)
and the seed set. Neither uses XLA: the Trainer's --jit_compile is off by default, and Keras'
jit_compile="auto" resolves to off on a CPU-only machine (the table says what fit resolved).
"""

from __future__ import annotations

import argparse
import collections
import os
import shutil
import statistics
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PEERS = ("Trainer", "keras fit", "keras fit, ids")


def cpu_model() -> str:
    with open("/proc/cpuinfo", encoding="utf-8") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return "unknown CPU"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work_dir", default="/tmp/api_fit",
                        help="holds minilm/ (converted once) and the SST-2 subset")
    parser.add_argument("--train_rows", type=int, default=2048)
    parser.add_argument("--seq_length", type=int, default=64)
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--learning_rate", type=float, default=2e-5)
    parser.add_argument("--steps", type=int, default=40, help="timed steps per peer")
    parser.add_argument("--warmup_steps", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--no_ids_peer", action="store_true",
                        help="skip the diagnostic 'keras fit, ids' peer")
    parser.add_argument("--seed", type=int, default=12345)
    args = parser.parse_args()
    if args.steps % args.rounds:
        parser.error(f"--rounds={args.rounds} must divide --steps={args.steps}")
    if args.warmup_steps < 2:
        parser.error("--warmup_steps must be at least 2 (the first traces, a fit call's first "
                     "is untimed)")
    per_round = args.steps // args.rounds

    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import keras
    import tensorflow as tf

    import official
    from bench.finetune_glue import limited_data_dir, minilm_checkpoint
    from bench.rounds import load_average, ratios
    from data_prep import glue
    from data_prep.classifier_features import ClassifierData
    from official.tasks.classification import ClassificationTask
    from official.training import job_setup
    from official.training.finetuning import num_train_steps
    from official.training.finetuning_input import record_dataset
    from official.training.options import FinetuningOptions
    from official.training.trainer import Trainer

    os.makedirs(args.work_dir, exist_ok=True)
    model_dir = minilm_checkpoint(args.work_dir)
    data_dir = limited_data_dir("SST-2", args.train_rows, args.work_dir)
    run_dir = tempfile.mkdtemp(prefix="trainer_", dir=args.work_dir)  # fresh: records made anew
    # The schedule: one epoch of the subset (the original's count), or every step run if more.
    total_steps = args.warmup_steps + args.steps + args.rounds
    epochs = max(1.0, total_steps * args.batch_size / args.train_rows)
    options = FinetuningOptions(
        bert_config_file=os.path.join(model_dir, "bert_config.json"), output_dir=run_dir,
        init_checkpoint=model_dir, vocab_file=os.path.join(model_dir, "vocab.txt"),
        max_seq_length=args.seq_length, train_batch_size=args.batch_size,
        learning_rate=args.learning_rate, do_train=True, num_train_epochs=epochs,
        log_steps=per_round, seed=args.seed)
    schedule = num_train_steps(options, args.train_rows)
    warmup = int(schedule * options.warmup_proportion)

    # ---- Trainer: run_classifier's job, as official/training/finetuning.run builds it --------
    processor = glue.get_processor("SST-2")
    task = ClassificationTask(processor.name, processor.get_labels())
    job = job_setup.set_up(options, task.build_model, job_setup.checked_config(options))
    data = ClassifierData(processor, data_dir, None, args.seq_length, options.vocab_file, True,
                          run_dir)
    started = time.perf_counter()
    num_examples = data.read(["train"])
    records = data.records("train")
    record_seconds = time.perf_counter() - started
    optimizer = job_setup.create_optimizer(options, job, schedule, warmup)
    trainer = Trainer(job.strategy, job.model, optimizer, task,
                      job_setup.loop_options(options, schedule))
    dataset = job.strategy.distribute_datasets_from_function(
        lambda context: record_dataset(records.path, records.spec, trainer.per_replica_batch_size,
                                       is_training=True, seed=options.seed,
                                       input_context=context))
    iterator = iter(dataset)

    def trainer_loop(n: int) -> float:
        """Seconds of one `_train_loop` call of n steps (its stats read back, as train does)."""
        started = time.perf_counter()
        stats = trainer._train_loop(iterator, tf.constant(n))
        float(stats["examples"])
        return time.perf_counter() - started

    def trainer_steps(n: int) -> float:
        """Steps/s of n timed steps, after one untimed step (as fit_steps' calls have)."""
        trainer_loop(1)
        return n / trainer_loop(n)

    # ---- keras fit on text (official.api) --------------------------------------------------
    examples = processor.get_train_examples(data_dir)
    labels = processor.get_labels()
    texts = tf.constant([e.text_a for e in examples])
    label_ids = tf.constant([labels.index(e.label) for e in examples], tf.int32)
    text_data = (tf.data.Dataset.from_tensor_slices((texts, label_ids))
                 .shuffle(len(examples), seed=args.seed).repeat()
                 .batch(args.batch_size, drop_remainder=True).prefetch(tf.data.AUTOTUNE))

    def compiled(model: keras.Model) -> keras.Model:
        model.compile(optimizer=official.optimizer(model, args.learning_rate, schedule, warmup),
                      loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        return model

    text_model = compiled(official.BertTextClassifier.from_checkpoint(
        model_dir, num_classes=2, seq_length=args.seq_length))
    peers = {"Trainer": trainer_steps}

    class StepEnds(keras.callbacks.Callback):
        """The time at the end of each training step of one fit call."""

        def on_train_begin(self, logs=None):
            self.begins, self.ends = [], []

        def on_train_batch_begin(self, batch, logs=None):
            self.begins.append(time.perf_counter())

        def on_train_batch_end(self, batch, logs=None):
            self.ends.append(time.perf_counter())

    fit_setup: dict[str, list[tuple[float, float]]] = collections.defaultdict(list)

    def fit_steps(model: keras.Model, data: tf.data.Dataset):
        def steps(n: int) -> float:
            """Steps/s of one fit call's last n steps: the clock starts at its first step's end
            (a new iterator, its shuffle buffer filled; see the docstring)."""
            clock = StepEnds()
            started = time.perf_counter()
            model.fit(data, epochs=1, steps_per_epoch=n + 1, verbose=0, shuffle=False,
                      callbacks=[clock])
            # What the call spends outside its steps (setting up, then ending), once per call.
            fit_setup[model.name].append((clock.begins[0] - started,
                                          time.perf_counter() - clock.ends[-1]))
            return n / (clock.ends[-1] - clock.ends[0])
        return steps

    peers["keras fit"] = fit_steps(text_model, text_data)
    ids_model = None
    if not args.no_ids_peer:
        ids_model = compiled(official.BertTextClassifier.from_checkpoint(
            model_dir, num_classes=2, seq_length=args.seq_length).model)
        names = list(ids_model.input.keys())
        ids_data = record_dataset(records.path, records.spec, args.batch_size, is_training=True,
                                  seed=options.seed).map(
            lambda f: ({k: f[k] for k in names}, f["label_ids"]))
        peers["keras fit, ids"] = fit_steps(ids_model, ids_data)

    # ---- warmup (tracing), then rounds ------------------------------------------------------
    first_call = {}
    for name, steps in peers.items():
        started = time.perf_counter()
        steps(args.warmup_steps - 1)  # warmup_steps steps in all
        first_call[name] = time.perf_counter() - started
    rates: dict[str, list[float]] = {name: [] for name in peers}
    for r in range(args.rounds):
        order = list(peers) if r % 2 == 0 else list(peers)[::-1]
        for name in order:
            rates[name].append(peers[name](per_round))
        print(f"round {r + 1}/{args.rounds}: " + "  ".join(
            f"{name} {rates[name][-1]:.2f}" for name in peers) + " steps/s", flush=True)

    # The tokenizer's share of a fit step: the model's preprocessor alone on one batch.
    tokenize = tf.function(text_model.preprocessor)
    batches = [texts[i:i + args.batch_size]
               for i in range(0, 20 * args.batch_size, args.batch_size)]
    tokenize(batches[0])
    tokenize_ms = statistics.median(
        1000 * _seconds(lambda b=b: tokenize(b)["input_word_ids"].numpy()) for b in batches)

    # ---- report ---------------------------------------------------------------------------
    medians = {name: statistics.median(values) for name, values in rates.items()}
    print(f"\nall-MiniLM-L6-v2 on SST-2's first {num_examples} training rows: batch "
          f"{args.batch_size}, seq {args.seq_length}, float32; {args.steps} timed steps per peer "
          f"in {args.rounds} rounds after {args.warmup_steps} warmup steps")
    print(f"{cpu_model()}, {os.cpu_count()} cores, {load_average()} (at the end)")
    print(f"Trainer's records made offline: {records.num_records} records in "
          f"{record_seconds:.1f} s (not in steps/s)")
    print("| peer | steps/s (median of rounds) | rounds' range | examples/s | ms/step | "
          "first call (traces), s |")
    print("|---|---|---|---|---|---|")
    for name in peers:
        rate = medians[name]
        print(f"| {name} | {rate:.2f} | {min(rates[name]):.2f}-{max(rates[name]):.2f} | "
              f"{rate * args.batch_size:.1f} | {1000 / rate:.0f} | {first_call[name]:.1f} |")
    for name in peers:
        if name == "Trainer":
            continue
        per_round_ratios = ratios(rates["Trainer"], rates[name])
        print(f"Trainer / {name}: {statistics.median(per_round_ratios):.2f}x (median of rounds' "
              f"ratios; range {min(per_round_ratios):.2f}-{max(per_round_ratios):.2f})")
    if "keras fit, ids" in peers:
        per_round_ratios = ratios(rates["keras fit, ids"], rates["keras fit"])
        print(f"keras fit, ids / keras fit: {statistics.median(per_round_ratios):.2f}x "
              "(what tokenising in the step costs)")
    print(f"tokenizing one batch of {args.batch_size} (the model's TextPreprocessor, "
          f"tf.function): {tokenize_ms:.2f} ms, {tokenize_ms * medians['keras fit'] / 10:.2f}% "
          "of a keras fit step")
    for name, model in (("keras fit", text_model), ("keras fit, ids", ids_model)):
        if name in peers:
            before, after = zip(*fit_setup[model.name][1:])  # the warmup call's traces left out
            print(f"{name}: each fit call's own time outside its steps (median; not in steps/s): "
                  f"{1000 * statistics.median(before):.0f} ms before its first, "
                  f"{1000 * statistics.median(after):.0f} ms after its last")
    print(f"jit_compile: Trainer {options.jit_compile}, keras fit {text_model.jit_compile} "
          f"(compile's 'auto'); fit's steps_per_execution "
          f"{text_model.steps_per_execution}; Trainer steps per tf.function call {per_round}")
    shutil.rmtree(run_dir, ignore_errors=True)


def _seconds(call) -> float:
    started = time.perf_counter()
    call()
    return time.perf_counter() - started


if __name__ == "__main__":
    main()
