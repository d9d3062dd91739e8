"""Converts BERT weights between the original TF1, this project's TF2, Hugging Face and keras-hub.

    python -m run_scripts.convert_checkpoint --input_format=tf1 \
      --input=uncased_L-12_H-768_A-12/bert_model.ckpt --output_dir=bert_base_tf2

writes `bert_config.json`, `vocab.txt` (when the source has one) and `bert_model.ckpt`, which every
entry point takes as --init_checkpoint. `--output_format=hf` writes a Hugging Face directory
(with vocab.txt and tokenizer_config.json, as transformers' tokenizer reads them: a source without
a vocab beside it, such as a fine-tuning output_dir, needs --vocab_file), `keras_hub` a keras-hub
preset, `tf1` a checkpoint the original code reads (unless its hidden_act is one the original
lacks, gelu_exact or swish: kept, with a warning, since its "gelu" is another function).

A parameter-efficient run (run_classifier, run_squad or run_ner with --adapter_size,
--lora_rank, --bitfit or --ia3) merges into an ordinary checkpoint of any format:

    python -m run_scripts.convert_checkpoint --peft_checkpoint=/tmp/mrpc_lora \
      --output_format=hf --output_dir=mrpc_lora_merged

writes its encoder: the base (--input, default the one the run's record names, which must be
the run's) with LoRA folded into its matrices and the trained LayerNorms and pooler. Adapters
cannot fold: tf1 and tf2 keep them under adapter-bert's names (for adapter-bert's code; an
--init_checkpoint refuses them), hf and keras_hub refuse them.
The task head is not part of any of these formats; export_saved_model serves the run whole.

For a domain vocab (data_prep/extend_vocab.py), the checkpoint grown to it, in any format:

    python -m run_scripts.convert_checkpoint --input_format=tf1 --input=$BERT_DIR \
      --extend_vocab=chemprot_vocab/vocab.txt --output_format=tf1 --output_dir=bert_chemprot

keeps every old row and starts each new token's word-embedding row (and masked-LM output bias)
as the mean of its old pieces' (official/checkpoints/extended_vocab.py); the vocab must keep
every old token at its id and the checkpoint's vocab (beside it, or --vocab_file) must be the one
its vocab_size says. The new vocab.txt and `extended_vocab.json` (the new ids, for
run_pretraining --train_only_new_embeddings_steps) are written beside the weights.
"""

from absl import flags

from official import command_line
from official.checkpoints import FORMAT_NAMES
from official.output_paths import check_output_dir
from official.text import vocab
from official.training.options import check_checkpoint_path
from run_scripts import common_flags

flags.DEFINE_enum("input_format", None, FORMAT_NAMES, "Format of --input.")
flags.DEFINE_string("input", None, "Checkpoint prefix or directory (tf1, tf2), Hugging Face "
                    "directory (hf) or keras-hub preset directory (keras_hub); with "
                    "--peft_checkpoint, its base (any format; default: the one its record "
                    "names).")
flags.DEFINE_string("peft_checkpoint", None,
                    "A parameter-efficient run's output_dir to merge with its base (--input).")
flags.DEFINE_string("output_dir", None, "Directory to write the converted model to.")
flags.DEFINE_enum("output_format", "tf2", FORMAT_NAMES,
                  "Format to write. tf1: the original code reads it, unless the model's "
                  "hidden_act is gelu_exact or swish, which its get_activation refuses (kept, "
                  "with a warning: writing its 'gelu', the tanh form, would change the model). "
                  "hf: with vocab.txt (--vocab_file, default the one beside --input) and "
                  "tokenizer_config.json (--do_lower_case).")
flags.DEFINE_string("extend_vocab", None,
                    "A vocab extending the checkpoint's (data_prep/extend_vocab.py): the weights "
                    "are grown to it, each new row the mean of its old pieces' rows.")
common_flags.define_bert_config_flag(
    extra_help=" For tf1/tf2 input; default: bert_config.json beside the checkpoint.")
common_flags.define_tokenizer_flags()
FLAGS = flags.FLAGS


def _merge() -> list[str]:
    """--peft_checkpoint on its base, merged and written (a method that does not fold, whose
    variables stay, refused up front by the formats that cannot hold them)."""
    from official.checkpoints import converter
    from official.peft import artifact, merging, methods

    _, record = artifact.find_run(FLAGS.peft_checkpoint)
    unfolded = record is not None and methods.method_of(record.settings).fold is None
    converter.check_holds(FLAGS.output_format, record.settings.method if unfolded else None,
                          FLAGS.peft_checkpoint)
    bundle = merging.merged_bundle(FLAGS.peft_checkpoint, FLAGS.input)
    if FLAGS.vocab_file:
        bundle.vocab_file = FLAGS.vocab_file
    converter.check_vocab(FLAGS.output_format, bundle, FLAGS.peft_checkpoint)
    return converter.write(FLAGS.output_format, bundle, FLAGS.output_dir,
                           source=FLAGS.peft_checkpoint, do_lower_case=FLAGS.do_lower_case)


def prepare() -> None:
    """Every check that needs no TensorFlow (official/command_line.py)."""
    check_output_dir(FLAGS.output_dir)
    if not FLAGS.peft_checkpoint and not (FLAGS.input and FLAGS.input_format):
        raise ValueError("--input and --input_format are needed (or --peft_checkpoint)")
    check_checkpoint_path(FLAGS.input)
    check_checkpoint_path(FLAGS.peft_checkpoint)
    if FLAGS.extend_vocab and FLAGS.peft_checkpoint:
        raise ValueError("--extend_vocab grows a checkpoint (--input), not a --peft_checkpoint "
                         "run: merge it first, then extend the merged checkpoint")
    for name in ("vocab_file", "extend_vocab"):
        if FLAGS[name].value:
            vocab.load_vocab(FLAGS[name].value)


def job(_) -> None:
    """The weights converted (or merged) and written; the files printed."""
    from official.checkpoints import converter

    if FLAGS.peft_checkpoint:
        written = _merge()
    else:
        written = converter.convert(FLAGS.input_format, FLAGS.input, FLAGS.output_dir,
                                    FLAGS.output_format, FLAGS.bert_config_file,
                                    FLAGS.vocab_file, FLAGS.do_lower_case, FLAGS.extend_vocab)
    for path in written:
        print(path)


if __name__ == "__main__":
    command_line.main("convert_checkpoint", prepare, job, required=["output_dir"])
