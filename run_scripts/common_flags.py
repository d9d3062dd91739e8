"""Flags shared by several entry points, defined once with the original scripts' names and help.

Each entry point calls the `define_*` functions it needs at import, before `app.run`; a flag
is then read as `flags.FLAGS.vocab_file` and so on.

The adaptation kinds (official/adaptation.py: distillation, the parameter-efficient methods)
give the flags of every training entry point that takes them as the rows of their table
(official/adaptation_kinds.py), so a new kind or method needs nothing here:
`define_adaptation_flags` defines them, `adaptation_settings` reads and checks their values, and
`adaptations` turns those into the run's resolved adaptations, naming no kind.
"""

from typing import Any, Sequence

from absl import flags

from official.adaptation import Adaptation, AdaptationKind
from official.adaptation_kinds import KINDS
from official.flag_rows import Flag
from official.sentence_settings import POOLINGS
from official.tasks import squad_settings
from official.tasks.squad_settings import SquadSettings
from official.training.options import (
    DTYPE_POLICIES,
    OPTIMIZERS,
    STRATEGIES,
    FinetuningOptions,
    check_checkpoint_path,
    check_files,
)

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


def define_tpu_flags(trains: bool = False) -> None:
    """The original's TPU flags: --use_tpu, --tpu_name, --master, --num_tpu_cores, --tpu_zone,
    --gcp_project. An entry point that trains (`trains`) runs on the Cloud TPU --use_tpu and
    --tpu_name name; the others accept them and ignore them."""
    used = "" if trains else IGNORED_HELP
    flags.DEFINE_bool("use_tpu", False, "Whether to use TPU (training: the same as "
                      "--distribution_strategy=tpu)." + used)
    flags.DEFINE_string("tpu_name", None,
                        "The Cloud TPU to use for training: a name or an address." + used)
    flags.DEFINE_string("tpu_zone", None, "GCE zone of the Cloud TPU." + IGNORED_HELP)
    flags.DEFINE_string("gcp_project", None, "Project name of the Cloud TPU." + IGNORED_HELP)
    flags.DEFINE_string("master", None, "TensorFlow master URL." + IGNORED_HELP)
    flags.DEFINE_integer("num_tpu_cores", 8, "Total number of TPU cores." + IGNORED_HELP)


def define_pooling_flag(what: str) -> None:
    """--pooling, how a text's token vectors become its vector (official/modeling/
    sentence_pooling.py); `what` says what the entry point does with it and what its absence
    means."""
    flags.DEFINE_enum("pooling", None, list(POOLINGS),
                      "How a text's token vectors become its vector: their mean (padding left "
                      "out; sentence-transformers' default), the [CLS] token's, or each "
                      "component's max. " + what)


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
    flags.DEFINE_enum("optimizer", defaults.optimizer, OPTIMIZERS,
                      "adamw: the original AdamWeightDecay; lamb: LAMB, for large batches.")
    flags.DEFINE_float("weight_decay_rate", defaults.weight_decay_rate,
                       "Decoupled weight decay (not for LayerNorm and bias variables).")
    flags.DEFINE_integer("gradient_accumulation_steps", defaults.gradient_accumulation_steps,
                         "Split each train_batch_size batch into this many micro-batches and sum "
                         "their gradients: the same update with less memory.")
    flags.DEFINE_enum("dtype", defaults.dtype, list(DTYPE_POLICIES),
                      "Compute dtype: float32, or mixed precision bfloat16 / float16 (float16 "
                      "with dynamic loss scaling). Variables stay float32.")
    flags.DEFINE_bool("jit_compile", defaults.jit_compile,
                      "Compile each forward and backward pass with XLA.")
    flags.DEFINE_bool("fuse_elementwise", defaults.fuse_elementwise,
                      "XLA fuses the elementwise ops between the matmuls (GELU, LayerNorm, "
                      "softmax, casts, the optimizer's updates) while each matmul stays "
                      "oneDNN's. Default: on with --dtype=bfloat16, where on a CPU with "
                      "bfloat16 units they cost more than the matmuls unfused; off otherwise.")
    flags.DEFINE_enum("distribution_strategy", defaults.distribution_strategy,
                      STRATEGIES,
                      "default: one device; mirrored: --num_gpus local GPUs; "
                      "multi_worker_mirrored: hosts listed in TF_CONFIG; tpu: --tpu_name.")
    flags.DEFINE_integer("num_gpus", defaults.num_gpus,
                         "GPUs for --distribution_strategy=mirrored.")
    flags.DEFINE_integer("seed", defaults.seed,
                         "Random seed of initialisation, dropout and input order.")
    define_tpu_flags(trains=True)
    define_adaptation_flags(pretraining=defaults is not FinetuningOptions)


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
        jit_compile=f.jit_compile, fuse_elementwise=f.fuse_elementwise,
        distribution_strategy="tpu" if f.use_tpu else f.distribution_strategy,
        num_gpus=f.num_gpus, tpu_address=f.tpu_name, seed=f.seed)


def define_finetuning_flags(max_seq_length: int = 128) -> None:
    """Everything run_classifier, run_squad and run_ner share: model, tokenizer, what to do,
    the schedule in epochs, the training flags (FinetuningOptions' defaults) and those of the
    adaptation kinds a fine-tuning takes (`define_training_flags`)."""
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
    flags.DEFINE_string(
        "objective", None,
        "How the checkpoint was pretrained: mlm (attention sees both sides) or ltr (the "
        "paper's left-to-right model: its causal mask is kept, as the paper fine-tuned it). "
        "Default: what --bert_config_file says (\"causal_attention\": true after "
        "run_pretraining --objective=ltr).")
    flags.DEFINE_float("warmup_proportion", defaults.warmup_proportion,
                       "Proportion of training to perform linear learning rate warmup for. "
                       "E.g., 0.1 = 10% of training.")
    flags.DEFINE_bool("allow_untrained_head", defaults.allow_untrained_head,
                      "Let --do_eval or --do_predict without --do_train run on an output_dir "
                      "that holds no fine-tuned checkpoint, with --init_checkpoint's encoder "
                      "and a freshly initialised head (refused otherwise: its outputs are "
                      "random).")


# absl's definition of a flag of each type (official/flag_rows.py's Flag.kind).
_DEFINE = {int: flags.DEFINE_integer, float: flags.DEFINE_float, str: flags.DEFINE_string,
           bool: flags.DEFINE_bool, list: flags.DEFINE_list}


def define_flag_rows(rows: Sequence[Flag]) -> None:
    """Defines each flag of a table's rows (official/flag_rows.py) as absl does."""
    for flag in rows:
        _DEFINE[flag.kind](flag.name, flag.default, flag.help)


def adaptation_kinds(pretraining: bool) -> list[AdaptationKind]:
    """The adaptation kinds run_pretraining (`pretraining`) or a fine-tuning entry point takes,
    in the table's order."""
    return [kind for kind in KINDS.values() if kind.flags_of(pretraining) is not None]


def define_adaptation_flags(pretraining: bool) -> None:
    """The flags of every adaptation kind run_pretraining (`pretraining`) or a fine-tuning entry
    point takes, as its row declares them; read them back with `adaptation_settings`."""
    for kind in adaptation_kinds(pretraining):
        define_flag_rows(kind.flags_of(pretraining))


def adaptation_settings(options: Any, pretraining: bool = False) -> dict[str, Any]:
    """{kind: its settings, or None} for every adaptation kind the entry point takes, read
    from the flags of `define_adaptation_flags` and checked without TensorFlow: each kind's
    flags first, then each kind given against the run's `options` and the other kinds (a
    distillation's student size and its teacher alone: `AdaptationKind.check`).

    Raises:
      ValueError: a bad flag, two methods at once, the student's size given twice or not at
        all.
    """
    f = flags.FLAGS
    kinds = adaptation_kinds(pretraining)
    settings = {kind.name: kind.settings({flag.name: f[flag.name].value
                                          for flag in kind.flags_of(pretraining)}, pretraining)
                for kind in kinds}
    for kind in kinds:
        if kind.check is not None and settings[kind.name] is not None:
            kind.check(settings[kind.name], options,
                       {name: other for name, other in settings.items() if name != kind.name})
    return settings


def check_adaptation_checkpoints(settings: dict[str, Any]) -> None:
    """Checks, without TensorFlow, that each checkpoint the adaptations of `settings` read (a
    distillation's --teacher_checkpoint) is there (a file, a folder or a checkpoint prefix);
    entry points call it last in their checks, after the flags' combinations (a teacher with a
    method that cannot take one is said as that).

    Raises:
      ValueError: no such checkpoint, named as `checkpoints.resolve_checkpoint` names it.
    """
    for name, kind_settings in settings.items():
        checkpoints = KINDS[name].checkpoints
        if kind_settings is not None and checkpoints is not None:
            for path in checkpoints(kind_settings):
                check_checkpoint_path(path)


def adaptations(options: Any, task: Any, settings: dict[str, Any]
                ) -> tuple[Any, list[Adaptation]]:
    """(options, adaptations): each kind of `adaptation_settings` resolved against the task and
    the output_dir (official/adaptation.py), those the output_dir's records say included (a
    predict-only run on a PEFT output_dir needs no flags). Reads checkpoints: TensorFlow.

    Raises:
      ValueError: what a kind's resolve refuses.
    """
    resolved = []
    for name, kind_settings in settings.items():
        options, adaptation = KINDS[name].resolve(kind_settings, options, task)
        if adaptation is not None:
            resolved.append(adaptation)
    return options, resolved


def finetuning_options() -> FinetuningOptions:
    """The options the flags `define_finetuning_flags` defines say."""
    f = flags.FLAGS
    return FinetuningOptions(
        bert_config_file=f.bert_config_file, output_dir=f.output_dir,
        init_checkpoint=f.init_checkpoint, vocab_file=f.vocab_file,
        max_seq_length=f.max_seq_length, do_train=f.do_train, do_eval=f.do_eval,
        do_predict=f.do_predict, predict_batch_size=f.predict_batch_size,
        num_train_epochs=f.num_train_epochs, warmup_proportion=f.warmup_proportion,
        allow_untrained_head=f.allow_untrained_head, objective=f.objective,
        **training_options())


def prepare_finetuning() -> tuple[FinetuningOptions, dict[str, Any]]:
    """(options, adaptation settings) of a fine-tuning entry point's shared flags, every check
    that needs no TensorFlow made: the options, their files (official/training/options.py),
    the adaptation methods' flags."""
    options = finetuning_options()
    check_files(options)
    return options, adaptation_settings(options)


def finetune(options: FinetuningOptions, task: Any, data: Any,
             settings: dict[str, Any]) -> dict[str, dict[str, float]]:
    """`finetuning.run` of the task and data an entry point's flags name, with the adaptation
    methods of `settings` (`adaptation_settings`, read with the other flags before TensorFlow
    loads)."""
    from official.training import finetuning

    options, resolved = adaptations(options, task, settings)
    return finetuning.run(options, task, data, resolved)


def define_squad_flags() -> None:
    """The settings that shape SQuAD's features and decoding (run_squad and the squad export
    must agree on them): `squad_settings.FLAGS`, the original run_squad's names, help and
    defaults."""
    define_flag_rows(squad_settings.FLAGS)


def squad_settings_from_flags(max_seq_length: int) -> SquadSettings:
    """The SQuAD flags with `max_seq_length` as SquadSettings (checked: one-line ValueErrors)."""
    return SquadSettings(max_seq_length=max_seq_length,
                         **{flag.name: flags.FLAGS[flag.name].value
                            for flag in squad_settings.FLAGS})
