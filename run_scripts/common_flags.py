"""Flags shared by several entry points, defined once with the original scripts' names and help.

Each entry point calls the `define_*` functions it needs at import, before `app.run`; a flag
is then read as `flags.FLAGS.vocab_file` and so on.
"""

from absl import flags

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
