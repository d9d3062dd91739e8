r"""Contrastive fine-tuning of a sentence encoder on text pairs, evaluated by retrieval (MRR@10).

    python -m run_scripts.run_sentence_embedding \
      --train_file=pairs/train.tsv --dev_file=pairs/dev.tsv \
      --vocab_file=$BERT_DIR/vocab.txt --bert_config_file=$BERT_DIR/bert_config.json \
      --init_checkpoint=$BERT_DIR --do_train --do_eval --max_seq_length=128 \
      --train_batch_size=64 --learning_rate=2e-5 --num_train_epochs=1 \
      --output_dir=/tmp/embedding_output

The files are anchor<TAB>positive[<TAB>hard negative] lines without a header
(data_prep/sentence_pairs.py), converted to TFRecords cached in output_dir. The loss is
sentence-transformers' MultipleNegativesSymmetricRankingLoss over cosines times --scale: each
anchor picks its positive among the batch's positives and hard negatives, each positive its
anchor among the batch's anchors. The batch is the negatives: a bigger --train_batch_size is a
harder task, and under a distribution strategy each replica's share of the batch is its own set
of negatives (official/tasks/sentence_embedding.py).

Writes to output_dir: checkpoints (the encoder alone; the best by dev MRR@10 in output_dir/best
when --do_eval runs while training), eval_results.txt (dev MRR@10 and recall@1: the dev
anchors ranking the dev positives by cosine) and sentence_encoder.json (the pooling, which the
export reads). There is no test file: --do_predict ranks the dev file again and writes
retrieval_results.txt and retrieval_rankings.tsv (each query's top 10). Serve the vectors with
`export_saved_model --export_type=sentence_encoder --init_checkpoint=<output_dir>/best`.

The halves: data_prep/sentence_pairs.py (files -> records), official/tasks/sentence_embedding.py
(model, loss, retrieval metrics, ranking files), official/training/finetuning.py (the run every
fine-tuning task shares).
"""

from absl import app, flags

from data_prep import sentence_pairs
from official.tasks.sentence_embedding import DEFAULT_SCALE, SentenceEmbeddingTask
from official.training import finetuning
from run_scripts import common_flags, entry_point

flags.DEFINE_string("train_file", None,
                    "anchor<TAB>positive[<TAB>hard negative] lines to train on (--do_train).")
flags.DEFINE_string("dev_file", None,
                    "anchor<TAB>positive lines ranked for MRR@10 (--do_eval, after every epoch; "
                    "--do_predict writes its rankings).")
common_flags.define_pooling_flag("Default mean; the run records it (sentence_encoder.json) for "
                                 "the export, and a rerun with another is refused.")
flags.DEFINE_float("scale", DEFAULT_SCALE,
                   "The cosines' multiplier in the loss (the inverse of a softmax temperature; "
                   "sentence-transformers' default).")
common_flags.define_finetuning_flags(max_seq_length=128)
flags.adopt_module_key_flags(common_flags)
FLAGS = flags.FLAGS


def task_and_data(options: finetuning.FinetuningOptions
                  ) -> tuple[SentenceEmbeddingTask, sentence_pairs.SentencePairData]:
    """The task and data the flags name."""
    if options.do_train and not FLAGS.train_file:
        raise ValueError("--do_train needs --train_file")
    if (options.do_eval or options.do_predict) and not FLAGS.dev_file:
        raise ValueError("--do_eval and --do_predict need --dev_file (--do_predict ranks it)")
    task = SentenceEmbeddingTask(FLAGS.pooling, FLAGS.scale, options.max_seq_length)
    data = sentence_pairs.SentencePairData(
        {"train": FLAGS.train_file, "dev": FLAGS.dev_file}, options.max_seq_length,
        FLAGS.vocab_file, FLAGS.do_lower_case, options.output_dir)
    return task, data


def run() -> dict[str, dict[str, float]]:
    options = common_flags.finetuning_options()
    return common_flags.finetune(options, *task_and_data(options))


def main(argv: list[str]) -> None:
    del argv  # Unused.
    entry_point.run_job("run_sentence_embedding", run)


if __name__ == "__main__":
    flags.mark_flags_as_required(["vocab_file", "output_dir"])
    app.run(main)
