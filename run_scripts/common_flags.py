"""Flags shared by several entry points, defined once with the original scripts' names and help.

Each entry point calls the `define_*` functions it needs at import, before `app.run`; a flag
is then read as `flags.FLAGS.vocab_file` and so on.
"""

from absl import flags

from official.peft.settings import DEFAULT_LORA_TARGETS, DEFAULT_TRAIN_POOLER, PeftSettings
from official.tasks.squad_settings import SquadSettings
from official.training import distribution, job_setup
from official.training.finetuning import FinetuningOptions
from official.training.optimization import OPTIMIZERS

# Ends the help of flags accepted only so that command lines written for the original run
# unchanged (TF2 places the model on whatever accelerator it finds).
IGNORED_HELP = " Ignored: accepted for command-line compatibility with the original."


def define_model_flags() -> None:
    """--bert_config_file and --init_checkpoint: which model to build and its weights."""
    define_bert_config_flag()
    flags.DEFINE_string(
        "init_checkpoint", None,
        "Initial checkpoint (usually from a pre-trained BERT model): a checkpoint prefix or a "
        "directory holding one, in the original TF1 format or this project's.")


def define_bert_config_flag(extra_help: str = "") -> None:
    """--bert_config_file alone, for scripts that take no --init_checkpoint; `extra_help` is
    appended to the help (e.g. a script-specific default)."""
    flags.DEFINE_string(
        "bert_config_file", None,
        "The config json file corresponding to the pre-trained BERT model. "
        "This specifies the model architecture." + extra_help)


def define_tokenizer_flags() -> None:
    """--vocab_file and --do_lower_case: the WordPiece tokenizer of the model."""
    flags.DEFINE_string(
        "vocab_file", None, "The vocabulary file that the BERT model was trained on.")
    flags.DEFINE_bool(
        "do_lower_case", True,
        "Whether to lower case the input text. Should be True for uncased models and False for "
        "cased models.")


def define_max_seq_length_flag(default: int = 128) -> None:
    """--max_seq_length; the original's default is 128 for most scripts, 384 for SQuAD."""
    flags.DEFINE_integer(
        "max_seq_length", default,
        "The maximum total input sequence length after WordPiece tokenization. Sequences longer "
        "than this will be truncated, and sequences shorter than this will be padded.")


def define_tpu_flags() -> None:
    """The original's --use_tpu, --master and --num_tpu_cores, accepted and ignored."""
    flags.DEFINE_bool("use_tpu", False, "Whether to use TPU or GPU/CPU." + IGNORED_HELP)
    flags.DEFINE_string("master", None, "If using a TPU, the address of the master." + IGNORED_HELP)
    flags.DEFINE_integer(
        "num_tpu_cores", 8,
        "Only used if `use_tpu` is True. Total number of TPU cores to use." + IGNORED_HELP)


def define_training_flags(defaults) -> None:
    """The flags of every entry point that trains, with the defaults of `defaults` (an options
    dataclass: PretrainingOptions or FinetuningOptions). Read them back with
    `training_options()`."""
    flags.DEFINE_integer("train_batch_size", defaults.train_batch_size,
                         "Total batch size for training (over all replicas, per update).")
    flags.DEFINE_integer("eval_batch_size", defaults.eval_batch_size, "Total batch size for eval.")
    flags.DEFINE_float("learning_rate", defaults.learning_rate,
                       "The initial learning rate for Adam.")
    flags.DEFINE_integer("save_checkpoints_steps", defaults.save_checkpoints_steps,
                         "How often to save the model checkpoint.")
    flags.DEFINE_integer("iterations_per_loop", defaults.steps_per_loop,
                         "How many steps to make in each call to the training loop (the "
                         "original's name for --steps_per_loop).")
    flags.DEFINE_integer("steps_per_loop", None,
                         "Steps run inside one tf.function call; overrides --iterations_per_loop.")
    flags.DEFINE_integer("log_steps", defaults.log_steps,
                         "Log a progress line every this many steps.")
    flags.DEFINE_integer("keep_checkpoint_max", defaults.keep_checkpoint_max,
                         "How many of the newest checkpoints to keep.")
    flags.DEFINE_enum("optimizer", defaults.optimizer, list(OPTIMIZERS),
                      "adamw: the original AdamWeightDecay; lamb: LAMB, for large batches.")
    flags.DEFINE_float("weight_decay_rate", defaults.weight_decay_rate,
                       "Decoupled weight decay (not for LayerNorm and bias variables).")
    flags.DEFINE_integer("gradient_accumulation_steps", defaults.gradient_accumulation_steps,
                         "Split each train_batch_size batch into this many micro-batches and sum "
                         "their gradients: the same update with less memory.")
    flags.DEFINE_enum("dtype", defaults.dtype, list(job_setup.DTYPE_POLICIES),
                      "Compute dtype: float32, or mixed precision bfloat16 / float16 (float16 "
                      "with dynamic loss scaling). Variables stay float32.")
    flags.DEFINE_bool("jit_compile", defaults.jit_compile,
                      "Compile each forward and backward pass with XLA.")
    flags.DEFINE_enum("distribution_strategy", defaults.distribution_strategy,
                      distribution.STRATEGIES,
                      "default: one device; mirrored: --num_gpus local GPUs; "
                      "multi_worker_mirrored: hosts listed in TF_CONFIG; tpu: --tpu_name.")
    flags.DEFINE_integer("num_gpus", defaults.num_gpus,
                         "GPUs for --distribution_strategy=mirrored.")
    flags.DEFINE_integer("seed", defaults.seed,
                         "Random seed of initialisation, dropout and input order.")
    flags.DEFINE_bool("use_tpu", False,
                      "Whether to use TPU (same as --distribution_strategy=tpu).")
    flags.DEFINE_string("tpu_name", None,
                        "The Cloud TPU to use for training: a name or an address.")
    flags.DEFINE_string("tpu_zone", None, "GCE zone of the Cloud TPU." + IGNORED_HELP)
    flags.DEFINE_string("gcp_project", None, "Project name of the Cloud TPU." + IGNORED_HELP)
    flags.DEFINE_string("master", None, "TensorFlow master URL." + IGNORED_HELP)
    flags.DEFINE_integer("num_tpu_cores", 8, "Total number of TPU cores." + IGNORED_HELP)


def training_options() -> dict:
    """The option fields `define_training_flags` defines, from the parsed flags."""
    f = flags.FLAGS
    return dict(
        train_batch_size=f.train_batch_size, eval_batch_size=f.eval_batch_size,
        learning_rate=f.learning_rate, save_checkpoints_steps=f.save_checkpoints_steps,
        steps_per_loop=f.steps_per_loop or f.iterations_per_loop, log_steps=f.log_steps,
        keep_checkpoint_max=f.keep_checkpoint_max, optimizer=f.optimizer,
        weight_decay_rate=f.weight_decay_rate,
        gradient_accumulation_steps=f.gradient_accumulation_steps, dtype=f.dtype,
        jit_compile=f.jit_compile,
        distribution_strategy="tpu" if f.use_tpu else f.distribution_strategy,
        num_gpus=f.num_gpus, tpu_address=f.tpu_name, seed=f.seed)


def define_finetuning_flags(max_seq_length: int = 128) -> None:
    """Everything run_classifier, run_squad and run_ner share: model, tokenizer, what to do,
    the schedule in epochs, the training flags (FinetuningOptions' defaults) and the
    parameter-efficient methods."""
    defaults = FinetuningOptions
    define_model_flags()
    define_tokenizer_flags()
    define_max_seq_length_flag(max_seq_length)
    define_training_flags(defaults)
    flags.DEFINE_string("output_dir", None,
                        "The output directory where the model checkpoints will be written.")
    flags.DEFINE_bool("do_train", False, "Whether to run training.")
    flags.DEFINE_bool("do_eval", False, "Whether to run eval on the dev set (after every "
                      "epoch when training; the best checkpoint is kept in output_dir/best).")
    flags.DEFINE_bool("do_predict", False,
                      "Whether to run the model in inference mode on the test set.")
    flags.DEFINE_integer("predict_batch_size", defaults.predict_batch_size,
                         "Total batch size for predict.")
    flags.DEFINE_float("num_train_epochs", defaults.num_train_epochs,
                       "Total number of training epochs to perform.")
    flags.DEFINE_float("warmup_proportion", defaults.warmup_proportion,
                       "Proportion of training to perform linear learning rate warmup for. "
                       "E.g., 0.1 = 10% of training.")
    flags.DEFINE_bool("allow_untrained_head", defaults.allow_untrained_head,
                      "Let --do_eval or --do_predict without --do_train run on an output_dir "
                      "that holds no fine-tuned checkpoint, with --init_checkpoint's encoder "
                      "and a freshly initialised head (refused otherwise: its outputs are "
                      "random).")
    define_peft_flags()


def define_peft_flags() -> None:
    """The parameter-efficient methods of every fine-tuning entry point (official/peft)."""
    flags.DEFINE_integer(
        "adapter_size", 0,
        "Houlsby adapters of this many units after the attention and feed-forward outputs of "
        "every layer (0: off). Trains the adapters, every LayerNorm, the pooler "
        "(--peft_train_pooler) and the task head on a frozen encoder; output_dir keeps only "
        "those.")
    flags.DEFINE_integer(
        "lora_rank", 0,
        "LoRA of this rank on the --lora_targets matrices (0: off). Trains the LoRA matrices, "
        "the pooler (--peft_train_pooler) and the task head on a frozen encoder; output_dir "
        "keeps only those.")
    flags.DEFINE_float("lora_alpha", None, "LoRA's update is scaled by lora_alpha / lora_rank "
                       "(default: lora_alpha = lora_rank).")
    flags.DEFINE_string(
        "lora_targets", None,
        "A regular expression over the original kernel names (e.g. "
        "bert/encoder/layer_0/attention/self/query/kernel): LoRA goes on every projection it "
        f"finds. Default: {DEFAULT_LORA_TARGETS} (each layer's query and value).")
    flags.DEFINE_bool(
        "peft_train_pooler", None,
        "Whether the pooler trains with --adapter_size or --lora_rank (under a head that "
        f"reads it: run_classifier's). Default: {DEFAULT_TRAIN_POOLER} "
        "(bench/finetune_peft.py measures both).")


def peft_settings() -> PeftSettings | None:
    """The method the flags of `define_peft_flags` ask for, checked; None for full
    fine-tuning."""
    f = flags.FLAGS
    return PeftSettings.from_flags(f.adapter_size, f.lora_rank, f.lora_alpha, f.lora_targets,
                                   f.peft_train_pooler)


def finetuning_options(bert_config_file: str | None = None) -> FinetuningOptions:
    """The options the flags `define_finetuning_flags` defines say; `bert_config_file` replaces
    the flag's (run_distillation's student)."""
    f = flags.FLAGS
    return FinetuningOptions(
        bert_config_file=bert_config_file or f.bert_config_file, output_dir=f.output_dir,
        init_checkpoint=f.init_checkpoint, vocab_file=f.vocab_file,
        max_seq_length=f.max_seq_length, do_train=f.do_train, do_eval=f.do_eval,
        do_predict=f.do_predict, predict_batch_size=f.predict_batch_size,
        num_train_epochs=f.num_train_epochs, warmup_proportion=f.warmup_proportion,
        allow_untrained_head=f.allow_untrained_head, peft=peft_settings(),
        **training_options())


# The flags of `SquadSettings` but max_seq_length, which each entry point defines its own way.
_SQUAD_FLAGS = ("doc_stride", "max_query_length", "n_best_size", "max_answer_length",
                "version_2_with_negative", "null_score_diff_threshold")


def define_squad_flags() -> None:
    """The settings that shape SQuAD's features and decoding (run_squad and the squad export
    must agree on them): the original run_squad's names, help and defaults (SquadSettings')."""
    defaults = SquadSettings
    flags.DEFINE_integer(
        "doc_stride", defaults.doc_stride,
        "When splitting up a long document into chunks, how much stride to take between chunks.")
    flags.DEFINE_integer(
        "max_query_length", defaults.max_query_length,
        "The maximum number of tokens for the question. Questions longer than this will be "
        "truncated to this length.")
    flags.DEFINE_integer(
        "n_best_size", defaults.n_best_size,
        "The total number of n-best predictions to generate in the nbest_predictions.json "
        "output file (the best starts and ends considered per window).")
    flags.DEFINE_integer(
        "max_answer_length", defaults.max_answer_length,
        "The maximum length of an answer that can be generated. This is needed because the "
        "start and end predictions are not conditioned on one another.")
    flags.DEFINE_bool(
        "version_2_with_negative", defaults.version_2_with_negative,
        "If true, the SQuAD examples contain some that do not have an answer.")
    flags.DEFINE_float(
        "null_score_diff_threshold", defaults.null_score_diff_threshold,
        "If null_score - best_non_null is greater than the threshold predict null.")


def squad_flag_values() -> dict:
    """The values of the flags `define_squad_flags` defines, by name (not yet checked)."""
    return {name: getattr(flags.FLAGS, name) for name in _SQUAD_FLAGS}


def squad_settings_from_flags(max_seq_length: int) -> SquadSettings:
    """The SQuAD flags with `max_seq_length` as SquadSettings (checked: one-line ValueErrors)."""
    return SquadSettings(max_seq_length=max_seq_length, **squad_flag_values())
