"""official/retrieval/ann: the approximate index beside the exact one.

Its results are checked against a brute-force float64 numpy reference (every list probed and
every row re-ranked: exact search's results; and the same over the rows of the probed lists
alone, a row's list being its nearest centroid, when the re-ranking covers them); its reuse,
rebuild and integrity rules on files edited by hand, as index.py's are. The entry point's
--index=ann is in tests/test_semantic_search.py.
"""

import json
import os

import numpy as np
import pytest

from official.retrieval import ann
from official.retrieval import index as retrieval_index


def reference_top_k(queries, corpus, k):
    """Brute force: every score in float64, sorted by score down then corpus row up."""
    scores = np.asarray(queries, np.float64) @ np.asarray(corpus, np.float64).T
    rows = np.array([np.lexsort((np.arange(len(corpus)), -row))[:k] for row in scores])
    return rows, np.take_along_axis(scores, rows, axis=1)


def embed(texts):
    """A fake encoder: a vector of 16 numbers per text, seeded by the text's characters."""
    return np.stack([np.random.default_rng([ord(c) for c in t]).normal(size=16)
                     for t in texts]).astype(np.float32)


embed.path, embed.fingerprint = "/exports/fake/1", "fp"


def exact_index(tmp_path, count=600, name="corpus.txt"):
    """An exact index of `count` texts in tmp_path/index (index.load_or_build's)."""
    corpus = tmp_path / name
    corpus.write_text("".join(f"text number {i}\n" for i in range(count)), encoding="utf-8")
    index, _ = retrieval_index.load_or_build(str(tmp_path / "index"),
                                             retrieval_index.read_texts(str(corpus)), embed,
                                             batch_size=256)
    return index


def queries(count=40, seed=5):
    return retrieval_index.normalize(np.random.default_rng(seed).normal(size=(count, 16)))


def test_default_lists_are_the_square_root_with_39_rows_a_list():
    assert ann.default_lists(1_000_000) == 1000
    assert ann.default_lists(1_000) == 25  # 32 lists would hold 31 rows each
    assert ann.default_lists(600) == 15 and ann.default_lists(20) == 1
    assert ann.pieces(384) == 192 and ann.pieces(7) == 7
    assert ann.default_probe(1000) == 250 and ann.default_probe(15) == 4


def test_every_list_probed_and_row_reranked_gives_exact_searchs_results(tmp_path):
    index = exact_index(tmp_path)
    for lists in (0, 12):
        built, _ = ann.load_or_build(str(tmp_path / "index"), index, ann.AnnParams(lists))
        for k in (1, 10, 600, 900):
            rows, scores = ann.top_k(built, queries(), k, probe=built.lists, rerank=600)
            want_rows, want_scores = reference_top_k(queries(), index.vectors, min(k, 600))
            np.testing.assert_array_equal(rows, want_rows)
            np.testing.assert_allclose(scores, want_scores, atol=1e-6)
            assert rows.dtype == np.int64 and scores.dtype == np.float32


def test_fewer_lists_probed_find_the_best_rows_of_the_probed_lists(tmp_path):
    # The re-ranking covers every row of the probed lists, so it is their exact top-k.
    index = exact_index(tmp_path)
    built, _ = ann.load_or_build(str(tmp_path / "index"), index, ann.AnnParams(lists=12))
    vectors = np.asarray(index.vectors, np.float64)
    centroids = built.faiss_index.quantizer.reconstruct_n(0, 12).astype(np.float64)
    home = np.argmax(vectors @ centroids.T, axis=1)  # each row's list
    for probe in (1, 3, 0):  # 0: a quarter of the 12 lists
        rows, scores = ann.top_k(built, queries(), 8, probe, rerank=600)
        for query, got_rows, got_scores in zip(queries(), rows, scores):
            probed = np.argsort(-(centroids @ query))[:probe or 3]
            candidates = np.flatnonzero(np.isin(home, probed))
            want = candidates[reference_top_k(query[None], vectors[candidates], 8)[0][0]]
            want = np.concatenate([want, np.full(8 - len(want), -1)])
            np.testing.assert_array_equal(got_rows, want)
            found = got_rows >= 0
            np.testing.assert_allclose(got_scores[found], vectors[got_rows[found]] @ query,
                                       atol=1e-6)
            assert np.all(np.isneginf(got_scores[~found]))


def test_equal_scores_come_lower_row_first(tmp_path):
    # Small integers: every dot product is exact in float32, so equal scores are equal.
    rng = np.random.default_rng(1)
    corpus = rng.integers(-2, 3, size=(6, 8)).astype(np.float32)[rng.integers(0, 6, size=120)]
    index = retrieval_index.Index(corpus, list(range(120)), ["t"] * 120,
                                  {"vectors_sha256": "made here"})
    built = ann.build(str(tmp_path), index, ann.AnnParams(lists=3))
    query = rng.integers(-2, 3, size=(20, 8)).astype(np.float32)
    rows, scores = ann.top_k(built, query, 120, probe=3, rerank=120)
    want_rows, want_scores = reference_top_k(query, corpus, 120)
    np.testing.assert_array_equal(rows, want_rows)
    np.testing.assert_array_equal(scores, want_scores)


def _files(index_dir):
    with open(os.path.join(index_dir, ann.ANN_FILE), "rb") as f:
        data = f.read()
    with open(os.path.join(index_dir, ann.ANN_RECORD), encoding="utf-8") as f:
        return data, json.load(f)


def test_reused_when_unchanged_rebuilt_when_the_vectors_or_lists_change(tmp_path):
    index_dir = str(tmp_path / "index")
    index = exact_index(tmp_path)
    _, reused = ann.load_or_build(index_dir, index, ann.AnnParams())
    data, record = _files(index_dir)
    assert not reused and record["lists"] == 15 and record["count"] == 600
    assert record["vectors_sha256"] == index.record["vectors_sha256"]

    # The same vectors and lists: the same bytes (a rebuild elsewhere), and reused here.
    elsewhere = ann.build(str(tmp_path), index, ann.AnnParams())
    assert _files(str(tmp_path)) == (data, record) and elsewhere.lists == 15
    again, reused = ann.load_or_build(index_dir, index, ann.AnnParams())
    assert reused and again.faiss_index.ntotal == 600
    _, reused = ann.load_or_build(index_dir, index, ann.AnnParams(lists=15))
    assert reused  # 15 is what 0 means here

    _, reused = ann.load_or_build(index_dir, index, ann.AnnParams(lists=7))
    assert not reused and _files(index_dir)[1]["lists"] == 7

    # The corpus changes: index.py rebuilds the vectors, so the approximate index follows.
    changed = exact_index(tmp_path, count=500, name="other.txt")
    rebuilt, reused = ann.load_or_build(index_dir, changed, ann.AnnParams(lists=7))
    assert not reused and rebuilt.faiss_index.ntotal == 500


def _rewrite(index_dir, data, fix_record):
    """ann.faiss replaced by `data`; with fix_record, its record's sha256 edited to match."""
    with open(os.path.join(index_dir, ann.ANN_FILE), "wb") as f:
        f.write(data)
    if fix_record:
        record = _files(index_dir)[1]
        record["file_sha256"] = ann._sha256(os.path.join(index_dir, ann.ANN_FILE))
        with open(os.path.join(index_dir, ann.ANN_RECORD), "w", encoding="utf-8") as f:
            json.dump(record, f)


def test_a_file_edited_truncated_or_not_finite_is_rebuilt_not_searched(tmp_path):
    index_dir = str(tmp_path / "index")
    index = exact_index(tmp_path)
    built, _ = ann.load_or_build(index_dir, index, ann.AnnParams())
    data, _ = _files(index_dir)
    wanted = ann._wanted(index, ann.AnnParams())

    # A list centroid's first number made NaN (the centroids are stored as float32 rows).
    centroid = built.faiss_index.quantizer.reconstruct(3)
    start = data.index(centroid.tobytes())
    nan_data = data[:start] + np.float32(np.nan).tobytes() + data[start + 4:]
    cases = [(nan_data, False, "its ann.faiss changed since ann.json was written"),
             (nan_data, True, "its ann.faiss holds numbers that are not finite"),
             (data[:len(data) // 2], True, "its ann.faiss is unreadable")]
    for edited, fix_record, why in cases:
        _rewrite(index_dir, edited, fix_record)
        assert ann._why_stale(index_dir, wanted)[0].startswith(why)
        _, reused = ann.load_or_build(index_dir, index, ann.AnnParams())
        assert not reused and _files(index_dir)[0] == data


def test_an_interrupted_build_leaves_no_record_and_the_next_run_rebuilds(tmp_path, monkeypatch):
    index_dir = str(tmp_path / "index")
    index = exact_index(tmp_path)
    ann.load_or_build(index_dir, index, ann.AnnParams())
    data, _ = _files(index_dir)

    def failing_dump(obj, f, **kwargs):
        f.write("{\"format\": 1, \"vec")  # half a record, in its temporary file
        raise OSError("No space left on device")

    monkeypatch.setattr(ann.json, "dump", failing_dump)
    with pytest.raises(OSError):
        ann.load_or_build(index_dir, index, ann.AnnParams(lists=7))
    monkeypatch.undo()
    assert sorted(os.listdir(index_dir)) == ["ann.faiss", "index.json", "vectors.npy"]

    # A killed build's temporary file is removed by the next build.
    stray = os.path.join(index_dir, ".ann.faiss.0123abcd.tmp")
    with open(stray, "wb") as f:
        f.write(b"half")
    _, reused = ann.load_or_build(index_dir, index, ann.AnnParams())
    assert not reused and not os.path.exists(stray) and _files(index_dir)[0] == data
    _, reused = ann.load_or_build(index_dir, index, ann.AnnParams())
    assert reused
