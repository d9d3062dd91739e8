"""The custom training loop shared by every entry point that trains.

One update (`Trainer._replica_update`, run on every replica by `strategy.run`):

    1. the task's loss denominators are summed over the whole global batch (all micro-batches,
       all replicas), so the loss is that of one big batch however the batch is split;
    2. gradients of `gradient_accumulation_steps` micro-batches are summed on each replica;
    3. they are all-reduced (summed) across replicas here, before the optimiser sees them, so
       global-norm clipping acts on the global gradient (the optimisers in
       official/training/optimization.py therefore do not reduce again);
    4. the optimiser applies them (unscaling and skipping non-finite steps under float16).

`steps_per_loop` updates run inside one tf.function call (the original's iterations_per_loop),
which keeps the host out of the way on accelerators. Between calls the loop logs, writes
TensorBoard summaries, saves checkpoints, and checks for SIGTERM (preemption) and ctrl-C: save,
then stop.

Several workers (MultiWorkerMirroredStrategy): the chief writes output_dir; every other worker
must take part in each save (TensorFlow's rule) and writes its copy to a folder of its own inside
output_dir, removed when training ends, stopped or not. A stop asked of any one worker is agreed
by all between two calls: each worker's request is summed across the workers (one all-reduce of
two numbers a call), so every worker saves at the same step and stops, each ending as a stopped
run does (exit 143 for SIGTERM); a worker that stopped alone would leave the others waiting in
their next all-reduce. (TensorFlow's PreemptionCheckpointHandler agrees the same way through
the coordination service, but probes the GCE metadata server, does nothing on GCE CPU machines,
and owns the SIGTERM handler; this one keeps official/command_line.py's.)

A save that finds the disk full removes what it left half-made (official/training/output_dir.py)
and raises one OSError(ENOSPC) naming output_dir (official/atomic_files.py).

Training stops at the first update whose loss (or, without float16 loss scaling, whose gradient
norm) is not finite, with `Diverged` naming the step and nothing saved after it: the weights of
that update are lost already, and saving them would let checkpoint rotation delete good ones.
(Under float16 a non-finite gradient is the loss scale's overflow, which the optimiser skips.)

Checkpoints (`model.ckpt-<step>` in output_dir, see official/checkpoints/training.py) hold the
model, the optimiser, the step, the dropout random state and, on the default strategy, the input
iterator, so a resumed run on one device continues the same data stream and reaches the same
weights as an uninterrupted one. A distributed iterator cannot be saved; there a resumed run
restarts its input with a seed moved by the step (as the original's Estimator restarted
input_fn, and as a one-process run resumed with a restarted input does), so it does not replay
the batches an uninterrupted run would have read. A `SavedInput` fingerprints what the
iterator reads, saved beside it: a resumed run whose input has changed since is refused (or,
asked to, restarts its input at the saved step) rather than read at the saved places.

A `FirstSteps` trains only some variables (or rows of them) for the first updates, then all:
a new vocab's embedding rows learnt before the rest moves (official/training/pretraining.py).

`train` can stop at given steps (each epoch's end) to save and call back (evaluation, in the
fine-tuning jobs); `predict` runs the model over a dataset and returns its outputs in order.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shutil
import signal
import time
from typing import Callable, Mapping, Protocol, Sequence

import keras
import numpy as np
import tensorflow as tf
from absl import logging

from official import console
from official.atomic_files import disk_full, open_atomically
from official.checkpoints.training import (
    assert_matched,
    check_holds,
    has_root,
    model_roots,
    random_states,
)
from official.command_line import Preempted
from official.modeling import dropout
from official.training.distribution import is_chief, worker_count
from official.training.output_dir import remove_interrupted_writes
from official.training.stopping import Diverged

CHECKPOINT_NAME = "model.ckpt"  # the original's name: model.ckpt-1000.index ...
EVAL_RESULTS_FILE = "eval_results.txt"

# (input context, per-replica batch size, step the input starts at) -> dataset of feature dicts.
DatasetFn = Callable[[tf.distribute.InputContext, int, int], tf.data.Dataset]
# (step, prefix of the checkpoint just saved at that step) -> None; see Trainer.train.
CheckpointCallback = Callable[[int, str], None]


class Task(Protocol):
    """What a job supplies: additive loss denominators, a loss with summed stats, and metrics.

    Stats are float32 scalar sums that add across batches and include "examples" (batch rows).
    See official/tasks/pretraining.py.
    """

    def normalizers(self, features: Mapping[str, tf.Tensor]) -> dict[str, tf.Tensor]: ...

    def loss_and_stats(self, outputs, features: Mapping[str, tf.Tensor],
                       normalizers: Mapping[str, tf.Tensor]) -> tuple[tf.Tensor, dict]: ...

    def metrics(self, stats: Mapping[str, float]) -> dict[str, float]: ...


@dataclasses.dataclass(frozen=True)
class FirstSteps:
    """The first `steps` updates train only `variables`, and of a variable in `rows` only the
    rows marked True: the others keep their values bit for bit (their gradient is zeroed, and
    since weight decay does not read the gradient, their values are put back after the
    update). From step `steps` on, every trainable variable trains. A resumed run picks the
    phase by its step.

    rows: (variable, bool numpy array [the variable's first dimension]) pairs; each of those
      variables must be in `variables` too.
    """
    steps: int
    variables: tuple[keras.Variable, ...]
    rows: tuple[tuple[keras.Variable, np.ndarray], ...] = ()
    description: str = "some variables"


@dataclasses.dataclass(frozen=True)
class SavedInput:
    """What the input iterator reads, for input that can change between runs (record files
    regenerated under a saved iterator).

    A restored iterator reads on at its saved places (a file's offset, its shuffle buffer)
    whatever the files hold now. So each checkpoint that holds the iterator holds `fingerprint`
    too, and before a resumed run restores an iterator saved with one, `check(the saved
    fingerprint, the checkpoint's prefix)` raises when the input differs. `restart`: restore all
    but the iterator and start the input afresh at the saved step, as a distributed run does.
    A checkpoint without a fingerprint (an older run's) resumes as it was saved.
    """
    fingerprint: str
    check: Callable[[str, str], None]
    restart: bool = False


@dataclasses.dataclass(frozen=True)
class LoopOptions:
    """How long to train and how often to report and save (the original's flag names)."""

    output_dir: str
    num_train_steps: int
    train_batch_size: int
    steps_per_loop: int = 1000
    save_checkpoints_steps: int = 1000
    keep_checkpoint_max: int = 5
    log_steps: int = 100
    gradient_accumulation_steps: int = 1
    jit_compile: bool = False


# Signals that stop training after a save: a scheduler's SIGTERM (preemption) and ctrl-C.
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)
# The replicas' count of updates with a non-finite loss or gradient, summed with the task's stats.
_NON_FINITE = "non_finite_updates"
# The checkpoint root of SavedInput.fingerprint.
_INPUT_FINGERPRINT = "input_fingerprint"


class Trainer:
    """Trains `model` on `task` under `strategy`; build the model and optimiser in its scope.

    A model with an `inference_model` (a distillation's, whose student trains beside a
    teacher) predicts and has its weights written and restored through that one: training
    checkpoints hold `model`'s roots, `write_weights` and `restore_model` its.

    Usage (not a doctest: tracing even a tiny model's update takes seconds; the same calls,
    complete, on a two-layer model: tests/distributed_worker.py):
        strategy = distribution.get_strategy("default")  # official/training/distribution.py
        with strategy.scope():
            model = BertPretrainer(build_encoder(config))
            optimizer = create_optimizer("adamw", 1e-4, num_train_steps=1000,
                                         num_warmup_steps=100,
                                         decay_exempt=decay_exempt_variables(model))
        trainer = Trainer(strategy, model, optimizer, PretrainingTask(),
                          LoopOptions(output_dir, num_train_steps=1000, train_batch_size=32))
        # dataset_fn(input_context, per_replica_batch_size, start_step) -> batches of features
        final_metrics = trainer.train(dataset_fn)
    """

    def __init__(self, strategy: tf.distribute.Strategy, model: keras.Model,
                 optimizer: keras.optimizers.Optimizer, task: Task, options: LoopOptions,
                 first_steps: FirstSteps | None = None):
        replicas = strategy.num_replicas_in_sync
        k = options.gradient_accumulation_steps
        if options.train_batch_size % (replicas * k):
            raise ValueError(
                f"train_batch_size={options.train_batch_size} must divide evenly into "
                f"{replicas} replica(s) x gradient_accumulation_steps={k}")
        for name in ("num_train_steps", "steps_per_loop", "save_checkpoints_steps",
                     "log_steps", "gradient_accumulation_steps"):
            if getattr(options, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(options, name)}")
        self.strategy, self.model, self.optimizer = strategy, model, optimizer
        self.task, self.options, self.first_steps = task, options, first_steps
        self._eval_steps: dict[int, Callable] = {}
        self.inference_model = getattr(model, "inference_model", model)
        self.per_replica_batch_size = options.train_batch_size // replicas
        self._input_names = list(model.input.keys())
        with strategy.scope():
            optimizer.build(model.trainable_variables)
            self.step = tf.Variable(0, dtype=tf.int64, trainable=False, name="global_step",
                                    aggregation=tf.VariableAggregation.ONLY_FIRST_REPLICA)
        # Under jit_compile, XLA compiles as much of the update as it can: on one replica the
        # whole update (gradients, accumulation and the optimiser's element-wise work, which is
        # otherwise hundreds of small ops); across replicas only the gradients, since the
        # all-reduce between them cannot be inside an XLA cluster.
        whole_update = options.jit_compile and replicas == 1
        # Every function here is traced without autograph (its loops are tf.while_loops):
        # converting this module's and the task's functions to graph code again in each process
        # was a large share of a short run's start-up.
        self._gradients_fn = tf.function(
            self._gradients, jit_compile=(options.jit_compile and not whole_update) or None,
            autograph=False)
        self._update_fn = (tf.function(self._replica_update, jit_compile=True, autograph=False)
                           if whole_update else self._replica_update)
        self._stop_requested = 0  # the signal that asked to stop, once one has
        self.is_chief = is_chief(strategy)
        self._several_workers = worker_count(strategy) > 1
        # The loop below calls one update in two places (before its tf.range and inside it): as
        # a function of its own it is traced once, not twice (tracing a BERT's forward and
        # backward pass is most of a short run's start-up). Not across workers: there
        # MultiWorkerMirroredStrategy's collectives in a function called inside the loop fail
        # when the loop runs (TensorFlow 2.21: "You must feed a value for placeholder tensor
        # 'while/body/.../Placeholder'"; tests/test_distributed_training.py), so it is traced in
        # both places.
        self._reduced_update_fn = (self._reduced_update if self._several_workers
                                   else tf.function(self._reduced_update, autograph=False))

    # ---- one update, per replica -------------------------------------------------------------

    def _gradients(self, features, normalizers):
        """Gradients, loss and stats of one micro-batch (XLA-compiled under jit_compile)."""
        # Under jit_compile this is XLA's alone, whose dropout draws are cheaper with ThreeFry.
        random_bits = (dropout.xla_random_bits() if self.options.jit_compile
                       else contextlib.nullcontext())
        with random_bits, tf.GradientTape() as tape:
            outputs = self.model({k: features[k] for k in self._input_names}, training=True)
            loss, stats = self.task.loss_and_stats(outputs, features, normalizers)
            scaled_loss = self.optimizer.scale_loss(loss)
        grads = tape.gradient(scaled_loss, self.model.trainable_variables)
        return [None if g is None else tf.convert_to_tensor(g) for g in grads], loss, stats

    def _replica_update(self, features, first_steps: bool = False):
        k = self.options.gradient_accumulation_steps
        replica = tf.distribute.get_replica_context()
        normalizers = replica.all_reduce(tf.distribute.ReduceOp.SUM,
                                         self.task.normalizers(features))
        # [k * b, ...] -> [k, b, ...]: micro-batch i is micro[i].
        micro = {name: tf.reshape(t, [k, -1, *t.shape[1:]]) for name, t in features.items()}
        grads, loss, stats = self._gradients_fn({n: t[0] for n, t in micro.items()},
                                                normalizers)
        # Variables without a gradient (the pooler, under a span or token head) are left alone,
        # weight decay included, as the original's optimiser skips a None gradient.
        used = [i for i, g in enumerate(grads) if g is not None]
        grads = [grads[i] for i in used]
        if k > 1:
            def accumulate(i, grads, loss, stats):
                more_grads, more_loss, more_stats = self._gradients_fn(
                    {n: t[i] for n, t in micro.items()}, normalizers)
                return (i + 1, [a + more_grads[j] for a, j in zip(grads, used)],
                        loss + more_loss,
                        {name: stats[name] + more_stats[name] for name in stats})
            _, grads, loss, stats = tf.while_loop(
                lambda i, *_: i < k, accumulate, (tf.constant(1), grads, loss, stats),
                maximum_iterations=k - 1)
        grads = replica.all_reduce(tf.distribute.ReduceOp.SUM, grads)
        variables = [self.model.trainable_variables[i] for i in used]
        if first_steps:
            grads, variables = self._first_steps_only(grads, variables)
        finite = tf.math.is_finite(loss)
        if not isinstance(self.optimizer, keras.optimizers.LossScaleOptimizer):
            # The global norm is what clipping divides by: an infinite one makes the update nan.
            finite &= tf.math.is_finite(tf.linalg.global_norm(grads))
        self.optimizer.apply(grads, variables)
        return dict(stats, **{_NON_FINITE: 1.0 - tf.cast(finite, tf.float32)})

    def _row_masks(self) -> list[tuple[keras.Variable, tf.Tensor]]:
        """(variable, its FirstSteps row mask shaped to broadcast against it)."""
        return [(v, tf.constant(rows.reshape(rows.shape + (1,) * (len(v.shape) - 1))))
                for v, rows in self.first_steps.rows]

    def _first_steps_only(self, grads, variables):
        """The gradients and variables of `FirstSteps.variables`, the gradients of their masked
        rows zeroed (so Adam's moments of those rows stay zero)."""
        chosen = {id(v) for v in self.first_steps.variables}
        masks = {id(v): mask for v, mask in self._row_masks()}
        kept = [(g * tf.cast(masks[id(v)], g.dtype) if id(v) in masks else g, v)
                for g, v in zip(grads, variables) if id(v) in chosen]
        return [g for g, _ in kept], [v for _, v in kept]

    def _reduced_update(self, features, first_steps: bool = False):
        # During FirstSteps the masked rows are put back after the update (weight decay, which
        # reads no gradient, would move them), here in cross-replica context, on every replica.
        kept = ([(v, mask, tf.identity(v.value)) for v, mask in self._row_masks()]
                if first_steps else [])
        stats = self.strategy.run(self._update_fn, args=(features,),
                                  kwargs={"first_steps": first_steps})
        for variable, mask, before in kept:
            variable.assign(tf.where(mask, variable, before))
        self.step.assign_add(1)
        return self._sum_over_replicas(stats)

    def _sum_over_replicas(self, per_replica_stats: dict) -> dict:
        # One reduce per value: MultiWorkerMirroredStrategy.reduce rejects a dict.
        return {name: self.strategy.reduce(tf.distribute.ReduceOp.SUM, value, axis=None)
                for name, value in per_replica_stats.items()}

    @tf.function(autograph=False)
    def _train_loop(self, iterator, num_steps, first_steps: bool = False):
        """`num_steps` updates in one call (of `FirstSteps` only, when `first_steps`); returns
        their summed stats. Stops early after an update with a non-finite loss or gradient
        (stats[_NON_FINITE] > 0)."""
        def go_on(done, stats):
            return tf.logical_and(done < num_steps,
                                  tf.logical_not(stats[_NON_FINITE] > 0))

        def update(done, stats):
            more = self._reduced_update_fn(next(iterator), first_steps)
            return done + 1, {name: stats[name] + more[name] for name in stats}

        stats = self._reduced_update_fn(next(iterator), first_steps)
        _, stats = tf.while_loop(go_on, update, (tf.ones_like(num_steps), stats))
        return stats

    # ---- the loop ----------------------------------------------------------------------------

    def train(self, dataset_fn: DatasetFn, evaluate_at: Sequence[int] = (),
              on_evaluate: CheckpointCallback | None = None,
              saved_input: SavedInput | None = None) -> dict[str, float]:
        """Trains to num_train_steps, resuming from output_dir's newest checkpoint if any.

        Args:
          evaluate_at: steps (an epoch's end, say) at which to save a checkpoint and call
            `on_evaluate(step, checkpoint_prefix)` before training on; steps a resumed run has
            already passed are not revisited.
          saved_input: what the input iterator reads, checked before it is restored.
        Returns the metrics of the last logged window.
        Raises:
          Preempted: SIGTERM arrived; the state was saved first.
          ValueError: `saved_input.check`'s, before anything is restored or written.
        """
        opts = self.options
        latest = tf.train.latest_checkpoint(opts.output_dir)
        dataset = self._distribute(dataset_fn, 0)
        # The default strategy hands back a plain tf.data.Dataset, whose iterator can be saved;
        # a distributed one cannot (nor can a checkpoint written without one supply it).
        keep_iterator = (isinstance(dataset, tf.data.Dataset)
                         and (latest is None or has_root(latest, "iterator")))
        # The dropout seed generators' states: without them a resumed run would draw other
        # dropout masks than an uninterrupted one.
        roots = dict(model_roots(self.model), optimizer=self.optimizer, step=self.step,
                     non_trainable_variables=random_states(self.model))
        iterator = iter(dataset)
        fingerprinted = keep_iterator and saved_input is not None
        restart = fingerprinted and latest is not None and saved_input.restart
        if keep_iterator and not restart:
            roots["iterator"] = iterator
        restored = dict(roots)  # the saves hold the fingerprint of the input read now
        if fingerprinted:
            roots[_INPUT_FINGERPRINT] = tf.Variable(saved_input.fingerprint, trainable=False)
        if latest:
            check_holds(latest, roots)
            if fingerprinted and not restart and has_root(latest, _INPUT_FINGERPRINT):
                saved_input.check(tf.train.load_variable(
                    latest, f"{_INPUT_FINGERPRINT}/.ATTRIBUTES/VARIABLE_VALUE").decode(), latest)
            status = tf.train.Checkpoint(**restored).restore(latest)
            # Left out on purpose (an iterator, a fingerprint): no warning about them at exit.
            assert_matched(status.expect_partial() if fingerprinted else status, latest)
            logging.info("Resuming from %s at step %d%s", latest, int(self.step.numpy()),
                         ", the input started afresh" if restart else "")
            if "iterator" not in restored:
                iterator = iter(self._distribute(dataset_fn, int(self.step.numpy())))
                if restart:
                    roots["iterator"] = iterator
        checkpoint = tf.train.Checkpoint(**roots)

        manager = tf.train.CheckpointManager(
            checkpoint, self._write_dir(opts.output_dir), max_to_keep=opts.keep_checkpoint_max,
            checkpoint_name=CHECKPOINT_NAME, step_counter=self.step)
        writer = self._summary_writer("train")
        previous_handlers = {s: signal.signal(s, self._request_stop) for s in STOP_SIGNALS}
        try:
            return self._run(iterator, manager, writer, sorted(set(evaluate_at)), on_evaluate)
        except Exception as e:
            full = disk_full(e, opts.output_dir)
            if full is None:
                raise
            # The saver's model.ckpt-N_temp/ (as large as a checkpoint) and best.tmp/ would
            # keep the disk full; what is whole stays, so a rerun with space resumes.
            remove_interrupted_writes(opts.output_dir)
            raise full from None
        finally:
            for signum, handler in previous_handlers.items():
                signal.signal(signum, handler)
            self._clean_write_dir(opts.output_dir)

    def _run(self, iterator, manager, writer, evaluate_at: list[int],
             on_evaluate: CheckpointCallback | None) -> dict[str, float]:
        opts = self.options
        step = int(self.step.numpy())
        metrics: dict[str, float] = {}
        window, window_start, window_first_step = None, time.perf_counter(), step
        while step < opts.num_train_steps:
            stop = self._agreed_stop()
            if stop:
                manager.save(checkpoint_number=step)
                raise Preempted(step, stop)
            next_evaluation = next((s for s in evaluate_at if s > step), opts.num_train_steps)
            first_steps = self.first_steps is not None and step < self.first_steps.steps
            n = min(opts.steps_per_loop, opts.num_train_steps - step, next_evaluation - step,
                    _to_next_multiple(step, opts.log_steps),
                    _to_next_multiple(step, opts.save_checkpoints_steps),
                    self.first_steps.steps - step if first_steps else opts.num_train_steps)
            if first_steps and step == 0:
                logging.info("steps 1-%d train only %s", self.first_steps.steps,
                             self.first_steps.description)
            stats = self._train_loop(iterator, tf.constant(n), first_steps)
            stats = {name: float(value) for name, value in stats.items()}
            if stats.pop(_NON_FINITE) > 0:
                raise Diverged(int(self.step.numpy()), manager.latest_checkpoint,
                               isinstance(self.optimizer, keras.optimizers.LossScaleOptimizer))
            step += n
            window = stats if window is None else {k: window[k] + stats[k] for k in stats}
            if step % opts.log_steps == 0 or step == opts.num_train_steps:
                seconds = time.perf_counter() - window_start
                metrics = self._report(step, window, step - window_first_step, seconds, writer)
                window, window_start, window_first_step = None, time.perf_counter(), step
            evaluate = step in evaluate_at and on_evaluate is not None
            if (step % opts.save_checkpoints_steps == 0 or step == opts.num_train_steps
                    or evaluate):
                prefix = manager.save(checkpoint_number=step)
                if evaluate:
                    started = time.perf_counter()
                    on_evaluate(step, prefix)
                    window_start += time.perf_counter() - started  # examples/s: training only
        return metrics

    def _report(self, step: int, stats: dict, steps: int, seconds: float, writer) -> dict:
        metrics = self.task.metrics(stats)
        learning_rate = float(keras.ops.convert_to_numpy(self.optimizer.learning_rate))
        examples_per_second = stats["examples"] / max(seconds, 1e-9)
        remaining = (self.options.num_train_steps - step) * seconds / max(steps, 1)
        logging.info("step %d/%d  %s  lr %.3g  %.1f examples/s  ETA %s", step,
                     self.options.num_train_steps,
                     "  ".join(f"{_short(k)} {v:.4f}" for k, v in metrics.items()),
                     learning_rate, examples_per_second, _duration(remaining),
                     extra=console.PROGRESS)
        with writer.as_default(step=step):
            for name, value in metrics.items():
                tf.summary.scalar(name, value)
            tf.summary.scalar("learning_rate", learning_rate)
            tf.summary.scalar("examples_per_second", examples_per_second)
        writer.flush()
        return dict(metrics, learning_rate=learning_rate,
                    examples_per_second=examples_per_second)

    def write_weights(self, prefix: str) -> None:
        """Writes the model's part of a checkpoint and the step to `prefix`: no optimiser slots
        or iterator, so it restores a model (`restore_model`) but resumes nothing. The chief's
        alone (output_dir/best/, official/training/finetuning.py)."""
        tf.train.Checkpoint(**model_roots(self.inference_model), step=self.step).write(prefix)

    def restore_model(self, checkpoint_dir: str | None = None) -> bool:
        """Loads the model weights and step of the newest checkpoint in `checkpoint_dir`
        (default output_dir), for evaluating without training; False when there is none."""
        latest = tf.train.latest_checkpoint(checkpoint_dir or self.options.output_dir)
        if latest is None:
            return False
        roots = model_roots(self.inference_model)
        check_holds(latest, roots)
        assert_matched(tf.train.Checkpoint(**roots, step=self.step).read(latest).expect_partial(),
                       latest)
        logging.info("Restored %s (step %d)", latest, int(self.step.numpy()))
        return True

    # ---- evaluation --------------------------------------------------------------------------

    def _eval_replica(self, features, task):
        outputs = self.model({k: features[k] for k in self._input_names}, training=False)
        _, stats = task.loss_and_stats(outputs, features, task.normalizers(features))
        return stats

    def _eval_step_of(self, task) -> Callable:
        """The compiled eval step of `task` (the training task's, or another read off the same
        model's outputs), made once per task."""
        if id(task) not in self._eval_steps:
            def replica(features):
                return self._eval_replica(features, task)

            self._eval_steps[id(task)] = tf.function(lambda features: self._sum_over_replicas(
                self.strategy.run(replica, args=(features,))), autograph=False)
        return self._eval_steps[id(task)]

    def evaluate(self, dataset_fn: DatasetFn, eval_batch_size: int,
                 max_steps: int | None = None, task=None) -> dict[str, float]:
        """The task's metrics over the eval data (at most `max_steps` batches of the global
        `eval_batch_size`), with the current weights; written to eval_results.txt with the step.
        `task`: the one whose loss and metrics the eval data has, when it differs from the
        training's (held-out records without a second sentence, say)."""
        task = task or self.task
        eval_step = self._eval_step_of(task)
        per_replica = max(eval_batch_size // self.strategy.num_replicas_in_sync, 1)
        dataset = self.strategy.distribute_datasets_from_function(
            lambda context: dataset_fn(context, per_replica, 0))
        totals, steps = None, 0
        for features in dataset:
            if max_steps is not None and steps >= max_steps:
                break
            stats = {k: float(v) for k, v in eval_step(features).items()}
            totals = stats if totals is None else {k: totals[k] + stats[k] for k in stats}
            steps += 1
        if totals is None:
            raise ValueError("the eval data has no complete batch")
        metrics = task.metrics(totals)
        step = int(self.step.numpy())
        writer = self._summary_writer("eval")
        with writer.as_default(step=step):
            for name, value in metrics.items():
                tf.summary.scalar(name, value)
        writer.flush()
        if self.is_chief:
            write_eval_results(os.path.join(self.options.output_dir, EVAL_RESULTS_FILE),
                               metrics, step)
        logging.info("eval at step %d over %d batches: %s", step, steps,
                     "  ".join(f"{k} {v:.4f}" for k, v in metrics.items()))
        return metrics

    # ---- prediction ----------------------------------------------------------------------------

    def predict(self, dataset: tf.data.Dataset,
                keep: Sequence[str] = ()) -> dict[str, np.ndarray]:
        """The model's outputs (training=False) on every row of `dataset`, in its order.

        Args:
          dataset: batches of feature dicts (the global batch; a last partial batch is fine),
            holding the model's inputs and the `keep` features.
          keep: features to return beside the outputs (ids that tie rows to examples).
        Returns:
          {output name (or "logits" for a model with one output) or kept feature: numpy array
          with one row per dataset row}.
        """
        results: dict[str, list[np.ndarray]] = {}
        for features in self.strategy.experimental_distribute_dataset(dataset):
            for name, value in self._predict_step(features, tuple(keep)).items():
                results.setdefault(name, []).append(value.numpy())
        if not results:
            raise ValueError("the prediction data holds no rows")
        return {name: np.concatenate(values) for name, values in results.items()}

    # A document model's batches vary in windows: one trace for every shape.
    @tf.function(reduce_retracing=True, autograph=False)
    def _predict_step(self, features, keep: tuple[str, ...]):
        def replica(features):
            outputs = self.inference_model({k: features[k] for k in self._input_names},
                                           training=False)
            if not isinstance(outputs, dict):
                outputs = {"logits": outputs}
            return dict(outputs, **{name: features[name] for name in keep})
        per_replica = self.strategy.run(replica, args=(features,))
        # Replicas hold consecutive slices of the batch; gathering restores its row order.
        return {name: self.strategy.gather(value, axis=0) for name, value in per_replica.items()}

    # ---- plumbing ----------------------------------------------------------------------------

    def _distribute(self, dataset_fn: DatasetFn, start_step: int):
        return self.strategy.distribute_datasets_from_function(
            lambda context: dataset_fn(context, self.per_replica_batch_size, start_step))

    def _request_stop(self, signum, frame):
        name = signal.Signals(signum).name
        if signum == signal.SIGINT:
            # A second ctrl-C stops at once, as ctrl-C does elsewhere.
            signal.signal(signal.SIGINT, signal.default_int_handler)
            name += " (ctrl-C again stops at once, without saving)"
        logging.warning("%s: saving a checkpoint after the current loop, then stopping", name)
        self._stop_requested = signum

    def _agreed_stop(self) -> int:
        """The signal that stops training before the next call, 0 for none: this process's, or
        under several workers any worker's, the same on all of them (see the module docstring;
        SIGTERM's when both were asked)."""
        if not self._several_workers:
            return self._stop_requested
        asked = [float(self._stop_requested == s) for s in STOP_SIGNALS]
        votes = self._stop_votes(tf.constant(asked))
        for signum, count in zip(STOP_SIGNALS, keras.ops.convert_to_numpy(votes)):
            if count > 0:
                if not self._stop_requested:
                    logging.warning("another worker was stopped by %s: saving a checkpoint at "
                                    "step %d, then stopping", signal.Signals(signum).name,
                                    int(self.step.numpy()))
                return signum
        return 0

    @tf.function(autograph=False)
    def _stop_votes(self, asked: tf.Tensor) -> tf.Tensor:
        """[requests of each of STOP_SIGNALS] summed over every replica of every worker."""
        return self.strategy.reduce(tf.distribute.ReduceOp.SUM,
                                    self.strategy.run(tf.identity, args=(asked,)), axis=None)

    def _write_dir(self, output_dir: str) -> str:
        # Every worker of a multi-worker run must take part in a save; only the chief's is kept.
        if self.is_chief:
            return output_dir
        resolver = self.strategy.cluster_resolver
        return os.path.join(output_dir, f".worker_{resolver.task_type}_{resolver.task_id}")

    def _clean_write_dir(self, output_dir: str) -> None:
        if not self.is_chief:
            shutil.rmtree(self._write_dir(output_dir), ignore_errors=True)

    def _summary_writer(self, name: str):
        if not self.is_chief:
            return tf.summary.create_noop_writer()
        return tf.summary.create_file_writer(os.path.join(self.options.output_dir, name))


def write_eval_results(path: str, metrics: Mapping[str, float], step: int) -> None:
    """The original's eval_results.txt: `key = value` lines, keys sorted, global_step included."""
    values = {name: str(np.float32(value)) for name, value in metrics.items()}
    values["global_step"] = str(step)
    with open_atomically(path) as f:
        for name in sorted(values):
            f.write(f"{name} = {values[name]}\n")


def _to_next_multiple(step: int, every: int) -> int:
    return every - step % every


def _short(metric: str) -> str:
    return (metric.replace("masked_lm_", "mlm_").replace("next_sentence_", "nsp_")
            .replace("accuracy", "acc"))


def _duration(seconds: float) -> str:
    seconds = int(seconds)
    hours, rest = divmod(seconds, 3600)
    return f"{hours}h{rest // 60:02d}m" if hours else f"{rest // 60}m{rest % 60:02d}s"
