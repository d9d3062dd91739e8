"""The options of a training job, as the entry points' flags say them, checked without TensorFlow.

    TrainingOptions      every training job's: the model, its start, the optimiser, the loop and
                         the machine
    FinetuningOptions    + what to do (train, evaluate, predict) and the schedule in epochs
    PretrainingOptions   + the records and the schedule in steps
    DTYPE_POLICIES, STRATEGIES, OPTIMIZERS
                         the values --dtype, --distribution_strategy and --optimizer take
    check_files(options) -> BertConfig | None
                         the options' files, as far as no TensorFlow is needed: output_dir
                         writable, the config (and max_seq_length and the vocab against it),
                         the vocab, --init_checkpoint there, a multi-worker run's TF_CONFIG

Names and defaults are the original scripts'. Options are checked when made (one-line
ValueErrors naming the flag), so an entry point refuses a bad combination before it loads
TensorFlow (official/command_line.py); official/training/job_setup.py turns them into a job.
"""

from __future__ import annotations

import dataclasses
import os

from official.configs import BertConfig
from official.output_paths import check_output_dir
from official.pretraining_records import ORIGINAL_MASKING_MIX
from official.settings_parsing import check_shares
from official.text import vocab
from official.training.cluster import check_tf_config

# --dtype -> Keras dtype policy. float16 adds dynamic loss scaling; bfloat16 needs none.
DTYPE_POLICIES = {"float32": "float32", "bfloat16": "mixed_bfloat16", "float16": "mixed_float16"}
# --distribution_strategy (official/training/distribution.py builds each).
STRATEGIES = ("default", "mirrored", "multi_worker_mirrored", "tpu")
# --optimizer (official/training/optimization.py): the original's AdamWeightDecay, and LAMB.
OPTIMIZERS = ("adamw", "lamb")
# --objective: the language model a checkpoint is (or was) pretrained as: the masked LM, whose
# attention sees both sides, or the paper's left-to-right ablation, whose causal mask its
# fine-tuning keeps (BertConfig.causal_attention).
OBJECTIVES = ("mlm", "ltr")


def _one_of(flag: str, value: str, choices) -> None:
    if value not in choices:
        raise ValueError(f"{flag} must be one of {', '.join(choices)}, got {value!r}")


@dataclasses.dataclass(frozen=True, kw_only=True)
class TrainingOptions:
    """The options every training job has; jobs add their own fields.

    bert_config_file may be None when an adaptation gives the config (a distillation's student
    made of its teacher's layers): official/training/job_setup.py's `checked_config`.
    objective: "ltr" makes the config's attention causal, "mlm" bidirectional; None keeps what
    the config says (`check_files`).
    """

    bert_config_file: str | None
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
    optimizer: str = "adamw"
    weight_decay_rate: float = 0.01
    gradient_accumulation_steps: int = 1
    dtype: str = "float32"
    jit_compile: bool = False
    # XLA auto-clustering of the fusible (elementwise) ops alone; None: on for bfloat16
    # (official/training/job_setup.py's `fuse_elementwise`).
    fuse_elementwise: bool | None = None
    distribution_strategy: str = "default"
    num_gpus: int = 0
    tpu_address: str | None = None
    seed: int = 12345
    objective: str | None = None

    def __post_init__(self):
        if self.objective is not None:
            _one_of("--objective", self.objective, OBJECTIVES)
        _one_of("dtype", self.dtype, DTYPE_POLICIES)
        _one_of("distribution_strategy", self.distribution_strategy, STRATEGIES)
        _one_of("optimizer", self.optimizer, OPTIMIZERS)
        if not self.output_dir:
            raise ValueError("--output_dir is needed: where the checkpoints go")
        k = self.gradient_accumulation_steps
        if k >= 1 and self.train_batch_size % k:
            # The Trainer checks replicas x k once the strategy is known; this much needs none.
            raise ValueError(f"train_batch_size={self.train_batch_size} must divide evenly into "
                             f"gradient_accumulation_steps={k} micro-batches")


@dataclasses.dataclass(frozen=True, kw_only=True)
class FinetuningOptions(TrainingOptions):
    """What the fine-tuning entry points' shared flags say; names and defaults are the
    original run_classifier's (max_seq_length 384 for SQuAD is the entry point's default)."""

    do_train: bool = False
    do_eval: bool = False
    do_predict: bool = False
    predict_batch_size: int = 8
    num_train_epochs: float = 3.0
    warmup_proportion: float = 0.1
    steps_per_loop: int = 100
    allow_untrained_head: bool = False  # evaluate or predict with no fine-tuned checkpoint

    def __post_init__(self):
        super().__post_init__()
        if not (self.do_train or self.do_eval or self.do_predict):
            raise ValueError("at least one of do_train, do_eval or do_predict must be True")
        if self.num_train_epochs <= 0 or not 0 <= self.warmup_proportion <= 1:
            raise ValueError("num_train_epochs must be positive and warmup_proportion in [0, 1], "
                             f"got {self.num_train_epochs} and {self.warmup_proportion}")


@dataclasses.dataclass(frozen=True, kw_only=True)
class PretrainingOptions(TrainingOptions):
    """Everything run_pretraining's flags say; names and defaults are the original's.

    objective (TrainingOptions'): "ltr" trains a left-to-right language model on the records
    with their masking undone, its attention causal; "mlm" (the flag's default) or None the
    masked LM (official/training/pretraining.py).
    eval_input_file: the records --do_eval reads (held-out text); None: input_file's.
    second_sentence_loss: train the records' next-sentence or sentence-order loss beside the
    masked LM (False: the masked LM alone on the same two-segment inputs, the BERT paper's No
    NSP).
    probe_second_sentence: train only a fresh second-sentence head on the frozen
    init_checkpoint: a linear probe of what its pooled output knows of the records' task.
    """

    input_file: str
    eval_input_file: str | None = None
    second_sentence_loss: bool = True
    probe_second_sentence: bool = False
    max_predictions_per_seq: int = 20
    do_train: bool = False
    do_eval: bool = False
    num_train_steps: int = 100000
    num_warmup_steps: int = 10000
    max_eval_steps: int = 100
    dynamic_masking: bool = False  # needs vocab_file: the ids of [MASK], [CLS], [SEP]
    # (MASK, SAME, RANDOM) of dynamic masking (official/pretraining_records.py); the records'
    # stored masks were made with create_pretraining_data's own --masking_mix.
    masking_mix: tuple[float, float, float] = ORIGINAL_MASKING_MIX
    # The first updates train only the rows convert_checkpoint --extend_vocab added to the
    # init_checkpoint (and any head it lacked); see official/training/pretraining.py.
    train_only_new_embeddings_steps: int = 0

    def __post_init__(self):
        super().__post_init__()
        if not (self.do_train or self.do_eval):
            raise ValueError("at least one of do_train or do_eval must be True")
        if not self.input_file:
            raise ValueError("--input_file is needed: the pretraining records")
        if len(self.masking_mix) != 3:
            raise ValueError(f"--masking_mix must be 3 shares (MASK, SAME, RANDOM), got "
                             f"{self.masking_mix!r}")
        check_shares(self.masking_mix, "--masking_mix")
        if tuple(self.masking_mix) != ORIGINAL_MASKING_MIX:
            mix = ",".join(map(str, self.masking_mix))
            if self.objective == "ltr":
                raise ValueError(f"--masking_mix={mix}: --objective=ltr masks nothing")
            if not self.dynamic_masking:
                raise ValueError(f"--masking_mix={mix} needs --dynamic_masking: without it the "
                                 f"records' masks are read as they were made (give "
                                 f"create_pretraining_data the --masking_mix)")
        if self.probe_second_sentence:
            if not self.init_checkpoint or not self.do_train:
                raise ValueError("--probe_second_sentence trains a head on a checkpoint: it "
                                 "needs --init_checkpoint and --do_train")
            if self.objective == "ltr" or not self.second_sentence_loss:
                raise ValueError("--probe_second_sentence trains the second-sentence loss "
                                 "alone: not with --objective=ltr or --nosecond_sentence_loss")
        steps = self.train_only_new_embeddings_steps
        if steps < 0:
            raise ValueError(f"--train_only_new_embeddings_steps={steps}: must be at least 0")
        if steps and not self.init_checkpoint:
            raise ValueError("--train_only_new_embeddings_steps needs --init_checkpoint: a "
                             "checkpoint convert_checkpoint --extend_vocab wrote")
        if steps > self.num_train_steps:
            raise ValueError(f"--train_only_new_embeddings_steps={steps}: more than "
                             f"--num_train_steps={self.num_train_steps}")


def check_files(options: TrainingOptions) -> BertConfig | None:
    """Checks what the options' files can be checked for before TensorFlow loads, and returns
    the config of options.bert_config_file (None when none is given: an adaptation gives it),
    its attention as options.objective says.

    Raises:
      ValueError: an output_dir that cannot be written; an unreadable config; a max_seq_length
        beyond its positions; a vocab that is not one, or larger than its vocab_size; an
        --init_checkpoint that is neither a file, a checkpoint prefix nor a folder; dynamic
        masking without a vocab_file; under multi_worker_mirrored, a bad TF_CONFIG
        (official/training/cluster.py).
    """
    check_output_dir(options.output_dir)
    config = None
    if options.bert_config_file:
        config = BertConfig.from_json_file(options.bert_config_file)
        config.check_seq_length(options.max_seq_length, options.bert_config_file)
        if options.objective is not None:
            config = dataclasses.replace(config, causal_attention=options.objective == "ltr")
    if options.vocab_file:
        if config is not None:
            vocab.check_fits(options.vocab_file, config.vocab_size, options.bert_config_file)
        else:
            vocab.load_vocab(options.vocab_file)
    check_checkpoint_path(options.init_checkpoint)
    if options.distribution_strategy == "multi_worker_mirrored":
        check_tf_config(os.environ.get("TF_CONFIG"))
    if isinstance(options, PretrainingOptions):
        check_dynamic_masking(options)
    return config


def check_dynamic_masking(options: PretrainingOptions) -> None:
    """Dynamic masking (of a masked LM: an "ltr" run masks nothing) needs the vocab_file, for
    the ids of [MASK], [CLS] and [SEP]: checked before TensorFlow loads and by the run."""
    if options.dynamic_masking and options.objective != "ltr" and not options.vocab_file:
        raise ValueError("dynamic_masking needs --vocab_file (for the ids of [MASK], [CLS], "
                         "[SEP])")


def check_checkpoint_path(path: str | None) -> None:
    """Raises ValueError when `path` (a local one; a URL is left to TensorFlow) is neither a
    file, a folder nor a checkpoint prefix (`<path>.index`); the message is the one
    `checkpoints.resolve_checkpoint` gives once TensorFlow is loaded, naming the path."""
    if not path or "://" in path:
        return
    if not (os.path.exists(path) or os.path.exists(path + ".index")):
        raise ValueError(f"{path}: no checkpoint there (no {os.path.basename(path)}.index)")
