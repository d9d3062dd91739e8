"""What every training job sets up the same way: checks, seed, strategy, model, weights, optimiser.

    checked_config(options, adaptations) -> BertConfig
                    everything that can be checked before data work: the config of
                    options.bert_config_file (as the adaptations make it), max_seq_length and
                    the vocab checked against it, and it against the config of checkpoints in
                    output_dir
    set_up(options, build_model, config, adaptations) -> Job
        strategy    from --distribution_strategy
        model       build_model(encoder) in the strategy's scope, --init_checkpoint loaded (a
                    checkpoint of the wrong shape fails here, before any record is written),
                    then each adaptation's `adapt(model)` (official/adaptation.py)
    create_optimizer(options, job, num_train_steps, num_warmup_steps)
                    the original's AdamWeightDecay (or LAMB), float16 loss scaling when asked;
                    made once the data has said how many updates there are

run_pretraining (official/training/pretraining.py) and the fine-tuning jobs
(official/training/finetuning.py) share it, so a flag means the same thing in each.
"""

from __future__ import annotations

import dataclasses
from typing import Callable, Sequence

import keras
import tensorflow as tf

from official import checkpoints
from official.adaptation import Adaptation
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


@dataclasses.dataclass(frozen=True)
class Job:
    config: BertConfig
    strategy: tf.distribute.Strategy
    model: keras.Model


def checked_config(options: TrainingOptions,
                   adaptations: Sequence[Adaptation] = ()) -> BertConfig:
    """The config of options.bert_config_file as the adaptations make it (a distillation's
    student made of its teacher's layers), once the options that need no data or model are
    checked against it.

    Raises:
      ValueError: a bad dtype; no config file; an output_dir that cannot be written; an
        unreadable config; a max_seq_length beyond the config's positions; a vocab larger than
        its vocab_size; an output_dir holding checkpoints of another config.
    """
    if options.dtype not in DTYPE_POLICIES:
        raise ValueError(f"dtype must be one of {', '.join(DTYPE_POLICIES)}, got {options.dtype!r}")
    check_output_dir(options.output_dir)
    source = options.bert_config_file
    config = BertConfig.from_json_file(source) if source else None
    for adaptation in adaptations:
        config, source = adaptation.config(config, source)
    if config is None:
        raise ValueError("--bert_config_file is needed: the model's architecture")
    config.check_seq_length(options.max_seq_length, source)
    if options.vocab_file:
        vocab.check_fits(options.vocab_file, config.vocab_size, source)
    output_dir.check_config(options.output_dir, config, source)
    return config


def set_up(options: TrainingOptions, build_model: Callable[[BertEncoder], keras.Model],
           config: BertConfig, adaptations: Sequence[Adaptation] = ()) -> Job:
    """Seeds everything, builds the strategy, then the model of `config` (`checked_config`'s)
    in its scope with --init_checkpoint loaded. Nothing is written.

    Each adaptation's `adapt(model)` runs last, in the scope: after the pretrained weights are
    in (an adaptation method starts from them) and before any optimiser exists (it sees only the
    variables left trainable), on every run, so a run that only predicts builds the same
    variables its checkpoint holds.

    On a CPU-only machine deterministic ops are switched on for the whole process, so the same
    flags and seed give the same weights.

    Raises:
      ValueError: what `checked_config` raises; checkpoint errors (also ValueErrors) from
        --init_checkpoint.
    """
    keras.utils.set_random_seed(options.seed)
    if not tf.config.list_physical_devices("GPU"):
        tf.config.experimental.enable_op_determinism()
    strategy = distribution.get_strategy(options.distribution_strategy, options.num_gpus,
                                         options.tpu_address)
    with strategy.scope():
        model = build_model(build_encoder(config, dtype=DTYPE_POLICIES[options.dtype]))
        if options.init_checkpoint:
            checkpoints.load_init_checkpoint(options.init_checkpoint, model)
        for adaptation in adaptations:
            adaptation.adapt(model)
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
