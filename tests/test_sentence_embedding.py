"""The sentence-embedding task and its data: the symmetric in-batch ranking loss against a numpy
reference, MRR@10 and recall@1 against hand-computed rankings, the pairs reader's errors and
records, and the model that embeds a pair's texts in one call."""

import numpy as np
import pytest
import tensorflow as tf

from data_prep import sentence_pairs
from data_prep.sentence_pairs import Pair, PairsError, read_pairs
from official.configs import BertConfig
from official.modeling.encoder import build_encoder
from official.modeling.models import BertSentenceEncoder
from official.tasks import sentence_embedding
from official.tasks.base import Records
from official.tasks.sentence_embedding import (
    PairEncoder,
    SentenceEmbeddingTask,
    retrieval_metrics,
    symmetric_ranking_loss,
)
from official.text.tokenizer import FullTokenizer

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "sat", "dog", "ran", "a",
         "mat"]


# ---- the loss ----------------------------------------------------------------------------------

def _log_softmax(x):
    x = x - x.max(axis=-1, keepdims=True)
    return x - np.log(np.exp(x).sum(axis=-1, keepdims=True))


def reference_loss(anchors, positives, negatives, scale):
    """sentence-transformers' MultipleNegativesSymmetricRankingLoss, per pair, in float64:
    candidates = positives + the hard negatives that exist (a list; None for a missing one)."""
    def unit(x):
        return x / np.linalg.norm(x, axis=-1, keepdims=True)
    present = [n for n in negatives if n is not None]
    candidates = np.concatenate([positives, np.array(present).reshape(-1, anchors.shape[1])])
    scores = scale * unit(anchors) @ unit(candidates).T
    batch = len(anchors)
    forward = -np.diag(_log_softmax(scores))
    backward = -np.diag(_log_softmax(scores[:, :batch].T))
    return (forward + backward) / 2


@pytest.mark.parametrize("negatives", ["none", "all", "some"])
def test_loss_is_symmetric_cross_entropy_over_scaled_cosines(negatives):
    rng = np.random.default_rng(0)
    batch, hidden, scale = 5, 8, 20.0
    anchors, positives = rng.normal(size=(2, batch, hidden))
    texts = [anchors, positives]
    negative_rows = [None] * batch
    valid = np.ones((batch, 2), bool)
    if negatives != "none":
        rows = rng.normal(size=(batch, hidden))
        has = np.ones(batch, bool) if negatives == "all" else np.array([1, 0, 1, 0, 0], bool)
        negative_rows = [r if h else None for r, h in zip(rows, has)]
        # A missing negative's row is whatever the model makes of an all-0 row: here zeros.
        texts.append(np.where(has[:, None], rows, 0.0))
        valid = np.concatenate([valid, has[:, None]], axis=1)
    embeddings = np.stack(texts, axis=1).astype(np.float32)

    loss, correct = symmetric_ranking_loss(tf.constant(embeddings), tf.constant(valid), scale)

    expected = reference_loss(anchors, positives, negative_rows, scale)
    np.testing.assert_allclose(loss.numpy(), expected, rtol=1e-4, atol=1e-5)
    assert correct.shape == (batch,)


def test_a_hard_negative_makes_the_loss_larger():
    rng = np.random.default_rng(1)
    embeddings = rng.normal(size=(4, 3, 8)).astype(np.float32)
    embeddings[:, 2] = embeddings[:, 1] * 0.9 + embeddings[:, 0] * 0.1  # close to the positive
    with_negatives, _ = symmetric_ranking_loss(embeddings, np.ones((4, 3), bool), 20.0)
    without, _ = symmetric_ranking_loss(embeddings[:, :2], np.ones((4, 2), bool), 20.0)
    assert (with_negatives.numpy() > without.numpy()).all()


def test_task_loss_is_a_sum_over_the_global_batch():
    """Two halves of a batch, each normalised by the global count of pairs, add up to the mean
    of their per-pair losses (each half its own in-batch negatives)."""
    rng = np.random.default_rng(2)
    task = SentenceEmbeddingTask(scale=10.0)
    embeddings = rng.normal(size=(6, 2, 8)).astype(np.float32)
    mask = np.ones((6, 2, 4), np.int32)
    features = {"input_word_ids": mask, "input_mask": mask}
    halves = [{k: v[:3] for k, v in features.items()}, {k: v[3:] for k, v in features.items()}]
    normalizers = {"pairs": tf.constant(6.0), "examples": tf.constant(6.0)}
    total, per_pair = 0.0, []
    for half, rows in zip(halves, (slice(0, 3), slice(3, 6))):
        loss, stats = task.loss_and_stats({"embeddings": embeddings[rows]}, half, normalizers)
        total += float(loss)
        per_pair += list(reference_loss(embeddings[rows, 0], embeddings[rows, 1], [None] * 3,
                                        10.0))
        assert float(stats["pairs"]) == 3
    assert total == pytest.approx(np.mean(per_pair), rel=1e-5)
    assert task.normalizers(features)["pairs"] == 6


# ---- retrieval metrics ---------------------------------------------------------------------------

def test_mrr_and_recall_against_hand_computed_rankings():
    scores = np.array([
        [0.9, 0.8, 0.1, 0.2],   # relevant 1, one document above it: rank 2
        [0.3, 0.2, 0.1, 0.5],   # relevant 0 and 3: 3 is first, rank 1; recall@1 = 1/2
        [0.5, 0.5, 0.5, 0.1],   # relevant 2, tied with 0 and 1: ties count against, rank 3
    ])
    relevant = [{1}, {0, 3}, {2}]
    assert list(sentence_embedding.first_relevant_ranks(scores, relevant)) == [2, 1, 3]
    metrics = retrieval_metrics(scores, relevant)
    assert metrics["mrr_at_10"] == pytest.approx((1 / 2 + 1 + 1 / 3) / 3)
    assert metrics["recall_at_1"] == pytest.approx((0 + 1 / 2 + 0) / 3)
    assert metrics["queries"] == 3 and metrics["corpus_size"] == 4


def test_mrr_counts_nothing_beyond_rank_10():
    scores = np.linspace(1.0, 0.0, 12)[None, :].repeat(2, axis=0)
    metrics = retrieval_metrics(scores, [{9}, {10}])   # ranks 10 and 11
    assert metrics["mrr_at_10"] == pytest.approx((1 / 10 + 0) / 2)


def test_a_collapsed_embedding_scores_nothing():
    scores = np.zeros((3, 3))
    assert retrieval_metrics(scores, [{0}, {1}, {2}])["mrr_at_10"] == pytest.approx(1 / 3)


def test_queries_are_distinct_anchors_and_the_corpus_distinct_positives():
    pairs = [Pair("q1", "d1", None, 1), Pair("q2", "d2", None, 2), Pair("q1", "d3", None, 3),
             Pair("q3", "d1", None, 4)]
    queries, corpus, relevant, query_rows, corpus_rows = sentence_embedding.retrieval_sets(pairs)
    assert queries == ["q1", "q2", "q3"] and corpus == ["d1", "d2", "d3"]
    assert relevant == [{0, 2}, {1}, {0}]
    assert query_rows == [0, 1, 3] and corpus_rows == [0, 1, 2]


def test_evaluate_ranks_the_dev_positives_by_cosine():
    pairs = [Pair("a", "x", None, 1), Pair("b", "y", None, 2), Pair("c", "z", None, 3)]
    # Anchor a's cosines: y 1, z 0.77, x (its own) 0: rank 3; b's and c's own come first.
    embeddings = np.array([[[0, 1], [1, 0]], [[0, 1], [0, 1]], [[1, 1], [1, 1.2]]], np.float32)
    outputs = {"embeddings": embeddings, "pair_index": np.arange(3)}
    records = Records("unused", {}, 3, 3, "dev.tsv", examples=pairs)
    metrics = SentenceEmbeddingTask().evaluate(outputs, records)
    assert metrics["mrr_at_10"] == pytest.approx((1 / 3 + 1 + 1) / 3)
    assert metrics["recall_at_1"] == pytest.approx(2 / 3)
    with pytest.raises(ValueError, match="not the file's 3 pairs in order"):
        SentenceEmbeddingTask().evaluate(dict(outputs, pair_index=np.array([0, 2, 1])), records)


def test_prediction_gives_the_metrics_and_writes_each_querys_top_10(tmp_path):
    pairs = [Pair("a", "x", None, 1), Pair("b", "y", None, 2)]
    embeddings = np.array([[[1, 0], [1, 0.1]], [[0, 1], [0.1, 1]]], np.float32)
    records = Records("unused", {}, 2, 2, "dev.tsv", examples=pairs)
    task = SentenceEmbeddingTask()
    scores = task.write_predictions(
        {"embeddings": embeddings, "pair_index": np.arange(2)}, records, str(tmp_path))
    assert scores["mrr_at_10"] == 1.0
    assert task.results_file == "retrieval_results.txt"  # where the run writes them
    lines = (tmp_path / "retrieval_rankings.tsv").read_text().splitlines()
    assert lines[0] == "query\trank\tcosine\trelevant\tdocument"
    assert [line.split("\t")[:2] + line.split("\t")[3:] for line in lines[1:]] == [
        ["a", "1", "1", "x"], ["a", "2", "0", "y"], ["b", "1", "1", "y"], ["b", "2", "0", "x"]]


def test_task_settings_are_checked_and_recorded_for_the_export():
    with pytest.raises(ValueError, match="--pooling must be one of"):
        SentenceEmbeddingTask(pooling="sum")
    with pytest.raises(ValueError, match="--scale must be positive"):
        SentenceEmbeddingTask(scale=0)
    task = SentenceEmbeddingTask("cls", 20.0, 64)
    assert task.serving_spec()["export_type"] == "sentence_encoder"
    assert '"pooling": "cls"' in task.files()["sentence_encoder.json"]


def test_a_distillation_matches_every_real_texts_vector():
    """The soft target: each real text's vector (a missing hard negative left out), matched by
    mean squared error over its dimensions, averaged over the global batch's real texts."""
    mask = np.zeros((2, 3, 4), np.int32)
    mask[:, :2, :2] = 1
    mask[0, 2, :3] = 1  # the first pair's hard negative; the second has none
    features = {"input_word_ids": mask, "input_mask": mask}
    task = SentenceEmbeddingTask()
    vectors = np.arange(2 * 3 * 5, dtype=np.float32).reshape(2, 3, 5)
    target = task.soft_targets({"embeddings": vectors}, features)["embeddings"]
    assert target.kind == "vector" and target.normalizer == "texts"
    np.testing.assert_array_equal(target.weights, [[1, 1, 1], [1, 1, 0]])
    assert float(task.normalizers(features)["texts"]) == 5.0


# ---- the model ----------------------------------------------------------------------------------

def test_pair_encoder_embeds_every_text_as_the_sentence_encoder_does():
    encoder = build_encoder(BertConfig(vocab_size=len(VOCAB), hidden_size=16,
                                       num_hidden_layers=1, num_attention_heads=2,
                                       intermediate_size=32, max_position_embeddings=16))
    model = PairEncoder(encoder, "mean")
    rng = np.random.default_rng(3)
    ids = rng.integers(5, len(VOCAB), size=(3, 2, 8)).astype(np.int32)
    mask = (np.arange(8) < rng.integers(3, 9, size=(3, 2, 1))).astype(np.int32)
    ids *= mask
    embeddings = model({"input_word_ids": ids, "input_mask": mask})["embeddings"].numpy()
    single = BertSentenceEncoder(encoder, "mean")
    rows = single({"input_word_ids": ids.reshape(6, 8), "input_mask": mask.reshape(6, 8),
                   "input_type_ids": np.zeros((6, 8), np.int32)}).numpy()
    np.testing.assert_allclose(embeddings, rows.reshape(3, 2, 16), rtol=1e-5, atol=1e-6)
    assert model.checkpoint_items == {"encoder": encoder, "heads": {}}
    assert sorted(model.input) == ["input_mask", "input_word_ids"]


# ---- the pairs file -----------------------------------------------------------------------------

@pytest.mark.parametrize("content, problem", [
    ("a\tb\nc\n", "data.tsv:2: 1 tab-separated columns, expected 2 or 3"),
    ("a\tb\n\na\tb\n", "data.tsv:2: 1 tab-separated columns"),
    ("a\tb\tc\td\n", "data.tsv:1: 4 tab-separated columns"),
    ("a\tb\n \tb\n", "data.tsv:2: the anchor (column 1) is empty"),
    ("a\t\n", "data.tsv:1: the positive (column 2) is empty"),
    ("a\tb\t \n", "data.tsv:1: the hard negative (column 3) is empty"),
    ("", "data.tsv: no pairs"),
])
def test_reader_names_the_file_and_line_of_every_problem(tmp_path, content, problem):
    path = tmp_path / "data.tsv"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(PairsError) as error:
        read_pairs(str(path))
    assert str(error.value).startswith(f"{tmp_path}/{problem}")


def test_reader_errors_for_bytes_and_missing_files(tmp_path):
    path = tmp_path / "data.tsv"
    path.write_bytes(b"a\tb\nq\xff\tb\n")
    with pytest.raises(PairsError, match=r"data.tsv:2: not UTF-8"):
        read_pairs(str(path))
    with pytest.raises(PairsError, match="nothing.tsv: no such file"):
        read_pairs(str(tmp_path / "nothing.tsv"))


def test_reader_takes_two_or_three_columns_per_line(tmp_path):
    path = tmp_path / "data.tsv"
    path.write_bytes(b"the cat\ta cat sat\r\nthe dog \t ran\tthe mat")
    assert read_pairs(str(path)) == [Pair("the cat", "a cat sat", None, 1),
                                     Pair("the dog", "ran", "the mat", 2)]


def _tokenizer(tmp_path):
    (tmp_path / "vocab.txt").write_text("\n".join(VOCAB) + "\n", encoding="utf-8")
    return FullTokenizer(str(tmp_path / "vocab.txt"), do_lower_case=True)


def test_records_hold_each_text_as_a_row(tmp_path):
    tokenizer = _tokenizer(tmp_path)
    pairs = [Pair("the cat sat", "a cat", "the dog", 1),
             Pair("the dog ran on the mat", "dog", None, 2)]
    assert sentence_pairs.texts_of(pairs) == 3
    path = str(tmp_path / "pairs.tf_record")
    assert sentence_pairs.write_tfrecord(pairs, 6, tokenizer, path, texts=3) == 2
    spec = sentence_pairs.parse_spec(6, 3)
    records = [tf.io.parse_single_example(r, spec) for r in tf.data.TFRecordDataset(path)]
    cls, sep = 2, 3
    ids = lambda *words: [VOCAB.index(w) for w in words]  # noqa: E731
    assert records[0]["input_ids"].numpy().tolist() == [
        [cls, *ids("the", "cat", "sat"), sep, 0], [cls, *ids("a", "cat"), sep, 0, 0],
        [cls, *ids("the", "dog"), sep, 0, 0]]
    # Cut to max_seq_length - 2 pieces; a missing hard negative is an all-0 row.
    assert records[1]["input_ids"].numpy().tolist() == [
        [cls, *ids("the", "dog", "ran", "[UNK]"), sep], [cls, *ids("dog"), sep, 0, 0, 0],
        [0] * 6]
    assert records[1]["input_mask"].numpy().tolist() == [[1] * 6, [1, 1, 1, 0, 0, 0], [0] * 6]
    assert [int(r["pair_index"][0]) for r in records] == [0, 1]


def test_pair_data_reads_the_dev_file_for_prediction_and_drops_its_negatives(tmp_path):
    _tokenizer(tmp_path)
    (tmp_path / "train.tsv").write_text("the cat\ta cat\tthe dog\n", encoding="utf-8")
    (tmp_path / "dev.tsv").write_text("the cat\ta cat\tthe dog\nthe dog\tdog\n",
                                      encoding="utf-8")
    data = sentence_pairs.SentencePairData(
        {"train": str(tmp_path / "train.tsv"), "dev": str(tmp_path / "dev.tsv")}, 8,
        str(tmp_path / "vocab.txt"), True, str(tmp_path))
    assert data.read(["train", "dev", "test"]) == 1
    train, dev, test = (data.records(split) for split in ("train", "dev", "test"))
    assert list(train.spec["input_ids"].shape) == [3, 8]
    assert list(dev.spec["input_ids"].shape) == [2, 8]
    assert test.path == dev.path and test.reused and test.source.endswith("dev.tsv")
    assert len(test.examples) == 2
    (tmp_path / "train.tsv").write_text("a\n", encoding="utf-8")
    with pytest.raises(PairsError, match="train.tsv:1:"):
        data.__class__(data.files, 8, data.vocab_file, True, str(tmp_path)).read(["train"])
