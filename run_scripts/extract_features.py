r"""Writes BERT's per-token activations for lines of text as JSON lines (the original's script).

    python -m run_scripts.extract_features \
      --input_file=input.txt --output_file=output.jsonl \
      --vocab_file=$BERT_DIR/vocab.txt --bert_config_file=$BERT_DIR/bert_config.json \
      --init_checkpoint=$BERT_DIR/bert_model.ckpt --layers=-1,-2,-3,-4 --max_seq_length=128

Input: one example per line, `text_a ||| text_b` for a pair. A text longer than max_seq_length
keeps its first max_seq_length - 2 tokens, as in the original; with --doc_stride=N (single texts
only) it is read in windows of max_seq_length - 2 tokens, one every N tokens, each token's
vectors taken from the window where it has the most context (run_squad's rule), and its line
lists every token of the text once: [CLS] from the first window, [SEP] from the last.
--batch_size then counts windows. The format and the logic are in
official/tasks/feature_extraction.py.
"""

import os
from typing import NamedTuple

from absl import flags, logging

from official import command_line
from official.configs import BertConfig
from official.output_paths import check_output_file
from official.settings_parsing import int_list
from official.text import vocab
from official.training.options import check_checkpoint_path
from run_scripts import common_flags

flags.DEFINE_string("input_file", None, "Text, one example per line; `a ||| b` for a pair.")
flags.DEFINE_string("output_file", None, "Where to write the JSON lines.")
flags.DEFINE_string("layers", "-1,-2,-3,-4",
                    "Comma-separated layer indexes to output; -1 is the last layer.")
flags.DEFINE_integer("batch_size", 32,
                     "Batch size for predictions: lines, or windows with --doc_stride.")
flags.DEFINE_integer(
    "doc_stride", None,
    "For texts longer than max_seq_length - 2 WordPiece tokens (single texts only, no "
    "`a ||| b`): read each in windows of max_seq_length - 2 tokens starting every doc_stride "
    "tokens (at least 1; a stride longer than a window steps by the window), each token's "
    "vectors from the window where it has the most context "
    "(run_squad's rule); a line still lists every token of its text once. Unset: a text keeps "
    "its first max_seq_length - 2 tokens, as in the original.")
common_flags.define_pooling_flag("Given, each line also gets its vector per layer, its "
                                 "tokens' vectors pooled ([CLS] and [SEP] included, as "
                                 "sentence-transformers pools): the line's \"pooled\" key.")
flags.DEFINE_bool("use_one_hot_embeddings", False,
                  "If True, tf.one_hot will be used for embedding lookups (original, for TPUs)."
                  + common_flags.IGNORED_HELP)
common_flags.define_model_flags()
common_flags.define_tokenizer_flags()
common_flags.define_max_seq_length_flag()
common_flags.define_tpu_flags()
flags.adopt_module_key_flags(common_flags)  # --help lists them with this script's own.
FLAGS = flags.FLAGS


class Plan(NamedTuple):
    """What the flags say, checked."""
    layers: list[int]
    config: BertConfig | None  # None: the one beside --init_checkpoint


def prepare() -> Plan:
    """Every check that needs no TensorFlow (official/command_line.py)."""
    layers = list(int_list(FLAGS.layers, "--layers"))
    check_output_file(FLAGS.output_file)
    if not os.path.isfile(FLAGS.input_file):
        raise ValueError(f"{FLAGS.input_file}: no such input file")
    vocab.load_vocab(FLAGS.vocab_file)
    check_checkpoint_path(FLAGS.init_checkpoint)
    if not (FLAGS.bert_config_file or FLAGS.init_checkpoint):
        raise ValueError("--bert_config_file is needed (or an --init_checkpoint with its config "
                         "beside it)")
    config = None
    if FLAGS.bert_config_file:
        config = BertConfig.from_json_file(FLAGS.bert_config_file)
        vocab.check_fits(FLAGS.vocab_file, config.vocab_size, FLAGS.bert_config_file)
    return Plan(layers, config)


def job(plan: Plan) -> None:
    """The features of every line, written."""
    from official import checkpoints
    from official.checkpoints import finetuned
    from official.modeling.encoder import build_encoder
    from official.tasks import feature_extraction
    from official.text.tokenizer import FullTokenizer

    feature_extraction.check_doc_stride(FLAGS.doc_stride)
    source = finetuned.resolve_source(FLAGS.init_checkpoint) if FLAGS.init_checkpoint else None
    config = plan.config or source.config
    tokenizer = FullTokenizer(FLAGS.vocab_file, do_lower_case=FLAGS.do_lower_case)
    examples = feature_extraction.read_examples(FLAGS.input_file,
                                                single_texts=FLAGS.doc_stride is not None)
    encoder = build_encoder(config)
    if source is not None:
        checkpoints.load_init_checkpoint(source.weights, encoder)
    else:
        logging.warning("No --init_checkpoint: the encoder's weights are random, and so are the "
                        "features.")
    feature_extraction.extract_features(
        examples, FLAGS.output_file, encoder, tokenizer, plan.layers, FLAGS.max_seq_length,
        FLAGS.batch_size, FLAGS.doc_stride, FLAGS.pooling)
    logging.info("Wrote the features of %d lines to %s", len(examples), FLAGS.output_file)


if __name__ == "__main__":
    command_line.main("extract_features", prepare, job,
                       required=["input_file", "output_file", "vocab_file"])
