"""What every training job sets up the same way: checks, seed, strategy, model, weights, optimiser.

    checked_config(options) -> BertConfig    everything that can be checked before data work:
                    the config of options.bert_config_file, max_seq_length and the vocab checked
                    against it, and it against the config of checkpoints in output_dir
    set_up(options, build_model, config, adapt) -> Job
        strategy    from --distribution_strategy
        model       build_model(encoder) in the strategy's scope, --init_checkpoint loaded (a
                    checkpoint of the wrong shape fails here, before any record is written),
                    then adapt(model): the one hook of an adaptation method (adapters, LoRA)
    create_optimizer(options, job, num_train_steps, num_warmup_steps)
                    the original's AdamWeightDecay (or LAMB), float16 loss scaling when asked;
                    made once the data has said how many updates there are

run_pretraining (official/training/pretraining.py) and the fine-tuning jobs
(official/training/finetuning.py) share it, so a flag means the same thing in each.
"""

from __future__ import annotations

import dataclasses
from typing import Callable, Protocol, runtime_checkable

import keras
import tensorflow as tf

from official import checkpoints
from official.configs import BertConfig
from official.modeling.encoder import BertEncoder, build_encoder
from official.output_paths import check_output_dir
from official.text import vocab
from official.training import distribution, optimization, output_dir
from official.training.trainer import LoopOptions

# --dtype -> Keras dtype policy. float16 adds dynamic loss scaling; bfloat16 needs none.
DTYPE_POLICIES = {"float32": "float32", "bfloat16": "mixed_bfloat16", "float16": "mixed_float16"}


@dataclasses.dataclass(frozen=True, kw_only=True)
class TrainingOptions:
    """The options every training job has: the model, its start, the optimiser, the loop and the
    machine. Names and defaults are the original scripts'; jobs add their own fields."""

    bert_config_file: str
    output_dir: str
    init_checkpoint: str | None = None
    vocab_file: str | None = None  # the tokenizer's; checked against the config's vocab_size
    max_seq_length: int = 128
    train_batch_size: int = 32
    eval_batch_size: int = 8
    learning_rate: float = 5e-5
    save_checkpoints_steps: int = 1000
    steps_per_loop: int = 1000
    log_steps: int = 100
    keep_checkpoint_max: int = 5
    optimizer: str = "adamw"  # or "lamb"
    weight_decay_rate: float = 0.01
    gradient_accumulation_steps: int = 1
    dtype: str = "float32"
    jit_compile: bool = False
    distribution_strategy: str = "default"
    num_gpus: int = 0
    tpu_address: str | None = None
    seed: int = 12345

    def loop_options(self, num_train_steps: int) -> LoopOptions:
        """The training loop's share of the options."""
        return LoopOptions(
            output_dir=self.output_dir, num_train_steps=num_train_steps,
            train_batch_size=self.train_batch_size, steps_per_loop=self.steps_per_loop,
            save_checkpoints_steps=self.save_checkpoints_steps,
            keep_checkpoint_max=self.keep_checkpoint_max, log_steps=self.log_steps,
            gradient_accumulation_steps=self.gradient_accumulation_steps,
            jit_compile=self.jit_compile)


@runtime_checkable
class Adaptation(Protocol):
    """An adaptation method with files of its own (official/peft's PeftAdaptation); a plain
    callable `adapt(model)` is one without."""

    def __call__(self, model: keras.Model) -> None:
        """Adapts the model: runs in the strategy's scope, after --init_checkpoint is loaded."""

    def files(self) -> dict[str, str]:
        """{file name: text} a training run writes beside its bert_config.json and into best/
        (once `__call__` has run)."""


@dataclasses.dataclass(frozen=True)
class Job:
    config: BertConfig
    strategy: tf.distribute.Strategy
    model: keras.Model


def checked_config(options: TrainingOptions, config: BertConfig | None = None) -> BertConfig:
    """The config (options.bert_config_file's, unless `config` is given: a distillation's
    student made of its teacher's layers), once the options that need no data or model are
    checked against it.

    Raises:
      ValueError: a bad dtype; an output_dir that cannot be written; an unreadable config; a
        max_seq_length beyond the config's positions; a vocab larger than its vocab_size; an
        output_dir holding checkpoints of another config.
    """
    if options.dtype not in DTYPE_POLICIES:
        raise ValueError(f"dtype must be one of {', '.join(DTYPE_POLICIES)}, got {options.dtype!r}")
    check_output_dir(options.output_dir)
    config = config or BertConfig.from_json_file(options.bert_config_file)
    if options.max_seq_length > config.max_position_embeddings:
        raise ValueError(f"--max_seq_length={options.max_seq_length} is more than the "
                         f"max_position_embeddings={config.max_position_embeddings} of "
                         f"{options.bert_config_file}")
    if options.vocab_file:
        vocab.check_fits(options.vocab_file, config.vocab_size, options.bert_config_file)
    output_dir.check_config(options.output_dir, config, options.bert_config_file)
    return config


def set_up(options: TrainingOptions, build_model: Callable[[BertEncoder], keras.Model],
           config: BertConfig | None = None,
           adapt: Callable[[keras.Model], None] | None = None) -> Job:
    """Seeds everything, builds the strategy, then the model in its scope with --init_checkpoint
    loaded; `config` is `checked_config(options)`, made here when not given. Nothing is written.

    `adapt(model)` runs last, in the scope: after the pretrained weights are in (an adaptation
    method starts from them) and before any optimiser exists (it sees only the variables left
    trainable), on every run, so a run that only predicts builds the same variables its
    checkpoint holds.

    On a CPU-only machine deterministic ops are switched on for the whole process, so the same
    flags and seed give the same weights.

    Raises:
      ValueError: what `checked_config` raises; checkpoint errors (also ValueErrors) from
        --init_checkpoint.
    """
    config = config or checked_config(options)
    keras.utils.set_random_seed(options.seed)
    if not tf.config.list_physical_devices("GPU"):
        tf.config.experimental.enable_op_determinism()
    strategy = distribution.get_strategy(options.distribution_strategy, options.num_gpus,
                                         options.tpu_address)
    with strategy.scope():
        model = build_model(build_encoder(config, dtype=DTYPE_POLICIES[options.dtype]))
        if options.init_checkpoint:
            checkpoints.load_init_checkpoint(options.init_checkpoint, model)
        if adapt is not None:
            adapt(model)
    return Job(config, strategy, model)


def create_optimizer(options: TrainingOptions, job: Job, num_train_steps: int,
                     num_warmup_steps: int) -> keras.optimizers.Optimizer:
    """The optimiser of the job's model, in its strategy's scope (float16: loss scaling)."""
    with job.strategy.scope():
        optimizer = optimization.create_optimizer(
            options.optimizer, options.learning_rate, num_train_steps, num_warmup_steps,
            options.weight_decay_rate, decay_exempt=optimization.decay_exempt_variables(job.model))
        if options.dtype == "float16":
            optimizer = keras.optimizers.LossScaleOptimizer(optimizer)
    return optimizer
