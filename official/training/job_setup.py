"""What every training job sets up the same way: checks, seed, strategy, model, weights, optimiser.

    (the options themselves, checked without TensorFlow: official/training/options.py)
    loop_options(options, num_train_steps)   the training loop's share of them
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
    fuse_elementwise(options) -> bool
                    XLA's clustering of the elementwise ops alone, each matmul left to oneDNN
                    (--fuse_elementwise; on by default with bfloat16): called first by a run,
                    before TensorFlow compiles any graph

run_pretraining (official/training/pretraining.py) and the fine-tuning jobs
(official/training/finetuning.py) share it, so a flag means the same thing in each.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Callable, Sequence

import keras
import tensorflow as tf

from official import checkpoints
from official.adaptation import Adaptation
from official.configs import BertConfig
from official.modeling.encoder import BertEncoder, build_encoder
from official.text import vocab
from official.training import distribution, optimization, output_dir
from official.training.options import DTYPE_POLICIES, TrainingOptions, check_files
from official.training.trainer import LoopOptions

# TensorFlow's auto-clustering restricted to its "fusible" ops (elementwise ops and reductions,
# never a MatMul), on a CPU too. TensorFlow reads TF_XLA_FLAGS once, when it first compiles a
# graph: set before any.
_FUSIBLE_CLUSTERS = ("--tf_xla_auto_jit=2", "--tf_xla_cpu_global_jit",
                     "--tf_xla_ops_to_cluster=FUSIBLE")


def fuse_elementwise(options: TrainingOptions) -> bool:
    """Has XLA fuse the ops between the matmuls when options.fuse_elementwise says so (None:
    with bfloat16); returns whether it does.

    Why bfloat16: on a CPU with bfloat16 units (AMX, AVX512_BF16) oneDNN's bfloat16 matmuls run
    several times faster than float32's, and then the unfused elementwise ops (each a pass over
    memory: GELU's half-dozen, LayerNorm's, the casts around them, the optimizer's per-variable
    updates) take most of a small BERT's step; XLA fuses them into a few loops. Compiling the
    whole step instead (--jit_compile) would take the matmuls from oneDNN: XLA's own CPU matmuls
    use no bfloat16 units. bench/pretraining_precision.py measures the three in rounds.
    """
    on = (options.fuse_elementwise if options.fuse_elementwise is not None
          else options.dtype == "bfloat16")
    if on and not options.jit_compile:
        given = os.environ.get("TF_XLA_FLAGS", "").split()
        named = {flag.split("=")[0] for flag in given}
        os.environ["TF_XLA_FLAGS"] = " ".join(
            [*given, *(f for f in _FUSIBLE_CLUSTERS if f.split("=")[0] not in named)])
    return on


def loop_options(options: TrainingOptions, num_train_steps: int) -> LoopOptions:
    """The training loop's share of the options."""
    return LoopOptions(
        output_dir=options.output_dir, num_train_steps=num_train_steps,
        train_batch_size=options.train_batch_size, steps_per_loop=options.steps_per_loop,
        save_checkpoints_steps=options.save_checkpoints_steps,
        keep_checkpoint_max=options.keep_checkpoint_max, log_steps=options.log_steps,
        gradient_accumulation_steps=options.gradient_accumulation_steps,
        jit_compile=options.jit_compile)


@dataclasses.dataclass(frozen=True)
class Job:
    """A set-up job; `fresh`: the model's pretraining-head variables --init_checkpoint did not
    have (they start from their initialisation)."""
    config: BertConfig
    strategy: tf.distribute.Strategy
    model: keras.Model
    fresh: tuple[keras.Variable, ...] = ()


def checked_config(options: TrainingOptions,
                   adaptations: Sequence[Adaptation] = ()) -> BertConfig:
    """The config of options.bert_config_file as the adaptations make it (a distillation's
    student made of its teacher's layers), once the options that need no data or model are
    checked against it.

    Raises:
      ValueError: no config file; an output_dir that cannot be written; an
        unreadable config; a max_seq_length beyond the config's positions; a vocab larger than
        its vocab_size; an output_dir holding checkpoints of another config.
    """
    config, source = check_files(options), options.bert_config_file
    for adaptation in adaptations:
        config, source = adaptation.config(config, source)
    if config is None:
        raise ValueError("--bert_config_file is needed: the model's architecture")
    if source != options.bert_config_file:
        config.check_seq_length(options.max_seq_length, source)
        if options.vocab_file:
            vocab.check_fits(options.vocab_file, config.vocab_size, source)
    output_dir.check_config(options.output_dir, config, source)
    return config


def set_up(options: TrainingOptions, build_model: Callable[[BertEncoder], keras.Model],
           config: BertConfig, adaptations: Sequence[Adaptation] = (),
           leave_out: Sequence[str] = ()) -> Job:
    """Seeds everything, builds the strategy, then the model of `config` (`checked_config`'s)
    in its scope with --init_checkpoint loaded (but its weights whose original names start
    with one of `leave_out`: a head the job wants fresh). Nothing is written.

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
        fresh = []
        if options.init_checkpoint:
            fresh = checkpoints.load_init_checkpoint(options.init_checkpoint, model,
                                                     tuple(leave_out))
        for adaptation in adaptations:
            adaptation.adapt(model)
    return Job(config, strategy, model, tuple(fresh))


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
