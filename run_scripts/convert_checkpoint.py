"""Converts BERT weights between the original TF1, this project's TF2, Hugging Face and keras-hub.

    python -m run_scripts.convert_checkpoint --input_format=tf1 \
      --input=uncased_L-12_H-768_A-12/bert_model.ckpt --output_dir=bert_base_tf2

writes `bert_config.json`, `vocab.txt` (when the source has one) and `bert_model.ckpt`, which every
entry point takes as --init_checkpoint. `--output_format=hf` writes a Hugging Face directory,
`keras_hub` a keras-hub preset, `tf1` a checkpoint the original code reads.
"""

from absl import app, flags

from official.checkpoints import converter
from official.output_paths import check_output_dir
from run_scripts import common_flags, entry_point

flags.DEFINE_enum("input_format", None, list(converter.FORMATS), "Format of --input.")
flags.DEFINE_string("input", None, "Checkpoint prefix or directory (tf1, tf2), Hugging Face "
                    "directory (hf) or keras-hub preset directory (keras_hub).")
flags.DEFINE_string("output_dir", None, "Directory to write the converted model to.")
flags.DEFINE_enum("output_format", "tf2", list(converter.FORMATS), "Format to write.")
common_flags.define_bert_config_flag(
    extra_help=" For tf1/tf2 input; default: bert_config.json beside the checkpoint.")
common_flags.define_tokenizer_flags()
flags.mark_flags_as_required(["input_format", "input", "output_dir"])
FLAGS = flags.FLAGS


def main(argv):
    del argv

    def job():
        check_output_dir(FLAGS.output_dir)
        written = converter.convert(FLAGS.input_format, FLAGS.input, FLAGS.output_dir,
                                    FLAGS.output_format, FLAGS.bert_config_file,
                                    FLAGS.vocab_file, FLAGS.do_lower_case)
        for path in written:
            print(path)

    entry_point.run_job("convert_checkpoint", job)


if __name__ == "__main__":
    app.run(main)
