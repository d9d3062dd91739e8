"""A bert_config.json whose vocab_size is a vocab file's size (the demo learns its vocab, and
the learner may stop short of the size asked for).

    python -m demo.sized_config --template=demo/bert_config.json --vocab_file=vocab.txt \\
      --output_file=bert_config.json
"""

import dataclasses
import sys

from absl import app, flags

from official.configs import BertConfig
from official.text.vocab import VocabError, load_vocab

flags.DEFINE_string("template", None, "The architecture (its vocab_size is replaced).")
flags.DEFINE_string("vocab_file", None, "The vocab the model will read.")
flags.DEFINE_string("output_file", None, "The bert_config.json to write.")
FLAGS = flags.FLAGS


def main(argv: list[str]) -> int:
    del argv  # Unused.
    try:
        vocab_size = len(load_vocab(FLAGS.vocab_file))
        config = dataclasses.replace(BertConfig.from_json_file(FLAGS.template),
                                     vocab_size=vocab_size)
    except (VocabError, ValueError) as e:
        print(f"sized_config: {e}", file=sys.stderr)
        return 1
    config.to_json_file(FLAGS.output_file)
    print(f"   {FLAGS.output_file}: {FLAGS.template} with vocab_size={vocab_size}")
    return 0


if __name__ == "__main__":
    flags.mark_flags_as_required(["template", "vocab_file", "output_file"])
    app.run(main)
