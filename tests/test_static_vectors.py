"""Tests for official.embeddings (static_vectors, word_similarity, word2vec_files' writer) and
the run_scripts.build_static_embeddings CLI."""

import dataclasses
import json

import keras
import numpy as np
import pytest
import scipy.stats

from official.checkpoints import tf2
from official.configs import BertConfig
from official.embeddings import static_vectors as sv
from official.embeddings import word_similarity as ws
from official.embeddings.word2vec_files import read_word2vec
from official.modeling.encoder import build_encoder
from official.tasks import glue_metrics
from official.text.tokenizer import FullTokenizer
from tests.cli import refused, run_module, succeeded

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "dog", "cat", "sat", "on", "mat",
         ".", ",", "jack", "##son", "##ville", "is", "big", "and", "a", "hairy", "##s"]
# "Jacksonville" is three WordPieces; "the" and "dog" occur in several lines, twice in one;
# "hairy" in none; "zebra" is [UNK].
CORPUS = ["The dog sat on the mat.", "Jacksonville is big, the dog is big", "a cat and the dog ."]
WORDS = ["the", "dog", "jacksonville", "mat", "hairy", "zebra"]


@pytest.fixture(scope="module")
def vocab_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("vocab") / "vocab.txt"
    path.write_text("\n".join(VOCAB) + "\n", encoding="utf-8")
    return str(path)


@pytest.fixture(scope="module")
def tokenizer(vocab_file):
    return FullTokenizer(vocab_file, do_lower_case=True)


@pytest.fixture(scope="module")
def config():
    return BertConfig(vocab_size=len(VOCAB), hidden_size=16, num_hidden_layers=2,
                      num_attention_heads=2, intermediate_size=32, max_position_embeddings=32,
                      type_vocab_size=2)


@pytest.fixture(scope="module")
def encoder(config):
    keras.utils.set_random_seed(1)
    return build_encoder(config)


@pytest.fixture
def corpus_file(tmp_path):
    path = tmp_path / "corpus.txt"
    path.write_text("\n".join(CORPUS) + "\n", encoding="utf-8")
    return str(path)


def every_layer(encoder, tokenizer, pieces):
    """The reference: the encoder's functional graph on the one row [CLS] pieces [SEP] (no
    padding), and its embedding layer for layer 0: float64 [layers, seq, hidden]."""
    ids = np.array([tokenizer.convert_tokens_to_ids(["[CLS]", *pieces, "[SEP]"])], np.int32)
    zeros = np.zeros_like(ids)
    outputs = encoder({"input_word_ids": ids, "input_mask": np.ones_like(ids),
                       "input_type_ids": zeros})
    layers = [encoder.embeddings(ids, zeros)] + list(outputs["encoder_outputs"])
    return np.stack([np.asarray(layer)[0] for layer in layers]).astype(np.float64)


def reference(encoder, tokenizer, lines, words, subword_pool, context_pool, max_contexts=100):
    """{word: [layers, hidden]} pooled in numpy, line by line and word by word."""
    subword = {"mean": lambda v: v.mean(1), "max": lambda v: v.max(1),
               "min": lambda v: v.min(1), "last": lambda v: v[:, -1]}[subword_pool]
    contexts = {w: [] for w in words}
    for line in lines:
        line_words = line.lower().replace(".", " . ").replace(",", " , ").split()
        pieces = [tokenizer.tokenize(w) for w in line_words]
        layers = every_layer(encoder, tokenizer, [p for word in pieces for p in word])
        position = 1
        for word, word_pieces in zip(line_words, pieces):
            span = layers[:, position:position + len(word_pieces)]
            if word in contexts and len(contexts[word]) < max_contexts:
                contexts[word].append(subword(span))
            position += len(word_pieces)
    context = {"mean": np.mean, "max": np.max, "min": np.min}[context_pool]
    return {w: context(np.stack(c), axis=0) for w, c in contexts.items() if c}


@pytest.mark.parametrize("subword_pool,context_pool",
                         [("mean", "mean"), ("max", "min"), ("last", "max"), ("min", "mean")])
def test_aggregated_vectors_match_numpy(encoder, tokenizer, corpus_file, subword_pool,
                                        context_pool):
    assert tokenizer.tokenize("Jacksonville") == ["jack", "##son", "##ville"]
    targets = sv.target_words(WORDS, tokenizer)
    assert targets.unknown == ["zebra"]
    # batch_size 2: a batch boundary between the lines, and two occurrences of "the" in a line.
    settings = sv.Settings(layers=(0, 1, 2), subword_pool=subword_pool,
                           context_pool=context_pool, batch_size=2)
    table = sv.aggregated_vectors(encoder, tokenizer, corpus_file, targets, settings)
    expected = reference(encoder, tokenizer, CORPUS, WORDS[:-1], subword_pool, context_pool)
    assert table.words == ["the", "dog", "jacksonville", "mat"]
    assert table.unmet == ["hairy"] and table.unknown == ["zebra"]
    assert table.contexts.tolist() == [4, 3, 1, 1]
    assert table.vectors.shape == (4, 3, 16)
    for i, word in enumerate(table.words):
        np.testing.assert_allclose(table.vectors[i], expected[word], rtol=1e-4, atol=1e-5)


def test_layer_choice_and_max_contexts(encoder, tokenizer, corpus_file):
    targets = sv.target_words(["the", "dog", "mat"], tokenizer)
    settings = sv.Settings(layers=(2, 0), max_contexts_per_word=2)
    table = sv.aggregated_vectors(encoder, tokenizer, corpus_file, targets, settings)
    expected = reference(encoder, tokenizer, CORPUS, ["the", "dog", "mat"], "mean", "mean",
                         max_contexts=2)
    assert table.contexts.tolist() == [2, 2, 1]  # "the" twice in line 1: both its first two
    for i, word in enumerate(table.words):
        np.testing.assert_allclose(table.vectors[i], expected[word][[2, 0]], rtol=1e-4,
                                   atol=1e-5)
    one = sv.aggregated_vectors(encoder, tokenizer, corpus_file, targets,
                                dataclasses.replace(settings, max_contexts_per_word=1))
    first = reference(encoder, tokenizer, CORPUS[:1], ["the", "dog", "mat"], "mean", "mean",
                      max_contexts=1)
    assert one.contexts.tolist() == [1, 1, 1]
    for i, word in enumerate(one.words):
        np.testing.assert_allclose(one.vectors[i], first[word][[2, 0]], rtol=1e-4, atol=1e-5)


def test_long_line_keeps_whole_words_within_max_seq_length(encoder, tokenizer, tmp_path):
    # max_seq_length 5: 3 pieces fit; "jacksonville" (3 pieces) after "the" is cut, not counted.
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("the jacksonville dog\n", encoding="utf-8")
    targets = sv.target_words(["the", "jacksonville", "dog"], tokenizer)
    table = sv.aggregated_vectors(encoder, tokenizer, str(corpus), targets,
                                  sv.Settings(layers=(1,), max_seq_length=5))
    assert table.words == ["the"] and table.unmet == ["jacksonville", "dog"]
    np.testing.assert_allclose(table.vectors[0, 0],
                               every_layer(encoder, tokenizer, ["the", "jack", "##son"])[1, 1],
                               rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("subword_pool", ["mean", "last"])
def test_decontextualized_is_the_word_alone(encoder, tokenizer, subword_pool):
    targets = sv.target_words(WORDS, tokenizer)
    table = sv.decontextualized_vectors(encoder, tokenizer, targets,
                                        sv.Settings(layers=(0, 1, 2), subword_pool=subword_pool,
                                                    batch_size=3))
    assert table.words == ["the", "dog", "jacksonville", "mat", "hairy"]
    for i, word in enumerate(table.words):
        pieces = tokenizer.tokenize(word)
        layers = every_layer(encoder, tokenizer, pieces)[:, 1:1 + len(pieces)]
        want = layers.mean(1) if subword_pool == "mean" else layers[:, -1]
        np.testing.assert_allclose(table.vectors[i], want, rtol=1e-4, atol=1e-5)


def test_word2vec_files_load_in_gensim(encoder, tokenizer, corpus_file, tmp_path):
    from gensim.models import KeyedVectors
    targets = sv.target_words(WORDS, tokenizer)
    table = sv.aggregated_vectors(encoder, tokenizer, corpus_file, targets,
                                  sv.Settings(layers=(0, 2)))
    paths = sv.write_word2vec(table, str(tmp_path / "out"), prefix="x_")
    assert [p.rsplit("/", 1)[1] for p in paths] == ["x_layer_00.txt", "x_layer_02.txt"]
    for j, path in enumerate(paths):
        loaded = KeyedVectors.load_word2vec_format(path, binary=False)
        assert list(loaded.index_to_key) == table.words
        np.testing.assert_array_equal(loaded.vectors, table.vectors[:, j])  # "%.9g": exact
        ours = read_word2vec(path)
        np.testing.assert_array_equal(np.stack(list(ours.values())), table.vectors[:, j])
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["x_layer_00.txt",
                                                                    "x_layer_02.txt"]


def test_a_table_with_a_vector_that_is_not_finite_writes_no_file(encoder, tokenizer,
                                                                  corpus_file, tmp_path):
    table = sv.aggregated_vectors(encoder, tokenizer, corpus_file,
                                  sv.target_words(WORDS, tokenizer), sv.Settings(layers=(0, 2)))
    table.vectors[table.words.index("mat"), 1, 5] = np.inf
    with pytest.raises(ValueError, match=r"^the vectors at layer 2: the vector of 'mat' holds "
                                         r"inf, not a finite number$"):
        sv.write_word2vec(table, str(tmp_path / "out"))
    assert not (tmp_path / "out").exists()  # not even layer 0's file, written first otherwise


def test_target_words(tokenizer, tmp_path):
    targets = sv.target_words(["Dog", "dog", "Jacksonville", "zebra"], tokenizer)
    assert targets.words == ["dog", "jacksonville"] and targets.unknown == ["zebra"]
    assert [p.tolist() for p in targets.pieces] == [[6], [13, 14, 15]]
    words = tmp_path / "words.txt"
    words.write_text("cat\n\nnew york\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"words.txt: line 3: 'new york' is 2 words"):
        sv.read_words_file(str(words), tokenizer)
    # The vocab's whole words: no ## pieces, no [X] specials.
    assert sv.vocab_words(tokenizer).words == [
        "the", "dog", "cat", "sat", "on", "mat", ".", ",", "jack", "is", "big", "and", "a",
        "hairy"]


def test_settings_validate(config):
    ok = sv.Settings(layers=(0, 2), max_seq_length=32)
    ok.validate(config)
    for changes, flag in [({"layers": (3,)}, "--layers: layer 3 is beyond"),
                          ({"layers": (1, 1)}, "--layers: a layer is listed twice"),
                          ({"max_contexts_per_word": 0}, "--max_contexts_per_word"),
                          ({"max_seq_length": 64}, "--max_seq_length"),
                          ({"subword_pool": "sum"}, "--subword_pool")]:
        with pytest.raises(ValueError, match=flag):
            dataclasses.replace(ok, **changes).validate(config)


def test_spearman_matches_scipy_with_ties():
    rng = np.random.default_rng(0)
    for n in (2, 5, 50, 353):
        x = rng.integers(0, 6, n).astype(float)  # many ties on both sides
        y = x + rng.integers(0, 4, n)
        assert ws.spearman(x, y) == pytest.approx(scipy.stats.spearmanr(x, y).statistic,
                                                  abs=1e-12)
        np.testing.assert_array_equal(glue_metrics.average_ranks(x), scipy.stats.rankdata(x))
    assert np.isnan(ws.spearman(np.array([1.0]), np.array([2.0])))
    assert np.isnan(ws.spearman(np.array([1.0, 1.0, 1.0]), np.array([1.0, 2.0, 3.0])))


def test_evaluate_counts_pairs_out_of_vocabulary(tmp_path):
    path = tmp_path / "pairs.tsv"
    path.write_text("word1\tword2\tscore\nTiger\tcat\t7.35\ntiger\tdog\t5\ncat\tdog\t6.5\n"
                    "cat\tzebra\t3\n", encoding="utf-8")
    pairs = ws.read_pairs(str(path))
    assert pairs[0] == ws.Pair("Tiger", "cat", 7.35) and len(pairs) == 4
    vectors = {"tiger": np.array([1.0, 0.0]), "cat": np.array([0.9, 0.1]),
               "dog": np.array([0.5, 0.5])}
    result = ws.evaluate(vectors, pairs, lower_case=True)
    assert (result.pairs_scored, result.pairs_oov) == (3, 1)
    cosines = [ws.cosine(vectors[a], vectors[b]) for a, b in
               [("tiger", "cat"), ("tiger", "dog"), ("cat", "dog")]]
    assert result.spearman == pytest.approx(
        scipy.stats.spearmanr(cosines, [7.35, 5, 6.5]).statistic)
    assert ws.evaluate(vectors, pairs, lower_case=False).pairs_oov == 2  # "Tiger" unknown
    # No header, spaces; a bad line names the file and line.
    path.write_text("a b 1\nc d x\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"pairs.tsv: line 2: expected"):
        ws.read_pairs(str(path))


@pytest.fixture
def checkpoint(tmp_path, encoder, config, vocab_file):
    folder = tmp_path / "model"
    folder.mkdir()
    config.to_json_file(str(folder / "bert_config.json"))
    (folder / "vocab.txt").write_text(open(vocab_file, encoding="utf-8").read(),
                                      encoding="utf-8")
    tf2.save(encoder, str(folder / "bert_model.ckpt"))
    return str(folder)


def test_cli_end_to_end(checkpoint, corpus_file, tmp_path, encoder, tokenizer):
    words = tmp_path / "words.txt"
    words.write_text("\n".join(WORDS) + "\n", encoding="utf-8")
    pairs = tmp_path / "sim.tsv"
    pairs.write_text("word1\tword2\tscore\nthe\tdog\t1\ndog\tmat\t3\nthe\tmat\t2\n"
                     "dog\tzebra\t5\n", encoding="utf-8")
    out = tmp_path / "out"
    result = succeeded(run_module(
        "run_scripts.build_static_embeddings", f"--init_checkpoint={checkpoint}",
        f"--corpus_file={corpus_file}", f"--words_file={words}", f"--output_dir={out}",
        "--decontextualized", f"--evaluate={pairs}", "--batch_size=2", "--max_seq_length=32"))
    assert sorted(p.name for p in out.iterdir()) == [
        "decontextualized_layer_00.txt", "decontextualized_layer_01.txt",
        "decontextualized_layer_02.txt", "evaluation.json", "layer_00.txt", "layer_01.txt",
        "layer_02.txt"]
    expected = reference(encoder, tokenizer, CORPUS, WORDS[:-1], "mean", "mean")
    layer_1 = read_word2vec(str(out / "layer_01.txt"))
    assert list(layer_1) == ["the", "dog", "jacksonville", "mat"]
    for word, vector in layer_1.items():
        np.testing.assert_allclose(vector, expected[word][1], rtol=1e-4, atol=1e-5)
    evaluation = json.loads((out / "evaluation.json").read_text())
    assert set(evaluation) == {"aggregated", "decontextualized"}
    scored = evaluation["aggregated"]["1"]["sim.tsv"]
    assert (scored["pairs_scored"], scored["pairs_oov"]) == (3, 1)
    assert "| aggregated | 1 |" in result.stdout and "sim.tsv Spearman" in result.stdout


def test_cli_bad_inputs(checkpoint, corpus_file, tmp_path):
    out = tmp_path / "out"
    refused(run_module("run_scripts.build_static_embeddings", f"--init_checkpoint={checkpoint}",
                       f"--corpus_file={tmp_path / 'missing.txt'}", f"--output_dir={out}"),
            "build_static_embeddings: --corpus_file:", "missing.txt", "no such file")
    refused(run_module("run_scripts.build_static_embeddings", f"--init_checkpoint={checkpoint}",
                       f"--corpus_file={corpus_file}", f"--output_dir={out}", "--layers=0,3"),
            "--layers: layer 3 is beyond the model's layers 0..2")
    assert not out.exists()


def test_cli_writes_nothing_when_the_checkpoint_gives_a_nan(tmp_path, encoder, config,
                                                           vocab_file, corpus_file):
    folder = tmp_path / "model"
    folder.mkdir()
    config.to_json_file(str(folder / "bert_config.json"))
    word_table = encoder.embeddings.word_embeddings
    saved = word_table.numpy()
    broken = saved.copy()
    broken[VOCAB.index("mat")] = np.nan  # every word sharing a line with "mat" gets nan too
    word_table.assign(broken)
    try:
        tf2.save(encoder, str(folder / "bert_model.ckpt"))
    finally:
        word_table.assign(saved)
    out = tmp_path / "out"
    refused(run_module("run_scripts.build_static_embeddings", f"--init_checkpoint={folder}",
                       f"--vocab_file={vocab_file}", f"--corpus_file={corpus_file}",
                       f"--output_dir={out}", "--layers=1,2",
                       "--decontextualized", "--max_seq_length=32"),
            f"build_static_embeddings: aggregated vectors of --init_checkpoint {folder} at "
            "layer 1: the vector of 'the' holds nan, not a finite number")
    assert not out.exists()
