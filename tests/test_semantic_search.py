"""official/retrieval (index, search, encoder) and run_scripts/semantic_search.

The search is checked against a brute-force float64 numpy reference (ties: the lower corpus
row first); the index's reuse, rebuild and interrupted builds on a fake encoder; the entry point
end to end on a tiny sentence_encoder export built here, against numpy cosine top-k over the
vectors the export itself gives.
"""

import hashlib
import json
import os

import numpy as np
import pytest

from official.retrieval import index as retrieval_index
from official.retrieval.search import top_k
from tests import cli


def reference_top_k(queries, corpus, k):
    """Brute force: every score in float64, sorted by score down then corpus row up."""
    scores = np.asarray(queries, np.float64) @ np.asarray(corpus, np.float64).T
    rows = [np.lexsort((np.arange(len(corpus)), -row))[:k] for row in scores]
    return np.array(rows), np.take_along_axis(scores, np.array(rows), axis=1)


def test_search_equals_brute_force_on_random_unit_vectors():
    rng = np.random.default_rng(0)
    corpus = retrieval_index.normalize(rng.normal(size=(500, 24)))
    queries = retrieval_index.normalize(rng.normal(size=(37, 24)))
    for k in (1, 7, 500, 900):
        for batch_size in (None, 5):
            rows, scores = top_k(queries, corpus, k, batch_size=batch_size)
            want_rows, want_scores = reference_top_k(queries, corpus, min(k, 500))
            np.testing.assert_array_equal(rows, want_rows)
            np.testing.assert_allclose(scores, want_scores, atol=1e-6)
            assert rows.shape == (37, min(k, 500)) and scores.dtype == np.float32


def test_ties_go_to_the_lower_corpus_row():
    # Small integers: every dot product is exact in float32, so equal scores are equal.
    rng = np.random.default_rng(1)
    distinct = rng.integers(-2, 3, size=(6, 8)).astype(np.float32)
    corpus = distinct[rng.integers(0, 6, size=300)]  # each vector ~50 times
    queries = rng.integers(-2, 3, size=(20, 8)).astype(np.float32)
    for k in (1, 3, 49, 51, 120, 300):
        rows, scores = top_k(queries, corpus, k)
        want_rows, want_scores = reference_top_k(queries, corpus, k)
        np.testing.assert_array_equal(rows, want_rows)
        np.testing.assert_array_equal(scores, want_scores)


def test_normalize_gives_unit_rows_and_keeps_zero_rows():
    vectors = np.array([[3.0, 4.0], [0.0, 0.0]], np.float32)
    np.testing.assert_allclose(retrieval_index.normalize(vectors), [[0.6, 0.8], [0.0, 0.0]])


def test_read_texts_skips_empty_lines_but_keeps_their_numbers(tmp_path):
    path = tmp_path / "corpus.txt"
    path.write_bytes("\ufefffirst\r\n\n   \nsecond \u00e9\nthird".encode("utf-8"))
    texts = retrieval_index.read_texts(str(path))
    assert texts.lines == [1, 4, 5]
    assert texts.texts == ["first", "second \u00e9", "third"]


@pytest.mark.parametrize("content, error", [
    (None, "no such file"), (b"", "holds no text"), (b"\n \n", "holds no text"),
    (b"fine\nbad \xff byte\n", "not UTF-8 (line 2"),
])
def test_read_texts_refuses_bad_files_in_one_line(tmp_path, content, error):
    path = tmp_path / "queries.txt"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(ValueError, match=r"^--queries_file=.*queries\.txt: ") as raised:
        retrieval_index.read_texts(str(path), "--queries_file")
    assert error in str(raised.value) and "\n" not in str(raised.value)


class FakeEncoder:
    """Deterministic vectors per text (a hash seeds them); counts the texts it embeds."""

    path, fingerprint = "/exports/fake/1", "fp"

    def __init__(self):
        self.embedded = 0

    def __call__(self, texts):
        self.embedded += len(texts)
        return np.stack([np.random.default_rng(abs(hash(t)) % 2**32).normal(size=8)
                         for t in texts]).astype(np.float32)


def _corpus(tmp_path, lines):
    path = tmp_path / "corpus.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return retrieval_index.read_texts(str(path))


def _leftovers(index_dir):
    return sorted(name for name in os.listdir(index_dir) if name.endswith(".tmp"))


def test_index_is_reused_when_unchanged_and_rebuilt_when_the_corpus_or_export_changes(tmp_path):
    index_dir = str(tmp_path / "corpus.txt.index")
    encoder = FakeEncoder()
    corpus = _corpus(tmp_path, ["a cat", "", "a dog", "a bird"])
    built, reused = retrieval_index.load_or_build(index_dir, corpus, encoder, batch_size=2)
    assert not reused and encoder.embedded == 3
    assert built.lines == [1, 3, 4]
    np.testing.assert_allclose(np.linalg.norm(built.vectors, axis=1), 1.0, rtol=1e-6)
    with open(os.path.join(index_dir, "index.json"), encoding="utf-8") as f:
        record = json.load(f)
    assert record["corpus"]["sha256"] == corpus.sha256 and record["count"] == 3
    assert record["dim"] == 8 and record["export"] == {"path": "/exports/fake/1",
                                                      "fingerprint": "fp"}

    again, reused = retrieval_index.load_or_build(index_dir, corpus, encoder, batch_size=3)
    assert reused and encoder.embedded == 3
    np.testing.assert_array_equal(again.vectors, built.vectors)
    assert again.texts == built.texts and again.lines == built.lines

    changed = _corpus(tmp_path, ["a cat", "a fish"])
    rebuilt, reused = retrieval_index.load_or_build(index_dir, changed, encoder, batch_size=2)
    assert not reused and rebuilt.texts == ["a cat", "a fish"]
    np.testing.assert_array_equal(rebuilt.vectors[0], built.vectors[0])

    other = FakeEncoder()
    other.fingerprint = "another"
    _, reused = retrieval_index.load_or_build(index_dir, changed, other, batch_size=2)
    assert not reused and other.embedded == 2


def test_an_interrupted_build_leaves_nothing_a_rerun_trips_over(tmp_path, monkeypatch):
    index_dir = str(tmp_path / "index")
    encoder = FakeEncoder()
    first = _corpus(tmp_path, ["one", "two", "three"])
    retrieval_index.load_or_build(index_dir, first, encoder, batch_size=8)

    # The corpus changes and the rebuild dies while writing the record, after the new vectors.
    second = _corpus(tmp_path, ["uno", "dos", "tres"])
    real_dump = json.dump

    def failing_dump(obj, f, **kwargs):
        f.write("{\"format\": 1, \"cor")  # half a record, in its temporary file
        raise OSError("No space left on device")

    monkeypatch.setattr(json, "dump", failing_dump)
    with pytest.raises(OSError):
        retrieval_index.load_or_build(index_dir, second, encoder, batch_size=8)
    monkeypatch.setattr(json, "dump", real_dump)
    assert sorted(os.listdir(index_dir)) == ["vectors.npy"]  # no record, no temporary file

    # Back to the first corpus: the old record is gone, so the vectors of the second corpus are
    # not taken for the first's.
    encoder.embedded = 0
    index, reused = retrieval_index.load_or_build(index_dir, first, encoder, batch_size=8)
    assert not reused and encoder.embedded == 3
    np.testing.assert_array_equal(index.vectors, retrieval_index.normalize(encoder(first.texts)))

    # A killed build's temporary files (SIGKILL skips every cleanup) are removed by the next.
    stray = os.path.join(index_dir, ".vectors.npy.0123abcd.tmp")
    with open(stray, "wb") as f:
        f.write(b"\x93NUMPY half")
    os.unlink(os.path.join(index_dir, "index.json"))
    index, reused = retrieval_index.load_or_build(index_dir, first, encoder, batch_size=8)
    assert not reused and _leftovers(index_dir) == []
    _, reused = retrieval_index.load_or_build(index_dir, first, encoder, batch_size=8)
    assert reused


def test_a_matrix_that_does_not_match_its_record_is_rebuilt(tmp_path):
    index_dir = str(tmp_path / "index")
    corpus = _corpus(tmp_path, ["one", "two"])
    retrieval_index.load_or_build(index_dir, corpus, FakeEncoder(), batch_size=8)
    np.save(os.path.join(index_dir, "vectors.npy"), np.zeros((3, 8), np.float32))
    _, reused = retrieval_index.load_or_build(index_dir, corpus, FakeEncoder(), batch_size=8)
    assert not reused


def _record(index_dir):
    with open(os.path.join(index_dir, "index.json"), encoding="utf-8") as f:
        return json.load(f)


def test_vectors_edited_or_not_finite_are_rebuilt_not_searched(tmp_path):
    index_dir = str(tmp_path / "index")
    corpus = _corpus(tmp_path, ["one", "two", "three"])
    built, _ = retrieval_index.load_or_build(index_dir, corpus, FakeEncoder(), batch_size=8)
    vectors_file = os.path.join(index_dir, "vectors.npy")
    with open(vectors_file, "rb") as f:
        assert _record(index_dir)["vectors_sha256"] == hashlib.sha256(f.read()).hexdigest()

    # NaN rows of the same shape: the file is no longer the one the record was written with.
    nan_rows = np.array(built.vectors)
    nan_rows[1] = np.nan
    np.save(vectors_file, nan_rows)
    encoder = FakeEncoder()
    rebuilt, reused = retrieval_index.load_or_build(index_dir, corpus, encoder, batch_size=8)
    assert not reused and encoder.embedded == 3 and np.all(np.isfinite(rebuilt.vectors))

    # The same, with the record's checksum edited to match: caught as not finite.
    np.save(vectors_file, nan_rows)
    record = _record(index_dir)
    with open(vectors_file, "rb") as f:
        record["vectors_sha256"] = hashlib.sha256(f.read()).hexdigest()
    with open(os.path.join(index_dir, "index.json"), "w", encoding="utf-8") as f:
        json.dump(record, f)
    why, index = retrieval_index._why_stale(index_dir, corpus, record["export"])
    assert index is None and why == "its vectors.npy holds numbers that are not finite"


# The end to end runs: a tiny sentence_encoder export made here.

WORDS = ["cat", "dog", "bird", "fish", "runs", "sleeps", "eats", "swims", "the", "a", "small",
         "big", "red", "blue", "house", "tree", "water", "sky", "fast", "slow"]


@pytest.fixture(scope="module")
def export(tmp_path_factory):
    import keras

    from official.configs import BertConfig
    from official.export import saving
    from official.export.sentence_encoder import SentenceEncoderExport
    from official.modeling.encoder import build_encoder
    from official.modeling.models import BertSentenceEncoder
    from official.text.tokenizer import FullTokenizer

    root = tmp_path_factory.mktemp("semantic_search")
    vocab = root / "vocab.txt"
    vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "."] + WORDS)
                     + "\n", encoding="utf-8")
    keras.utils.set_random_seed(3)
    config = BertConfig(vocab_size=len(WORDS) + 6, hidden_size=16, num_hidden_layers=1,
                        num_attention_heads=2, intermediate_size=32,
                        max_position_embeddings=32)
    model = BertSentenceEncoder(build_encoder(config), "mean", True)
    module = SentenceEncoderExport(model, FullTokenizer(str(vocab)), max_seq_length=16)
    export_dir = str(root / "export")
    saving.save(module, export_dir, module.signatures())

    rng = np.random.default_rng(0)
    corpus = [" ".join(rng.choice(WORDS, size=rng.integers(2, 7))) for _ in range(40)]
    corpus[10] = ""  # an empty line: skipped, line numbers kept
    queries = [" ".join(rng.choice(WORDS, size=3)) for _ in range(6)]
    (root / "corpus.txt").write_text("\n".join(corpus) + "\n", encoding="utf-8")
    (root / "queries.txt").write_text("\n".join(queries) + "\n", encoding="utf-8")
    return {"dir": export_dir, "root": root, "corpus": corpus, "queries": queries}


def _own_vectors(export_dir, texts):
    import tensorflow as tf

    from official.export.versions import newest_version

    serve = tf.saved_model.load(newest_version(export_dir)).signatures["serving_default"]
    vectors = serve(text=tf.constant(texts))["embeddings"].numpy().astype(np.float64)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def test_cli_results_equal_numpy_cosine_top_k_over_the_exports_vectors(export):
    root, output = export["root"], export["root"] / "results.jsonl"
    flags = ["--export_dir", export["dir"], "--corpus_file", root / "corpus.txt",
             "--queries_file", root / "queries.txt", "--top_k", 5, "--batch_size", 64,
             "--output_file", output]
    cli.succeeded(cli.run_module("run_scripts.semantic_search", *flags))
    with open(output, encoding="utf-8") as f:
        results = [json.loads(line) for line in f]

    lines = [i + 1 for i, text in enumerate(export["corpus"]) if text]
    texts = [export["corpus"][i - 1] for i in lines]
    corpus = _own_vectors(export["dir"], texts)
    queries = _own_vectors(export["dir"], export["queries"])
    want_rows, want_scores = reference_top_k(queries, corpus, 5)
    assert [r["query"] for r in results] == export["queries"]
    for result, rows, scores in zip(results, want_rows, want_scores):
        assert [hit["rank"] for hit in result["results"]] == [1, 2, 3, 4, 5]
        assert [hit["line"] for hit in result["results"]] == [lines[i] for i in rows]
        assert [hit["text"] for hit in result["results"]] == [texts[i] for i in rows]
        np.testing.assert_allclose([hit["score"] for hit in result["results"]], scores,
                                   atol=1e-5)

    # Rerun on the version folder itself, printing: the index beside the corpus is reused, and
    # top_k beyond the corpus returns every text, said once.
    version = os.path.join(export["dir"], os.listdir(export["dir"])[0])
    stamp = os.path.getmtime(root / "corpus.txt.index" / "vectors.npy")
    run = cli.succeeded(cli.run_module(
        "run_scripts.semantic_search", "--export_dir", version, "--corpus_file",
        root / "corpus.txt", "--queries_file", root / "queries.txt", "--top_k", 100))
    assert "reusing the index" in run.stderr
    assert run.stderr.count("every text is returned") == 1
    assert os.path.getmtime(root / "corpus.txt.index" / "vectors.npy") == stamp
    printed = run.stdout.splitlines()
    assert printed[0] == f"query: {export['queries'][0]}"
    assert len(printed) == len(export["queries"]) * (1 + len(texts))


def test_cli_refuses_a_missing_queries_file_and_top_k_0_before_any_work(export, tmp_path):
    root = export["root"]
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("a cat\n", encoding="utf-8")
    common = ["--export_dir", export["dir"], "--corpus_file", corpus]
    cli.refused(cli.run_module("run_scripts.semantic_search", *common,
                               "--queries_file", tmp_path / "missing.txt"),
                "semantic_search: --queries_file=", "missing.txt: no such file")
    cli.refused(cli.run_module("run_scripts.semantic_search", *common,
                               "--queries_file", root / "queries.txt", "--top_k", 0),
                "semantic_search: --top_k=0: must be at least 1")
    assert sorted(os.listdir(tmp_path)) == ["corpus.txt"]  # no index made


def test_cli_index_ann_probing_every_list_equals_exact_and_is_reused(export, tmp_path):
    root, output = export["root"], tmp_path / "results.jsonl"
    corpus = tmp_path / "corpus.txt"
    corpus.write_bytes((root / "corpus.txt").read_bytes())
    flags = ["--export_dir", export["dir"], "--corpus_file", corpus, "--queries_file",
             root / "queries.txt", "--top_k", 5, "--index", "ann", "--ann_lists", 4,
             "--ann_probe", 4, "--ann_rerank", 39, "--output_file", output]
    run = cli.succeeded(cli.run_module("run_scripts.semantic_search", *flags))
    assert "building the approximate index" in run.stderr
    with open(output, encoding="utf-8") as f:
        results = [json.loads(line) for line in f]
    lines = [i + 1 for i, text in enumerate(export["corpus"]) if text]
    texts = [export["corpus"][i - 1] for i in lines]
    want_rows, want_scores = reference_top_k(_own_vectors(export["dir"], export["queries"]),
                                             _own_vectors(export["dir"], texts), 5)
    for result, rows, scores in zip(results, want_rows, want_scores):
        assert [hit["line"] for hit in result["results"]] == [lines[i] for i in rows]
        np.testing.assert_allclose([hit["score"] for hit in result["results"]], scores,
                                   atol=1e-5)

    # Fewer lists probed and rows re-ranked: the same files reused, each result still a line of
    # the corpus.
    index_dir = tmp_path / "corpus.txt.index"
    stamp = os.path.getmtime(index_dir / "ann.faiss")
    run = cli.succeeded(cli.run_module("run_scripts.semantic_search", *flags[:-6],
                                       "--ann_probe", 1, "--output_file", output))
    assert "reusing the approximate index" in run.stderr
    assert os.path.getmtime(index_dir / "ann.faiss") == stamp
    with open(output, encoding="utf-8") as f:
        assert all(hit["text"] == texts[lines.index(hit["line"])]
                   for line in f for hit in json.loads(line)["results"])


@pytest.mark.parametrize("flags, error", [
    (["--ann_probe", -1], "--ann_probe=-1: must be 0 (automatic) or more"),
    (["--ann_rerank", 0], "--ann_rerank=0: must be at least 1"),
    (["--ann_lists", 40], "--ann_lists=40: must be 0 (automatic) or 1 to the corpus's 39"),
    (["--ann_lists", -1], "--ann_lists=-1: must be 0"),
    (["--ann_lists", 4, "--ann_probe", 5], "--ann_probe=5: more than --ann_lists=4"),
])
def test_cli_refuses_bad_ann_parameters_before_any_work(export, tmp_path, flags, error):
    corpus = tmp_path / "corpus.txt"
    corpus.write_bytes((export["root"] / "corpus.txt").read_bytes())
    cli.refused(cli.run_module("run_scripts.semantic_search", "--export_dir", export["dir"],
                               "--corpus_file", corpus, "--queries_file",
                               export["root"] / "queries.txt", "--index", "ann", *flags),
                f"semantic_search: {error}")
    assert sorted(os.listdir(tmp_path)) == ["corpus.txt"]  # no index made
