r"""Static word vectors per layer from a BERT checkpoint (Bommasani et al. 2020), word2vec text.

    python -m run_scripts.build_static_embeddings \
      --init_checkpoint=$BERT_DIR --vocab_file=$BERT_DIR/vocab.txt \
      --corpus_file=sentences.txt --words_file=words.txt --output_dir=static \
      --subword_pool=mean --context_pool=mean --max_contexts_per_word=100 --decontextualized \
      --evaluate=wordsim353.tsv,simlex999.tsv

Writes output_dir/layer_00.txt ... layer_L.txt (layer 0: the embedding layer's output; layer i:
transformer layer i), with --decontextualized also decontextualized_layer_00.txt ..., and with
--evaluate prints a table of Spearman correlations (and pairs out of vocabulary) per layer and
benchmark file and writes output_dir/evaluation.json. --bert_config_file and --vocab_file default
to bert_config.json and vocab.txt beside --init_checkpoint. The method and formats are in
official/embeddings/static_vectors.py and word_similarity.py.
"""

import json
import os
from typing import NamedTuple

from absl import flags, logging

from official import checkpoints, command_line
from official.atomic_files import open_atomically
from official.configs import BertConfig
from official.embeddings import static_settings, word_similarity
from official.output_paths import check_output_dir
from official.settings_parsing import int_list
from official.text import vocab
from official.training.options import check_checkpoint_path
from run_scripts import common_flags

flags.DEFINE_string("corpus_file", None, "Text, one sentence (or text) a line, read as a stream.")
flags.DEFINE_string("words_file", None,
                    "The words to make vectors of, one a line. Default: every whole word of the "
                    "vocab (entries that are neither ## pieces nor [X] specials).")
flags.DEFINE_string("output_dir", None, "Where to write layer_NN.txt (word2vec text format).")
flags.DEFINE_string("layers", None, "Comma-separated layers, 0 (the embedding layer's output) "
                    "to num_hidden_layers. Default: all.")
flags.DEFINE_enum("subword_pool", "mean", list(static_settings.SUBWORD_POOLS),
                  "How a word's WordPieces' vectors in one sentence make one vector.")
flags.DEFINE_enum("context_pool", "mean", list(static_settings.CONTEXT_POOLS),
                  "How a word's vectors in its sentences make its static vector.")
flags.DEFINE_integer("max_contexts_per_word", 100,
                     "Pool at most this many occurrences of each word: the first met.")
flags.DEFINE_integer("batch_size", 32, "Lines (or words, for the baseline) per encoder call.")
flags.DEFINE_bool("decontextualized", False,
                  "Also write the baseline: each word alone as [CLS] word [SEP].")
flags.DEFINE_list("evaluate", [], "Word-similarity files (word1<TAB>word2<TAB>score) to score "
                  "every layer on; writes output_dir/evaluation.json.")
common_flags.define_bert_config_flag(
    extra_help=" Default: bert_config.json beside --init_checkpoint.")
flags.DEFINE_string("init_checkpoint", None,
                    "The model's weights: a checkpoint prefix or a directory holding one (TF1, "
                    "TF2 or a training output_dir), a Hugging Face folder or a keras-hub preset.")
common_flags.define_tokenizer_flags()
common_flags.define_max_seq_length_flag()
flags.adopt_module_key_flags(common_flags)  # --help lists them with this script's own.
FLAGS = flags.FLAGS


class Plan(NamedTuple):
    """What the flags say, checked."""
    config: BertConfig | None  # None: a folder format's own, read with the weights
    vocab_file: str
    benchmarks: dict[str, list]


def prepare() -> Plan:
    """Every check that needs no TensorFlow (official/command_line.py): flags, files, config,
    vocab, benchmarks; the words and the weights are checked in `job`, before any work."""
    if not os.path.isfile(FLAGS.corpus_file):
        raise ValueError(f"--corpus_file: {FLAGS.corpus_file}: no such file")
    check_output_dir(FLAGS.output_dir)
    check_checkpoint_path(FLAGS.init_checkpoint)
    config_file = FLAGS.bert_config_file or checkpoints.beside(FLAGS.init_checkpoint,
                                                               checkpoints.CONFIG_FILE)
    config = BertConfig.from_json_file(config_file) if config_file else None
    if config is not None:
        settings(config).validate(config)
    benchmarks = {os.path.basename(path): word_similarity.read_pairs(path)
                  for path in FLAGS.evaluate}
    vocab_file = FLAGS.vocab_file or checkpoints.beside(FLAGS.init_checkpoint,
                                                        checkpoints.VOCAB_FILE)
    if vocab_file is None:
        raise ValueError(f"--vocab_file: not given, and no {checkpoints.VOCAB_FILE} beside "
                         f"--init_checkpoint {FLAGS.init_checkpoint}")
    vocab.load_vocab(vocab_file)
    return Plan(config, vocab_file, benchmarks)


def settings(config: BertConfig) -> static_settings.Settings:
    """The flags' settings (every layer by default) for a model of `config`."""
    layers = (tuple(range(config.num_hidden_layers + 1)) if FLAGS.layers is None
              else int_list(FLAGS.layers, "--layers"))
    return static_settings.Settings(
        layers=layers, subword_pool=FLAGS.subword_pool, context_pool=FLAGS.context_pool,
        max_contexts_per_word=FLAGS.max_contexts_per_word, max_seq_length=FLAGS.max_seq_length,
        batch_size=FLAGS.batch_size)


def job(plan: Plan) -> None:
    """The vectors per layer written, and scored on the benchmarks."""
    from official.checkpoints import finetuned
    from official.embeddings import static_vectors as sv
    from official.modeling.encoder import build_encoder
    from official.text.tokenizer import FullTokenizer

    source = finetuned.resolve_source(FLAGS.init_checkpoint)
    config = plan.config or source.config
    made = settings(config)
    made.validate(config)
    tokenizer = FullTokenizer(plan.vocab_file, do_lower_case=FLAGS.do_lower_case)
    targets = (sv.read_words_file(FLAGS.words_file, tokenizer) if FLAGS.words_file
               else sv.vocab_words(tokenizer))
    if not targets.words:
        raise ValueError(f"--words_file: none of its {len(targets.unknown)} words is in the "
                         "vocab (each has [UNK] among its pieces)")
    encoder = build_encoder(config)
    checkpoints.load_init_checkpoint(source.weights, encoder)

    tables = {"aggregated": sv.aggregated_vectors(encoder, tokenizer, FLAGS.corpus_file,
                                                  targets, made)}
    if not tables["aggregated"].words:
        raise ValueError(f"--corpus_file: {FLAGS.corpus_file}: none of the "
                         f"{len(targets.words)} words occurs in it")
    if FLAGS.decontextualized:
        tables["decontextualized"] = sv.decontextualized_vectors(encoder, tokenizer, targets,
                                                                 made)
    for method, table in tables.items():  # every table checked before any file is written
        sv.check_finite(table, f"{method} vectors of --init_checkpoint {FLAGS.init_checkpoint}")
    for method, table in tables.items():
        prefix = "" if method == "aggregated" else "decontextualized_"
        sv.write_word2vec(table, FLAGS.output_dir, prefix)
        logging.info("%s: %d words x %d layers written to %s (%s...); %d never met, %d unknown "
                     "to the vocab", method, len(table.words), len(table.layers),
                     FLAGS.output_dir, sv.layer_file_name(table.layers[0], prefix),
                     len(table.unmet), len(table.unknown))
    if plan.benchmarks:
        results = {method: word_similarity.evaluate_layers(
            table.words, table.layers, table.vectors, plan.benchmarks, FLAGS.do_lower_case)
            for method, table in tables.items()}
        print(word_similarity.markdown_table(results), flush=True)
        with open_atomically(os.path.join(FLAGS.output_dir, "evaluation.json")) as f:
            json.dump({method: {str(layer): {name: r.to_dict() for name, r in by_name.items()}
                                for layer, by_name in by_layer.items()}
                       for method, by_layer in results.items()}, f, indent=2)
            f.write("\n")


if __name__ == "__main__":
    command_line.main("build_static_embeddings", prepare, job,
                       required=["init_checkpoint", "corpus_file", "output_dir"])
