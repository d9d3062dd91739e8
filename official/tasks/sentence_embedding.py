"""Contrastive fine-tuning of a sentence encoder on (anchor, positive[, hard negative]) pairs:
the model that embeds a pair's texts in one call, the symmetric in-batch ranking loss, and
retrieval metrics on the dev pairs.

    PairEncoder              a record's texts [batch, texts, seq_len] -> their vectors
                             [batch, texts, hidden], by `BertSentenceEncoder` (one pass over
                             every row); its checkpoint is the encoder's, no head
    symmetric_ranking_loss   the loss of one batch, per pair
    retrieval_rankings       dev pairs -> queries (distinct anchors), corpus (distinct
                             positives), each query's ranking of the corpus by cosine
    retrieval_metrics        MRR@10 and recall@1 of those rankings
    SentenceEmbeddingTask    run_sentence_embedding's task (official/tasks/base.py)

The loss is sentence-transformers' MultipleNegativesSymmetricRankingLoss (with its default
scale 20 and cosine similarity): in a batch of B pairs, with candidates c = the B positives
followed by the batch's hard negatives,

    s[i, j]   = scale * cos(anchor_i, c_j)                              [B, B + negatives]
    forward   = cross-entropy(s[i, :], i)      each anchor picks its positive among every
                                               candidate (MultipleNegativesRankingLoss)
    backward  = cross-entropy(s[:, j][:B], j)  each positive picks its anchor among the anchors
    loss_i    = (forward_i + backward_i) / 2

so every other pair's positive (and every hard negative) is a negative of anchor i: the batch
is the set of negatives. A pair whose line has no hard negative has no candidate in that slot
(its score is -inf, as if it were not in the batch). The loss is a sum over pairs divided by
the pairs of the whole global batch (`normalizers`), the Trainer's protocol, so it is the mean
over pairs of one update. But the negatives are those of the batch a model call sees: under a
distribution strategy each replica's share of the batch (train_batch_size / replicas, and /
gradient_accumulation_steps with accumulation) is its own set of in-batch negatives, so the
loss is not that of one big batch: with 8 replicas of 32 pairs each anchor competes with 31
other positives, not 255 (sentence-transformers' CachedMultipleNegativesRankingLoss, GradCache,
is the way to bigger sets; not done here). Identical positives in one batch are false
negatives; the pairs are shuffled, not de-duplicated per batch (sentence-transformers'
NO_DUPLICATES sampler is not reproduced).

The dev metric follows sentence-transformers' InformationRetrievalEvaluator: the queries are
the dev file's distinct anchors, the corpus its distinct positives, the relevant documents of
a query every positive it is paired with (usually one). Documents are ranked by cosine; a tie
with a non-relevant document counts against the query (an embedding that collapses every text
onto one vector scores 0, not 1). MRR@10: the mean over queries of 1 / the rank of the first
relevant document, 0 beyond rank 10; recall@1: the mean share of a query's relevant documents
found at rank 1. best/ is kept by MRR@10. Dev hard negatives are read (and checked) but not
ranked.

There is no test split: --do_predict ranks the dev file again and writes
`retrieval_results.txt` (the metrics, eval_results.txt's format) and `retrieval_rankings.tsv`
(each query's top 10). The checkpoint is a plain encoder, exported by
`export_saved_model --export_type=sentence_encoder --init_checkpoint=<output_dir>/best`, which
reads the pooling from the `sentence_encoder.json` this task writes beside the checkpoints.
"""

from __future__ import annotations

import os
from typing import Mapping, Sequence

import keras
import numpy as np
import tensorflow as tf
from absl import logging

from official.atomic_files import open_atomically
from official.checkpoints import sentence_transformers
from official.modeling.encoder import BertEncoder
from official.modeling.models import BertSentenceEncoder
from official.records import to_json
from official.sentence_settings import SentenceSettings
from official.tasks.base import Records, SoftTarget
from official.tasks.sentence_embedding_settings import DEFAULT_SCALE, SentenceEmbeddingSettings

# sentence-transformers' MultipleNegatives(Symmetric)RankingLoss default.
RESULTS_FILE = "retrieval_results.txt"
RANKINGS_FILE = "retrieval_rankings.tsv"
TOP_K = 10


class _TextsAsRows(keras.layers.Layer):
    """[batch, texts, seq_len] -> [batch * texts, seq_len], a pair's texts consecutive."""

    def call(self, x):
        return tf.reshape(x, [-1, tf.shape(x)[-1]])

    def compute_output_spec(self, x):
        return keras.KerasTensor((None, x.shape[-1]), dtype=x.dtype)


class _RowsAsTexts(keras.layers.Layer):
    """[batch * texts, hidden] -> [batch, texts, hidden], shaped as `like` [batch, texts, ...]."""

    def call(self, vectors, like):
        shape = tf.shape(like)
        return tf.reshape(vectors, [shape[0], shape[1], vectors.shape[-1]])

    def compute_output_spec(self, vectors, like):
        return keras.KerasTensor((like.shape[0], like.shape[1], vectors.shape[-1]),
                                 dtype=vectors.dtype)


class PairEncoder(keras.Model):
    """A record's texts embedded in one call: every text is a row of `sentence_encoder`
    (a `BertSentenceEncoder`), so anchors, positives and hard negatives share one pass.

    Inputs: `input_word_ids` and `input_mask`, int32 [batch, texts, seq_len] (row 0 the
    anchor, 1 the positive, 2 the hard negative; data_prep/sentence_pairs.py); segment ids
    are all 0. Outputs {"embeddings": float32 [batch, texts, hidden]}, not normalised.

    The checkpoint is the encoder alone (`checkpoint_items`, no heads), the same roots as
    `BertSentenceEncoder`'s, so the sentence_encoder export reads a run's best/ directly. There
    is no `inference_model`: this model is what predicts (the dev pairs' vectors).
    """

    reads_pooler = False  # a parameter-efficient run has no pooler to train

    def __init__(self, encoder: BertEncoder, pooling: str = "mean", **kwargs):
        self.encoder = encoder
        self.pooling = pooling
        self.sentence_encoder = BertSentenceEncoder(encoder, pooling, normalize=False)
        inputs = {name: keras.Input((None, None), dtype="int32", name=name)
                  for name in ("input_word_ids", "input_mask")}
        rows = {name: _TextsAsRows(name=f"{name}_rows")(tensor)
                for name, tensor in inputs.items()}
        rows["input_type_ids"] = keras.ops.zeros_like(rows["input_word_ids"])
        vectors = self.sentence_encoder(rows)
        embeddings = _RowsAsTexts(name="embeddings")(vectors, inputs["input_word_ids"])
        super().__init__(inputs=inputs, outputs={"embeddings": embeddings}, **kwargs)

    @property
    def checkpoint_items(self) -> dict:
        return {"encoder": self.encoder, "heads": {}}


def _real_texts(features: Mapping[str, tf.Tensor]) -> tf.Tensor:
    """float32 [batch, texts]: 1 for a text the record holds (its [CLS] is real), 0 for a
    missing hard negative."""
    return tf.cast(features["input_mask"][:, :, 0] > 0, tf.float32)


def symmetric_ranking_loss(embeddings: tf.Tensor, valid: tf.Tensor,
                           scale: float) -> tuple[tf.Tensor, tf.Tensor]:
    """The module docstring's loss, per pair.

    Args:
      embeddings: float [batch, texts, hidden]: anchors, positives, hard negatives (texts 3).
      valid: bool [batch, texts], False for a missing hard negative.
      scale: the cosines' multiplier (the inverse of a softmax temperature).
    Returns:
      (loss float32 [batch], correct float32 [batch]: 1 where an anchor's best-scored
      candidate is its own positive).
    """
    unit = tf.math.l2_normalize(tf.cast(embeddings, tf.float32), axis=-1, epsilon=1e-24)
    batch, hidden = tf.shape(unit)[0], tf.shape(unit)[2]
    anchors = unit[:, 0]
    # The positives in pair order, then the hard negatives in pair order.
    candidates = tf.reshape(tf.transpose(unit[:, 1:], [1, 0, 2]), [-1, hidden])
    candidate_valid = tf.reshape(tf.transpose(valid[:, 1:]), [-1])
    scores = scale * tf.matmul(anchors, candidates, transpose_b=True)
    scores = tf.where(candidate_valid[tf.newaxis, :], scores, -np.inf)
    labels = tf.range(batch)
    forward = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=scores)
    backward = tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=labels, logits=tf.transpose(scores[:, :batch]))
    correct = tf.cast(tf.equal(tf.argmax(scores, axis=-1, output_type=tf.int32), labels),
                      tf.float32)
    return (forward + backward) / 2, correct


def retrieval_sets(pairs: Sequence) -> tuple[list[str], list[str], list[set[int]],
                                             list[int], list[int]]:
    """The dev pairs as a retrieval task.

    Args:
      pairs: objects with `anchor` and `positive` (data_prep.sentence_pairs.Pair).
    Returns:
      (queries: the distinct anchors in first-seen order, corpus: the distinct positives,
      relevant: each query's set of corpus indices, query_rows and corpus_rows: the pair whose
      vector stands for each query and each document).
    """
    queries, corpus, relevant, query_rows, corpus_rows = [], [], [], [], []
    query_index: dict[str, int] = {}
    corpus_index: dict[str, int] = {}
    for row, pair in enumerate(pairs):
        if pair.positive not in corpus_index:
            corpus_index[pair.positive] = len(corpus)
            corpus.append(pair.positive)
            corpus_rows.append(row)
        if pair.anchor not in query_index:
            query_index[pair.anchor] = len(queries)
            queries.append(pair.anchor)
            query_rows.append(row)
            relevant.append(set())
        relevant[query_index[pair.anchor]].add(corpus_index[pair.positive])
    return queries, corpus, relevant, query_rows, corpus_rows


def cosine_scores(queries: np.ndarray, corpus: np.ndarray) -> np.ndarray:
    """float64 [queries, corpus] cosines of [queries, hidden] and [corpus, hidden] vectors
    (a zero vector's cosines are 0)."""
    def unit(x):
        x = np.asarray(x, np.float64)
        return x / np.maximum(np.linalg.norm(x, axis=-1, keepdims=True), 1e-12)
    return unit(queries) @ unit(corpus).T


def first_relevant_ranks(scores: np.ndarray, relevant: Sequence[set[int]]) -> np.ndarray:
    """Each query's rank (1-based) of its best-scored relevant document: 1 + the non-relevant
    documents scored at least as high (ties count against the query)."""
    ranks = np.empty(len(relevant), np.int64)
    for q, docs in enumerate(relevant):
        is_relevant = np.zeros(scores.shape[1], bool)
        is_relevant[list(docs)] = True
        best = scores[q, is_relevant].max()
        ranks[q] = 1 + np.count_nonzero(scores[q, ~is_relevant] >= best)
    return ranks


def retrieval_metrics(scores: np.ndarray, relevant: Sequence[set[int]],
                      k: int = TOP_K) -> dict[str, float]:
    """{"mrr_at_10": ..., "recall_at_1": ..., "queries", "corpus_size"} of [queries, corpus]
    scores (`k` names and sets the MRR cut-off)."""
    ranks = first_relevant_ranks(scores, relevant)
    reciprocal = np.where(ranks <= k, 1.0 / ranks, 0.0)
    # At rank 1 sits one relevant document (the best one) when the first relevant rank is 1.
    recall_1 = np.array([1.0 / len(docs) if rank == 1 else 0.0
                         for rank, docs in zip(ranks, relevant)])
    return {f"mrr_at_{k}": float(reciprocal.mean()), "recall_at_1": float(recall_1.mean()),
            "queries": float(len(relevant)), "corpus_size": float(scores.shape[1])}


class SentenceEmbeddingTask:
    """run_sentence_embedding's task (official/tasks/base.py): `PairEncoder` trained by the
    symmetric ranking loss, MRR@10 on the dev pairs.

    Args:
      pooling: how token vectors become a text's (official/modeling/sentence_pooling.py).
      scale: the loss's multiplier of cosines (sentence-transformers' default 20).
      max_seq_length: the rows' length, recorded for the export.

    Features: input_word_ids, input_mask int32 [batch, texts, seq_len]. Outputs: embeddings.
    Stats: loss_sum, correct (anchors whose best candidate is their positive), pairs, examples.
    `Records.examples` is the split's pairs.
    """

    best_metric = f"mrr_at_{TOP_K}"
    keep = ("pair_index",)
    results_file = RESULTS_FILE

    def __init__(self, pooling: str | None = None, scale: float = DEFAULT_SCALE,
                 max_seq_length: int = 128):
        settings = SentenceEmbeddingSettings(pooling, scale, max_seq_length)
        self.pooling, self.scale, self.max_seq_length = (settings.pooling, settings.scale,
                                                         settings.max_seq_length)

    def build_model(self, encoder: BertEncoder) -> PairEncoder:
        return PairEncoder(encoder, self.pooling)

    def files(self) -> dict[str, str | None]:
        """sentence_encoder.json: the pooling the sentence_encoder export applies (vectors not
        normalised, as trained; its --normalize flag may ask for unit vectors)."""
        settings = SentenceSettings(self.pooling, False, self.max_seq_length)
        return {sentence_transformers.RECORD_FILE: to_json(settings)}

    def serving_spec(self) -> dict:
        return {"export_type": "sentence_encoder", "task_name": "sentence_embedding",
                "pooling": self.pooling, "normalize": False}

    def soft_targets(self, outputs, features) -> dict[str, SoftTarget]:
        """Every real text's vector, matched to the teacher's by mean squared error over its
        dimensions (sentence-transformers' MSELoss, with which it distils a smaller encoder
        from a bigger one): anchors, positives and hard negatives alike."""
        return {"embeddings": SoftTarget(outputs["embeddings"], _real_texts(features), "texts",
                                         kind="vector")}

    def normalizers(self, features: Mapping[str, tf.Tensor]) -> dict[str, tf.Tensor]:
        """The global batch's pairs (the loss is a mean over pairs) and its real texts (a
        distillation's soft loss is a mean over texts)."""
        pairs = tf.cast(tf.shape(features["input_word_ids"])[0], tf.float32)
        return {"pairs": pairs, "examples": pairs,
                "texts": tf.reduce_sum(_real_texts(features))}

    def loss_and_stats(self, outputs, features: Mapping[str, tf.Tensor],
                       normalizers: Mapping[str, tf.Tensor]) -> tuple[tf.Tensor, dict]:
        """This batch's part of the global loss: sum of its pairs' losses / the global pairs."""
        loss, correct = symmetric_ranking_loss(outputs["embeddings"], _real_texts(features) > 0,
                                               self.scale)
        pairs = tf.cast(tf.shape(loss)[0], tf.float32)
        stats = {"loss_sum": tf.reduce_sum(loss), "correct": tf.reduce_sum(correct),
                 "pairs": pairs, "examples": pairs}
        return stats["loss_sum"] / normalizers["pairs"], stats

    def metrics(self, stats: Mapping[str, float]) -> dict[str, float]:
        """The loss per pair, and the in-batch accuracy (anchors whose best candidate is their
        positive; it depends on the batch size)."""
        pairs = max(float(stats["pairs"]), 1e-12)
        return {"loss": float(stats["loss_sum"]) / pairs,
                "accuracy": float(stats["correct"]) / pairs}

    def _ranked(self, outputs: Mapping[str, np.ndarray], records: Records):
        pairs = records.examples
        order = np.asarray(outputs["pair_index"]).reshape(-1)
        if not np.array_equal(order, np.arange(len(pairs))):
            raise ValueError(f"{records.source}: the predictions are not the file's "
                             f"{len(pairs)} pairs in order")
        queries, corpus, relevant, query_rows, corpus_rows = retrieval_sets(pairs)
        embeddings = outputs["embeddings"]
        scores = cosine_scores(embeddings[query_rows, 0], embeddings[corpus_rows, 1])
        return queries, corpus, relevant, scores

    def evaluate(self, outputs: Mapping[str, np.ndarray], records: Records) -> dict[str, float]:
        _, _, relevant, scores = self._ranked(outputs, records)
        return retrieval_metrics(scores, relevant)

    def write_predictions(self, outputs: Mapping[str, np.ndarray], records: Records,
                          output_dir: str | None) -> dict[str, float]:
        """The dev file ranked again (there is no test split): retrieval_rankings.tsv (query,
        rank, cosine, 1 when relevant, document) for each query's top 10, and the metrics (the
        run writes them to retrieval_results.txt)."""
        queries, corpus, relevant, scores = self._ranked(outputs, records)
        metrics = retrieval_metrics(scores, relevant)
        if output_dir is not None:
            with open_atomically(os.path.join(output_dir, RANKINGS_FILE)) as f:
                f.write("query\trank\tcosine\trelevant\tdocument\n")
                for q, query in enumerate(queries):
                    # Ties: a relevant document after the others, as the metrics count it.
                    top = sorted(range(len(corpus)),
                                 key=lambda d: (-scores[q, d], d in relevant[q]))[:TOP_K]
                    f.writelines(f"{query}\t{rank}\t{scores[q, d]:.6f}\t"
                                 f"{int(d in relevant[q])}\t{corpus[d]}\n"
                                 for rank, d in enumerate(top, start=1))
        logging.info("retrieval on %s: MRR@10 %.4f  recall@1 %.4f (%d queries, %d documents)",
                     records.source, metrics[self.best_metric], metrics["recall_at_1"],
                     len(queries), len(corpus))
        return metrics
