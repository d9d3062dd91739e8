"""What every training job sets up the same way: seed, strategy, model, weights, optimiser.

    set_up(options, build_model, num_train_steps, num_warmup_steps) -> Job
        config      the BertConfig of options.bert_config_file (max_seq_length checked against it)
        strategy    from --distribution_strategy
        model       build_model(encoder) in the strategy's scope, --init_checkpoint loaded
        optimizer   the original's AdamWeightDecay (or LAMB), float16 loss scaling when asked

run_pretraining (official/training/pretraining.py) and the fine-tuning jobs
(official/training/finetuning.py) share it, so a flag means the same thing in each.
"""

from __future__ import annotations

import dataclasses
from typing import Callable

import keras
import tensorflow as tf

from official import checkpoints
from official.configs import BertConfig
from official.modeling.encoder import BertEncoder, build_encoder
from official.training import distribution, optimization
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
    optimizer: keras.optimizers.Optimizer


def set_up(options: TrainingOptions, build_model: Callable[[BertEncoder], keras.Model],
           num_train_steps: int, num_warmup_steps: int) -> Job:
    """Seeds everything, builds the strategy, then the model and optimiser in its scope.

    On a CPU-only machine deterministic ops are switched on for the whole process, so the same
    flags and seed give the same weights.

    Raises:
      ValueError: a bad dtype, a max_seq_length beyond the config's positions, an unreadable
        config; checkpoint errors (also ValueErrors) from --init_checkpoint.
    """
    if options.dtype not in DTYPE_POLICIES:
        raise ValueError(f"dtype must be one of {', '.join(DTYPE_POLICIES)}, got {options.dtype!r}")
    config = BertConfig.from_json_file(options.bert_config_file)
    if options.max_seq_length > config.max_position_embeddings:
        raise ValueError(f"max_seq_length={options.max_seq_length} is more than the "
                         f"max_position_embeddings={config.max_position_embeddings} of "
                         f"{options.bert_config_file}")
    keras.utils.set_random_seed(options.seed)
    if not tf.config.list_physical_devices("GPU"):
        tf.config.experimental.enable_op_determinism()
    strategy = distribution.get_strategy(options.distribution_strategy, options.num_gpus,
                                         options.tpu_address)
    with strategy.scope():
        model = build_model(build_encoder(config, dtype=DTYPE_POLICIES[options.dtype]))
        if options.init_checkpoint:
            checkpoints.load_init_checkpoint(options.init_checkpoint, model)
        optimizer = optimization.create_optimizer(
            options.optimizer, options.learning_rate, num_train_steps, num_warmup_steps,
            options.weight_decay_rate, decay_exempt=optimization.decay_exempt_variables(model))
        if options.dtype == "float16":
            optimizer = keras.optimizers.LossScaleOptimizer(optimizer)
    return Job(config, strategy, model, optimizer)
