"""The fine-tuning jobs' shared half: training with per-epoch evaluation and the best
checkpoint kept, and predicting.

    FinetuningOptions  the flags run_classifier, run_squad and run_ner share (the original's
                       names and defaults, plus run_pretraining's strategy, dtype, XLA and seed)
    FinetuningRun      job_setup (strategy, model + --init_checkpoint, optimiser) and a Trainer:
        .train(dataset_fn, evaluate, metric)   an epoch's end: checkpoint, evaluate(), and the
                                               best checkpoint so far copied to output_dir/best/
        .restore()                             the best (else the newest) checkpoint, for
                                               evaluating or predicting without training
        .predict(dataset, keep)                outputs as numpy arrays, in the data's order

The entry points in run_scripts/ bring the rest: their data (data_prep), their model (one of
official/modeling/models.py) and their metrics (official/tasks/).

The number of updates is the original's `int(num_examples / train_batch_size * num_train_epochs)`
with `warmup_proportion` of them warming up. output_dir (and output_dir/best) hold training
checkpoints with a bert_config.json beside them, so either is an --init_checkpoint for any job.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import shutil
from typing import Callable

import keras
import numpy as np
import tensorflow as tf
from absl import logging

from official.checkpoints.training import CONFIG_FILE
from official.modeling.encoder import BertEncoder
from official.training import job_setup
from official.training.trainer import (EVAL_RESULTS_FILE, DatasetFn, Task, Trainer,
                                       write_eval_results)

BEST_DIR = "best"  # output_dir/best: the best checkpoint by the task's metric
_BEST_RECORD = "best_metric.json"


@dataclasses.dataclass(frozen=True, kw_only=True)
class FinetuningOptions(job_setup.TrainingOptions):
    """What the fine-tuning entry points' shared flags say; names and defaults are the
    original run_classifier's (max_seq_length 384 for SQuAD is the entry point's default)."""

    do_train: bool = False
    do_eval: bool = False
    do_predict: bool = False
    predict_batch_size: int = 8
    num_train_epochs: float = 3.0
    warmup_proportion: float = 0.1
    steps_per_loop: int = 100


def num_train_steps(options: FinetuningOptions, num_train_examples: int) -> int:
    """The original's count of updates: int(examples / batch size * epochs)."""
    return int(num_train_examples / options.train_batch_size * options.num_train_epochs)


def epoch_ends(options: FinetuningOptions, num_train_examples: int) -> list[int]:
    """The steps that end each whole epoch, and the last step (a fractional epoch's end)."""
    per_epoch = num_train_examples / options.train_batch_size
    total = num_train_steps(options, num_train_examples)
    ends = {int(per_epoch * epoch) for epoch in range(1, math.floor(options.num_train_epochs) + 1)}
    return sorted({step for step in ends if 0 < step < total} | {total})


class FinetuningRun:
    """One fine-tuning job's model, optimiser and loop.

    Args:
      options: the shared flags.
      build_model: encoder -> the task's model (BertClassifier(encoder, 2), say).
      task: its loss and running metrics (a `official.training.trainer.Task`).
      num_train_examples: training rows (sets the number of updates); None when not training.

    Raises:
      ValueError: bad options, or training data too small for one update.
    """

    def __init__(self, options: FinetuningOptions,
                 build_model: Callable[[BertEncoder], keras.Model], task: Task,
                 num_train_examples: int | None = None):
        if not (options.do_train or options.do_eval or options.do_predict):
            raise ValueError("at least one of do_train, do_eval or do_predict must be True")
        if options.num_train_epochs <= 0 or not 0 <= options.warmup_proportion <= 1:
            raise ValueError("num_train_epochs must be positive and warmup_proportion in [0, 1], "
                             f"got {options.num_train_epochs} and {options.warmup_proportion}")
        self.options = options
        self.num_train_examples = num_train_examples
        steps = 1
        if options.do_train:
            steps = num_train_steps(options, num_train_examples or 0)
            if steps < 1:
                raise ValueError(
                    f"{num_train_examples} training examples at train_batch_size="
                    f"{options.train_batch_size} for {options.num_train_epochs} epochs make no "
                    f"update")
        job = job_setup.set_up(options, build_model, steps, int(steps * options.warmup_proportion))
        self.config, self.model = job.config, job.model
        self.trainer = Trainer(job.strategy, job.model, job.optimizer, task,
                               options.loop_options(steps))
        os.makedirs(options.output_dir, exist_ok=True)
        if self.trainer.is_chief:
            self.config.to_json_file(os.path.join(options.output_dir, CONFIG_FILE))

    @property
    def strategy(self) -> tf.distribute.Strategy:
        return self.trainer.strategy

    @property
    def is_chief(self) -> bool:
        """True on the worker that writes results (see official.training.distribution)."""
        return self.trainer.is_chief

    @property
    def step(self) -> int:
        """The update the weights are at (after `train` or `restore`)."""
        return int(self.trainer.step.numpy())

    def train(self, dataset_fn: DatasetFn,
              evaluate: Callable[[], dict[str, float]] | None = None,
              metric: str | None = None) -> dict[str, float] | None:
        """Trains (resuming from output_dir); with `evaluate`, evaluates at each epoch's end.

        Every evaluation writes output_dir/eval_results.txt and TensorBoard's eval/; the best
        by `metrics[metric]` (higher is better) is copied to output_dir/best/ with its results.
        Returns the last evaluation's metrics (None without `evaluate`).
        """
        last: dict[str, float] | None = None

        def on_evaluate(step: int, checkpoint_prefix: str) -> None:
            nonlocal last
            last = self._evaluated(evaluate, step)
            if metric is not None:
                self._keep_if_best(checkpoint_prefix, last, metric, step)

        self.trainer.train(dataset_fn,
                           evaluate_at=epoch_ends(self.options, self.num_train_examples)
                           if evaluate else (),
                           on_evaluate=on_evaluate if evaluate else None)
        return last

    def evaluate(self, evaluate: Callable[[], dict[str, float]]) -> dict[str, float]:
        """Evaluates the current weights once and writes the results (as `train` does)."""
        return self._evaluated(evaluate, self.step)

    def restore(self) -> None:
        """Loads output_dir/best if a run kept one, else output_dir's newest checkpoint; with
        neither the weights stay those of --init_checkpoint (with a warning)."""
        best = os.path.join(self.options.output_dir, BEST_DIR)
        for directory in (best, self.options.output_dir):
            if os.path.isdir(directory) and self.trainer.restore_model(directory):
                return
        logging.warning("No checkpoint in %s: using the %s weights", self.options.output_dir,
                        "--init_checkpoint" if self.options.init_checkpoint else "random")

    def predict(self, dataset: tf.data.Dataset,
                keep: tuple[str, ...] = ()) -> dict[str, np.ndarray]:
        """See `Trainer.predict`."""
        return self.trainer.predict(dataset, keep)

    # ---- results -----------------------------------------------------------------------------

    def _evaluated(self, evaluate: Callable[[], dict[str, float]], step: int) -> dict[str, float]:
        metrics = {name: float(value) for name, value in evaluate().items()}
        logging.info("eval at step %d: %s", step,
                     "  ".join(f"{k} {v:.4f}" for k, v in metrics.items()))
        if self.trainer.is_chief:
            write_eval_results(os.path.join(self.options.output_dir, EVAL_RESULTS_FILE),
                               metrics, step)
            writer = tf.summary.create_file_writer(os.path.join(self.options.output_dir, "eval"))
            with writer.as_default(step=step):
                for name, value in metrics.items():
                    tf.summary.scalar(name, value)
            writer.flush()
        return metrics

    def _keep_if_best(self, checkpoint_prefix: str, metrics: dict[str, float], metric: str,
                      step: int) -> None:
        """Copies the checkpoint to output_dir/best/ when `metric` beats the kept one's.

        The new best/ is assembled under a temporary name and swapped in, so an interruption
        leaves the previous best whole.
        """
        if metric not in metrics:
            raise ValueError(f"the evaluation has no metric {metric!r}; it has "
                             f"{', '.join(metrics)}")
        if not self.trainer.is_chief:
            return
        output_dir = self.options.output_dir
        best = os.path.join(output_dir, BEST_DIR)
        record = os.path.join(best, _BEST_RECORD)
        value = metrics[metric]
        if os.path.exists(record):
            with open(record, encoding="utf-8") as f:
                kept = json.load(f)
            # nan (a correlation of constant predictions) never beats a kept number.
            if kept["metric"] == metric and (math.isnan(value) or kept["value"] >= value):
                return
        staging = best + ".tmp"
        shutil.rmtree(staging, ignore_errors=True)
        os.makedirs(staging)
        prefix_name = os.path.basename(checkpoint_prefix)
        for name in tf.io.gfile.listdir(output_dir):
            if name.startswith(prefix_name + "."):
                shutil.copy2(os.path.join(output_dir, name), staging)
        shutil.copy2(os.path.join(output_dir, CONFIG_FILE), staging)
        write_eval_results(os.path.join(staging, EVAL_RESULTS_FILE), metrics, step)
        with open(os.path.join(staging, _BEST_RECORD), "w", encoding="utf-8") as f:
            json.dump({"metric": metric, "value": metrics[metric], "step": step}, f)
        # The state file tf.train.latest_checkpoint reads; a relative path, so best/ can move.
        with open(os.path.join(staging, "checkpoint"), "w", encoding="utf-8") as f:
            f.write(f'model_checkpoint_path: "{prefix_name}"\n'
                    f'all_model_checkpoint_paths: "{prefix_name}"\n')
        previous = best + ".old"
        if os.path.isdir(best):
            os.replace(best, previous)
        os.replace(staging, best)
        shutil.rmtree(previous, ignore_errors=True)
        logging.info("best %s %.4f at step %d: kept in %s", metric, metrics[metric], step, best)
