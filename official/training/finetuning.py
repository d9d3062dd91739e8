"""Fine-tuning, the same for every task: `run(options, task, data)`, and the job it drives.

    run(options, task, data, adaptations)
                       what every fine-tuning entry point does with its task
                       (official/tasks/base.py), adapted by any method (official/adaptation.py):
                       checks, data, training with per-epoch evaluation and best/, prediction
    FinetuningOptions  the flags the fine-tuning entry points share (official/training/options.py)
    FinetuningRun      job_setup's checks, strategy and model (+ --init_checkpoint, then the
                       adaptations), made before any data work; then an optimiser and a Trainer:
        .check_train_size(examples, source)    the updates they make (an error if none)
        .train(dataset_fn, examples, source, evaluate, metric)
                                               an epoch's end: checkpoint, evaluate(), and the
                                               best checkpoint so far written to output_dir/best/
        .restore()                             the best (else the newest) checkpoint, for
                                               evaluating or predicting without training
        .predict(dataset, keep)                outputs as numpy arrays, in the data's order

The number of updates is the original's `int(num_examples / train_batch_size * num_train_epochs)`
with `warmup_proportion` of them warming up; `num_examples` is the train split's
`Records.num_examples`, the count the task's data side says the original used. output_dir (and
output_dir/best) hold training checkpoints with a bert_config.json and the task's and the
adaptation's records beside them, so either is an --init_checkpoint for any job (a
parameter-efficient run's hold only what it trained, read with its base: official/peft).

Neither this module nor the loop it drives names a task or an adaptation method: the task's
protocol says what to build, train and write; the adaptations' hooks say how it is changed.
"""

from __future__ import annotations

import json
import math
import os
import shutil
from typing import Callable, Sequence

import numpy as np
import tensorflow as tf
from absl import logging

from official.adaptation import Adaptation
from official.atomic_files import open_atomically
from official.checkpoints import CONFIG_FILE, finetuned
from official.checkpoints.finetuned import BEST_DIR
from official.tasks.base import (
    EVALUATION_SET_RESULTS,
    EVALUATION_SETS_TABLE,
    SPLITS,
    FinetuningTask,
    TaskData,
    evaluation_sets,
)
from official.training import job_setup, output_dir
from official.training.distribution import is_chief
from official.training.finetuning_input import record_dataset
from official.training.options import FinetuningOptions
from official.training.record_errors import naming_bad_records
from official.training.trainer import EVAL_RESULTS_FILE, DatasetFn, Trainer, write_eval_results

_BEST_RECORD = "best_metric.json"


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

    Made before the entry point reads or writes its data: everything that can be checked without
    the data is checked here (options, config, vocab, output_dir, --init_checkpoint's shapes).
    The optimiser and loop follow once `train` knows how many examples there are.

    Args:
      options: the shared flags.
      task: the task's model (`task.build_model`) and loss (a `official.training.trainer.Task`),
        as the adaptations made it.
      adaptations: the adaptation methods' hooks (official/adaptation.py): the config, what
        they do to the model once --init_checkpoint is loaded, the files they write.

    Raises:
      ValueError: bad options, config, vocab or checkpoint; task records that differ from those
        of the checkpoints in output_dir; evaluating or predicting without training from an
        output_dir that holds no fine-tuned checkpoint (unless options.allow_untrained_head).
    """

    def __init__(self, options: FinetuningOptions, task: FinetuningTask,
                 adaptations: Sequence[Adaptation] = ()):
        if not (options.do_train or options.allow_untrained_head
                or output_dir.has_checkpoint(options.output_dir)):
            wanted = "--do_predict" if options.do_predict else "--do_eval"
            raise ValueError(
                f"{wanted} without --do_train: {options.output_dir} holds no fine-tuned "
                f"checkpoint, so the task's head would be untrained and its outputs random; "
                f"train first, or pass --allow_untrained_head to use the "
                f"{'--init_checkpoint' if options.init_checkpoint else 'random'} weights anyway")
        self.options = options
        self.task = task
        self._adaptations = tuple(adaptations)
        for name, text in task.files().items():
            finetuned.check_record(options.output_dir, name, text)
        self._job = job_setup.set_up(options, task.build_model,
                                     job_setup.checked_config(options, self._adaptations),
                                     self._adaptations)
        self.config, self.model = self._job.config, self._job.model
        self.is_chief = is_chief(self._job.strategy)
        self._trainer: Trainer | None = None

    @property
    def strategy(self) -> tf.distribute.Strategy:
        return self._job.strategy

    @property
    def step(self) -> int:
        """The update the weights are at (after `train` or `restore`)."""
        return int(self._loop(1).step.numpy())

    def check_train_size(self, num_train_examples: int, source: str) -> int:
        """The number of updates `num_train_examples` make; raises ValueError naming `source`
        (the training file) when they make none."""
        steps = num_train_steps(self.options, num_train_examples)
        if steps < 1:
            raise ValueError(
                f"{source}: {num_train_examples} training examples at train_batch_size="
                f"{self.options.train_batch_size} for {self.options.num_train_epochs} epochs "
                f"make no update")
        return steps

    def train(self, dataset_fn: DatasetFn, num_train_examples: int, source: str,
              evaluate: Callable[[], dict[str, float]] | None = None,
              metric: str | None = None) -> dict[str, float] | None:
        """Trains (resuming from output_dir); with `evaluate`, evaluates at each epoch's end.

        Args:
          num_train_examples: what sets the number of updates (the original's count).
          source: the training data, named in errors.
        Every evaluation writes output_dir/eval_results.txt and TensorBoard's eval/; the best
        by `metrics[metric]` (higher is better) is written to output_dir/best/ with its results.
        Returns the last evaluation's metrics (None without `evaluate`).
        """
        steps = self.check_train_size(num_train_examples, source)
        trainer = self._loop(steps)
        if self.is_chief:
            output_dir.claim(self.options.output_dir, self.config, self._files())
        last: dict[str, float] | None = None

        def on_evaluate(step: int, checkpoint_prefix: str) -> None:
            nonlocal last
            last = self._evaluated(evaluate, step)
            if metric is not None:
                self._keep_if_best(checkpoint_prefix, last, metric, step)

        trainer.train(dataset_fn,
                      evaluate_at=epoch_ends(self.options, num_train_examples)
                      if evaluate else (),
                      on_evaluate=on_evaluate if evaluate else None)
        return last

    def evaluate(self, evaluate: Callable[[], dict[str, float]]) -> dict[str, float]:
        """Evaluates the current weights once and writes the results (as `train` does)."""
        return self._evaluated(evaluate, self.step)

    def restore(self) -> None:
        """Loads output_dir/best if a run kept one, else output_dir's newest checkpoint; with
        neither (allowed by options.allow_untrained_head) the weights stay those of
        --init_checkpoint, with a warning."""
        best = os.path.join(self.options.output_dir, BEST_DIR)
        for directory in (best, self.options.output_dir):
            if os.path.isdir(directory) and self._loop(1).restore_model(directory):
                return
        logging.warning("No checkpoint in %s: using the %s weights", self.options.output_dir,
                        "--init_checkpoint" if self.options.init_checkpoint else "random")

    def predict(self, dataset: tf.data.Dataset,
                keep: tuple[str, ...] = ()) -> dict[str, np.ndarray]:
        """See `Trainer.predict`."""
        return self._loop(1).predict(dataset, keep)

    def _loop(self, steps: int) -> Trainer:
        """The Trainer, made on first use with an optimiser for `steps` updates (1 when the job
        only evaluates or predicts: the schedule is then never used)."""
        if self._trainer is None:
            optimizer = job_setup.create_optimizer(self.options, self._job, steps,
                                                   int(steps * self.options.warmup_proportion))
            self._trainer = Trainer(self._job.strategy, self.model, optimizer, self.task,
                                    job_setup.loop_options(self.options, steps))
        return self._trainer

    def _files(self) -> dict[str, str | None]:
        """The records the task and the adaptations write beside the checkpoints (None: a file
        of theirs this run does not write)."""
        files = dict(self.task.files())
        for adaptation in self._adaptations:
            files.update(adaptation.files())
        return files

    # ---- results -----------------------------------------------------------------------------

    def _evaluated(self, evaluate: Callable[[], dict[str, float]], step: int) -> dict[str, float]:
        metrics = {name: float(value) for name, value in evaluate().items()}
        logging.info("eval at step %d: %s", step,
                     "  ".join(f"{k} {v:.4f}" for k, v in metrics.items()))
        if self.is_chief:
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
        """Writes the checkpoint's weights (the model's roots and the step, no optimiser slots)
        to output_dir/best/ when `metric` beats the kept one's.

        The new best/ is assembled under a temporary name and swapped in, so an interruption
        leaves the previous best whole.
        """
        if metric not in metrics:
            raise ValueError(f"the evaluation has no metric {metric!r}; it has "
                             f"{', '.join(metrics)}")
        if not self.is_chief:
            return
        folder = self.options.output_dir
        best = os.path.join(folder, BEST_DIR)
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
        # The weights alone: best/ is read to evaluate, predict and export, never to resume.
        self._loop(1).write_weights(os.path.join(staging, prefix_name))
        for name in (CONFIG_FILE, *(n for n, text in self._files().items() if text is not None)):
            shutil.copy2(os.path.join(folder, name), staging)
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


def write_sets_table(path: str, sets: dict[str, tuple[str, dict[str, float]]]) -> None:
    """A Markdown table of labelled sets' scores: {name: (source, metrics)}, a row each in
    order, a column per metric (the first set's), values as eval_results.txt has them."""
    metrics = list(next(iter(sets.values()))[1])
    lines = ["| set | file | " + " | ".join(metrics) + " |",
             "|---|---|" + "---|" * len(metrics)]
    for name, (source, scores) in sets.items():
        values = " | ".join(f"{scores[m]:.4f}" if m in scores else "–" for m in metrics)
        lines.append(f"| {name} | {source} | {values} |")
    with open_atomically(path) as f:
        f.write("\n".join(lines) + "\n")


# ---- the run every fine-tuning entry point makes ---------------------------------------------

def run(options: FinetuningOptions, task: FinetuningTask, data: TaskData,
        adaptations: Sequence[Adaptation] = ()) -> dict[str, dict[str, float]]:
    """Trains, evaluates and predicts as options.do_train, do_eval and do_predict say.

    `adaptations` are the methods resolved for this run (official/adaptation.py; the options
    are those their `resolve` returned): each may wrap the task, change the config, adapt the
    model and write records.

    The order makes a mistake cost no work: the options, config, vocab, output_dir and
    --init_checkpoint are checked first (`FinetuningRun`); then every split asked for is read and
    checked (`data.read`) and the training updates counted; only then are records written. With
    --do_eval while training, the dev split is evaluated at each epoch's end and best/ kept by
    `task.best_metric`; --do_eval alone evaluates the checkpoint a finished run left; --do_predict
    predicts the test split from best/ (else the newest checkpoint), the chief writing the files
    (the task's, and its scores in `task.results_file` when the split has answers). The data's
    further labelled sets (official/tasks/base.py `evaluation_sets`) are read with the splits
    and, with --do_eval, scored by the same checkpoint as the test split (best/: chosen on dev
    alone, never on them).

    Returns:
      {"dev": the last dev metrics, "test": the test split's scores, <set>: each further
      set's}, for the parts that ran ("test" when the test data has answers).
    """
    job_setup.fuse_elementwise(options)
    for adaptation in adaptations:
        task = adaptation.task(task)
    job = FinetuningRun(options, task, adaptations)
    asked = (options.do_train, options.do_eval, options.do_predict)
    splits = [split for split, wanted in zip(SPLITS, asked) if wanted]
    further = evaluation_sets(data) if options.do_eval else ()
    splits += further
    train_count = data.read(splits)
    if train_count is not None:
        job.check_train_size(train_count, data.source("train"))
    records = {split: data.records(split) for split in splits}
    documents = [split for split in splits if split != "train" and records[split].documents]
    if documents and job.strategy.num_replicas_in_sync > 1:
        # A replica's slice of a batch of documents would cut their windows from them.
        raise ValueError(f"{records[documents[0]].source}: documents read in windows are "
                         f"evaluated and predicted on one replica, not "
                         f"{job.strategy.num_replicas_in_sync}: train with this "
                         "--distribution_strategy, then evaluate with --do_train=false and "
                         "--distribution_strategy=one_device")
    for split, made in records.items():
        logging.info("%s %s: %d examples, %d records (%s)", split, made.source, made.num_examples,
                     made.num_records, "cached records reused" if made.reused
                     else f"records written to {made.path}")

    def predict(split: str, batch_size: int) -> dict[str, np.ndarray]:
        dataset = record_dataset(records[split].path, records[split].spec, batch_size,
                                 is_training=False)
        return job.predict(dataset, keep=task.keep)

    def evaluate(split: str = "dev") -> dict[str, float]:
        return task.evaluate(predict(split, options.eval_batch_size), records[split])

    def train_dataset(context, batch_size, start_step):
        return record_dataset(records["train"].path, records["train"].spec, batch_size,
                              is_training=True, seed=options.seed + start_step,
                              input_context=context)

    results = {}
    with naming_bad_records(sorted({made.path for made in records.values()})):
        if options.do_train:
            dev = job.train(train_dataset, records["train"].num_examples, data.source("train"),
                            evaluate if options.do_eval else None, task.best_metric)
            if dev is not None:
                results["dev"] = dev
        elif options.do_eval:
            job.restore()
            results["dev"] = job.evaluate(evaluate)
        if further:
            job.restore()
        for name in further:
            results[name] = scores = evaluate(name)
            logging.info("%s (%s): %s", name, records[name].source,
                         "  ".join(f"{k} {v:.4f}" for k, v in scores.items()))
            if job.is_chief:
                write_eval_results(os.path.join(options.output_dir,
                                                EVALUATION_SET_RESULTS.format(name=name)),
                                   scores, job.step)
        if further and job.is_chief:
            write_sets_table(os.path.join(options.output_dir, EVALUATION_SETS_TABLE),
                             {name: (records[name].source, results[name])
                              for name in ("dev", *further) if name in results})
        if options.do_predict:
            job.restore()
            scores = task.write_predictions(predict("test", options.predict_batch_size),
                                            records["test"],
                                            options.output_dir if job.is_chief else None)
            if scores:
                results["test"] = scores
                if job.is_chief and task.results_file:
                    write_eval_results(os.path.join(options.output_dir, task.results_file),
                                       scores, job.step)
    return results
