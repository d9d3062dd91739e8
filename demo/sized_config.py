"""A bert_config.json whose vocab_size is a vocab file's size (the demo learns its vocab, and
the learner may stop short of the size asked for).

    python -m demo.sized_config --template=demo/bert_config.json --vocab_file=vocab.txt \\
      --output_file=bert_config.json
"""

import dataclasses

from absl import flags

from official import command_line
from official.configs import BertConfig
from official.text.vocab import load_vocab

flags.DEFINE_string("template", None, "The architecture (its vocab_size is replaced).")
flags.DEFINE_string("vocab_file", None, "The vocab the model will read.")
flags.DEFINE_string("output_file", None, "The bert_config.json to write.")
FLAGS = flags.FLAGS


def prepare() -> BertConfig:
    """The template with the vocab's size."""
    return dataclasses.replace(BertConfig.from_json_file(FLAGS.template),
                               vocab_size=len(load_vocab(FLAGS.vocab_file)))


def job(config: BertConfig) -> None:
    config.to_json_file(FLAGS.output_file)
    print(f"   {FLAGS.output_file}: {FLAGS.template} with vocab_size={config.vocab_size}")


if __name__ == "__main__":
    command_line.main("sized_config", prepare, job,
                      required=["template", "vocab_file", "output_file"], tensorflow=False)
