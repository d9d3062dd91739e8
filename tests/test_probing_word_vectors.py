"""Tests for official.probing.word_vectors: every layer's word vectors, against extract_features'
JSON (the same words, rounded to 6 decimals) and the encoder's own embedding layer."""

import json
import os

import keras
import numpy as np
import pytest

from official.configs import BertConfig
from official.modeling.encoder import build_encoder
from official.probing import word_vectors as wv
from official.tasks import feature_extraction
from official.text.tokenizer import FullTokenizer

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "the", "dog", "sat", "on", "mat", "a", "cat",
         "jack", "##son", "##ville", "is", "big", "."]
SENTENCES = [["the", "dog", "sat"], ["jacksonville", "is", "big", "."],
             # 14 pieces: longer than the rows of max_seq_length 8, read in windows
             ["the", "cat", "sat", "on", "the", "mat", "jacksonville", "is", "a", "big", "dog",
              "."]]


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    folder = tmp_path_factory.mktemp("wv")
    vocab = folder / "vocab.txt"
    vocab.write_text("\n".join(VOCAB) + "\n", encoding="utf-8")
    config = BertConfig(vocab_size=len(VOCAB), hidden_size=16, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=32, max_position_embeddings=32)
    keras.utils.set_random_seed(3)
    encoder = build_encoder(config)
    return folder, FullTokenizer(str(vocab), do_lower_case=True), encoder


def _extract(folder, tokenizer, encoder, max_seq_length, doc_stride):
    """extract_features' per-token vectors of each sentence: {layer index: [tokens, hidden]}."""
    lines = folder / "in.txt"
    lines.write_text("\n".join(" ".join(s) for s in SENTENCES) + "\n", encoding="utf-8")
    out = folder / "out.jsonl"
    feature_extraction.extract_features(
        feature_extraction.read_examples(str(lines), single_texts=True), str(out), encoder,
        tokenizer, [0, 1], max_seq_length=max_seq_length, batch_size=2, doc_stride=doc_stride)
    result = []
    for line in open(out, encoding="utf-8"):
        features = json.loads(line)["features"]
        result.append({index: np.array([[v for layer in f["layers"] if layer["index"] == index
                                          for v in layer["values"]] for f in features])
                       for index in (0, 1)})
    return result


def test_vectors_equal_extract_features_and_the_embedding_layer(setup):
    folder, tokenizer, encoder = setup
    words = sum(len(s) for s in SENTENCES)
    for max_seq_length, stride in ((32, 8), (8, 3)):  # in one row; in windows
        expected = _extract(folder, tokenizer, encoder, max_seq_length, stride)
        for pool in ("first", "mean"):
            out = np.zeros((3, words, 16), np.float32)
            wv.word_vectors(SENTENCES, tokenizer, wv.layer_function(encoder), out,
                            max_seq_length, stride, batch_size=2, subword_pool=pool)
            word = 0
            for sentence, tokens in zip(SENTENCES, expected):
                position = 1  # after [CLS]
                for w in sentence:
                    n = len(tokenizer.tokenize(w))
                    for layer in (1, 2):  # transformer layer l is extract_features' index l - 1
                        pieces = tokens[layer - 1][position:position + n]
                        want = pieces[0] if pool == "first" else pieces.mean(axis=0)
                        np.testing.assert_allclose(out[layer, word], want, atol=1e-6)
                    position += n
                    word += 1
    # Layer 0 is the embedding layer's output for the sentence alone in one row.
    ids = np.array([[2] + [VOCAB.index(w) for w in SENTENCES[0]] + [3]], np.int32)
    embedded = np.asarray(encoder.embeddings(ids, np.zeros_like(ids)))
    out = np.zeros((3, 3, 16), np.float32)
    wv.word_vectors(SENTENCES[:1], tokenizer, wv.layer_function(encoder), out, 32, 8)
    np.testing.assert_allclose(out[0], embedded[0, 1:4], atol=1e-6)


def test_cache_is_read_back_and_keyed_on_every_setting(setup, tmp_path):
    _, tokenizer, encoder = setup
    data = tmp_path / "split.conllu"
    data.write_text("anything", encoding="utf-8")
    key = wv.cache_key("sha256:x", tokenizer, str(data), 3, 32, 8, "first")
    assert key != wv.cache_key("sha256:y", tokenizer, str(data), 3, 32, 8, "first")
    assert key != wv.cache_key("sha256:x", tokenizer, str(data), 3, 32, 8, "mean")
    assert key != wv.cache_key("sha256:x", tokenizer, str(data), 3, 16, 8, "first")
    leftover = tmp_path / f".{key}.npy.abc{wv.TEMP_SUFFIX}"
    leftover.write_text("half", encoding="utf-8")
    wv.remove_leftovers(str(tmp_path))
    assert not leftover.exists()
    args = (SENTENCES[:2], tokenizer, wv.layer_function(encoder), 3, 16, 32, 8, 2, "first")
    first = np.array(wv.cached_word_vectors(str(tmp_path), key, *args))
    assert sorted(os.listdir(tmp_path)) == sorted([f"{key}.npy", "split.conllu"])

    def refuse(*_):
        raise AssertionError("the encoder ran again")

    again = wv.cached_word_vectors(str(tmp_path), key, SENTENCES[:2], tokenizer, refuse, 3, 16,
                                   32, 8, 2, "first")
    np.testing.assert_array_equal(again, first)
    with pytest.raises(ValueError, match="holds vectors of shape"):
        wv.cached_word_vectors(str(tmp_path), key, SENTENCES, tokenizer, refuse, 3, 16, 32, 8,
                               2, "first")


def test_a_cached_vector_that_is_not_finite_is_refused_naming_layer_and_word(tmp_path):
    vectors = np.zeros((2, 5, 3), np.float32)
    vectors[1, 3, 2] = np.inf
    np.save(tmp_path / "key.npy", vectors)
    with pytest.raises(ValueError, match=r"key.npy: the vector of word 3 at layer 1 is not "
                                         r"finite"):
        wv.cached_word_vectors(str(tmp_path), "key", [["a", "b"], ["c", "d", "e"]], None, None,
                               num_layers=2, hidden=3, max_seq_length=16, doc_stride=0,
                               batch_size=8, subword_pool="first")
