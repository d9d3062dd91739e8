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

import os
from typing import Any, NamedTuple

from absl import flags

from official import command_line
from official.tasks.sentence_embedding_settings import DEFAULT_SCALE, SentenceEmbeddingSettings
from official.training.options import FinetuningOptions
from run_scripts import common_flags

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


class Plan(NamedTuple):
    """What the flags say, checked."""
    options: FinetuningOptions
    adaptations: dict[str, Any]
    settings: SentenceEmbeddingSettings


def prepare() -> Plan:
    """Every check that needs no TensorFlow (official/command_line.py)."""
    options, adaptations = common_flags.prepare_finetuning()
    if options.do_train and not FLAGS.train_file:
        raise ValueError("--do_train needs --train_file")
    if (options.do_eval or options.do_predict) and not FLAGS.dev_file:
        raise ValueError("--do_eval and --do_predict need --dev_file (--do_predict ranks it)")
    for path in (FLAGS.train_file if options.do_train else None,
                 FLAGS.dev_file if options.do_eval or options.do_predict else None):
        if path and not os.path.isfile(path):
            raise ValueError(f"{path}: no such file")
    settings = SentenceEmbeddingSettings(FLAGS.pooling, FLAGS.scale, options.max_seq_length)
    common_flags.check_adaptation_checkpoints(adaptations)
    return Plan(options, adaptations, settings)


def job(plan: Plan) -> dict[str, dict[str, float]]:
    """The task and data the flags name, fine-tuned."""
    from data_prep import sentence_pairs
    from official.tasks.sentence_embedding import SentenceEmbeddingTask

    settings, options = plan.settings, plan.options
    task = SentenceEmbeddingTask(settings.pooling, settings.scale, settings.max_seq_length)
    data = sentence_pairs.SentencePairData(
        {"train": FLAGS.train_file, "dev": FLAGS.dev_file}, options.max_seq_length,
        FLAGS.vocab_file, FLAGS.do_lower_case, options.output_dir)
    return common_flags.finetune(options, task, data, plan.adaptations)


if __name__ == "__main__":
    command_line.main("run_sentence_embedding", prepare, job, required=["vocab_file", "output_dir"])
