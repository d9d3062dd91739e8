"""The sentence-encoder export and sentence-transformers folders: a hand-built folder's settings
read and carried by convert_checkpoint, and the served vectors against the encoder run directly
and pooled in numpy, and against extract_features --pooling, through a client that imports only
TensorFlow."""

import concurrent.futures
import json
import os

import numpy as np
import pytest

from official.checkpoints import hf, sentence_transformers, tf1
from official.checkpoints.errors import CheckpointError
from official.configs import BertConfig
from official.modeling.encoder import build_encoder
from official.sentence_settings import SentenceSettings
from tests.cli import refused, run_module, serve_requests, succeeded

WORDS = ["the", "cat", "sat", "on", "a", "mat", "dog", "ran", "far", "away"]
TEXTS = ["the cat sat on the mat", "a dog ran far away", "cat", "",
         " ".join(["the dog ran away on a mat"] * 6)]  # 42 tokens: cut at the folder's 16


def write_folder(path, pooling="pooling_mode_mean_tokens", normalize=True):
    """A sentence-transformers folder: a tiny random BERT in Hugging Face's files, its vocab,
    modules.json, 1_Pooling/config.json and sentence_bert_config.json (max_seq_length 16)."""
    config = BertConfig(vocab_size=5 + len(WORDS), hidden_size=16, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=32, max_position_embeddings=64,
                        hidden_act="gelu_exact")
    encoder = build_encoder(config)
    os.makedirs(path / "1_Pooling")
    hf.write(str(path), config, tf1.weights_of(encoder))
    (path / "vocab.txt").write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]",
                                               *WORDS]) + "\n")
    modules = [{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models."
                "Transformer"},
               {"idx": 1, "name": "1", "path": "1_Pooling",
                "type": "sentence_transformers.models.Pooling"}]
    if normalize:
        modules.append({"idx": 2, "name": "2", "path": "2_Normalize",
                        "type": "sentence_transformers.models.Normalize"})
    (path / "modules.json").write_text(json.dumps(modules))
    modes = {name: name == pooling for name in (
        "pooling_mode_cls_token", "pooling_mode_mean_tokens", "pooling_mode_max_tokens",
        "pooling_mode_mean_sqrt_len_tokens")}
    (path / "1_Pooling" / "config.json").write_text(json.dumps(
        dict(word_embedding_dimension=16, **modes)))
    (path / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 16}))
    return encoder


def test_a_folders_settings(tmp_path):
    write_folder(tmp_path / "st")
    assert sentence_transformers.read_folder(str(tmp_path / "st")) == \
        SentenceSettings("mean", True, 16)
    write_folder(tmp_path / "sqrt", pooling="pooling_mode_mean_sqrt_len_tokens", normalize=False)
    with pytest.raises(CheckpointError, match="1_Pooling/config.json: pooling "
                                              "pooling_mode_mean_sqrt_len_tokens"):
        sentence_transformers.read_folder(str(tmp_path / "sqrt"))
    assert sentence_transformers.read_folder(str(tmp_path)) is None  # no modules.json


def reference(encoder, texts, max_seq_length, pooling="mean", normalize=True):
    """The encoder run on each text alone ([CLS] text [SEP], cut), pooled in numpy."""
    vocab = {w: i + 5 for i, w in enumerate(WORDS)}
    vectors = []
    for text in texts:
        ids = [2, *[vocab[w] for w in text.split()][:max_seq_length - 2], 3]
        ids = np.array([ids], np.int32)
        tokens = encoder({"input_word_ids": ids, "input_mask": np.ones_like(ids),
                          "input_type_ids": np.zeros_like(ids)})["sequence_output"].numpy()[0]
        vector = {"mean": tokens.mean(0), "cls": tokens[0], "max": tokens.max(0)}[pooling]
        vectors.append(vector / np.linalg.norm(vector) if normalize else vector)
    return np.stack(vectors)


def serve(tmp_path, exports):
    """{name: vectors} of each export {name: (export_dir, texts)}, in one client process."""
    requests = [{"name": name, "path": str(export_dir / os.listdir(export_dir)[0]),
                 "method": "signatures.serving_default", "kwargs": {"text": texts}}
                for name, (export_dir, texts) in exports.items()]
    results = serve_requests(requests, tmp_path)
    return {name: np.array(results[name]["embeddings"]) for name in exports}


def side_by_side(*commands):
    """Runs each (function, args) at once (each a process of its own); their results."""
    with concurrent.futures.ThreadPoolExecutor(len(commands)) as pool:
        return [future.result() for future in
                [pool.submit(function, *args) for function, *args in commands]]


def export(folder, export_dir, *flags):
    return run_module("run_scripts.export_saved_model", "--export_type=sentence_encoder",
                      f"--init_checkpoint={folder}", f"--vocab_file={folder / 'vocab.txt'}",
                      f"--export_dir={export_dir}", *flags)


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """A folder exported with its settings and with flags overriding them, the folder converted
    to TF2 and exported, and extract_features on the converted one: the exports served by one
    client process (the two tests below read its results)."""
    root = tmp_path_factory.mktemp("sentence_encoder")
    folder, converted = root / "st", root / "tf2"
    encoder = write_folder(folder)
    # The second's flags override the folder: [CLS] vectors, not normalised, 64 tokens.
    for result in side_by_side((export, folder, root / "export"),
                               (export, folder, root / "cls", "--pooling=cls",
                                "--normalize=false", "--max_seq_length=64"),
                               (run_module, "run_scripts.convert_checkpoint",
                                "--input_format=hf", f"--input={folder}",
                                f"--output_dir={converted}")):
        succeeded(result)
    (root / "in.txt").write_text("\n".join(TEXTS[:3]) + "\n")
    for result in side_by_side(
            (export, converted, root / "converted_export", "--normalize=false"),
            (run_module, "run_scripts.extract_features", f"--input_file={root / 'in.txt'}",
             f"--output_file={root / 'out.jsonl'}", f"--vocab_file={folder / 'vocab.txt'}",
             f"--bert_config_file={converted / 'bert_config.json'}",
             f"--init_checkpoint={converted}", "--layers=-1", "--pooling=mean",
             "--max_seq_length=16")):
        succeeded(result)
    vectors = serve(root, {"folder": (root / "export", TEXTS), "flags": (root / "cls", TEXTS),
                           "converted": (root / "converted_export", TEXTS[:3])})
    return {"encoder": encoder, "converted": converted, "vectors": vectors,
            "features": root / "out.jsonl"}


def test_the_export_serves_the_folders_vectors(served):
    encoder, vectors = served["encoder"], served["vectors"]
    np.testing.assert_allclose(vectors["folder"], reference(encoder, TEXTS, 16), atol=1e-5)
    np.testing.assert_allclose(vectors["flags"], reference(encoder, TEXTS, 64, "cls", False),
                               atol=1e-5)


def test_converted_folder_keeps_its_settings_and_equals_extract_features(served):
    assert sentence_transformers.read_record(str(served["converted"])) == \
        SentenceSettings("mean", True, 16)
    lines = [json.loads(line) for line in served["features"].read_text().splitlines()]
    pooled = np.array([line["pooled"]["layers"][0]["values"] for line in lines])
    np.testing.assert_allclose(served["vectors"]["converted"], pooled, atol=1e-6)


def test_a_pooling_the_project_does_not_compute_is_one_line(tmp_path):
    folder = tmp_path / "sqrt"
    write_folder(folder, pooling="pooling_mode_mean_sqrt_len_tokens")
    refused(export(folder, tmp_path / "export"), "1_Pooling/config.json",
            "pooling_mode_mean_sqrt_len_tokens")
    assert not (tmp_path / "export").exists()


def test_a_length_beyond_the_models_positions_is_blamed_on_the_file_that_says_it(tmp_path):
    """max_seq_length 4096 in a checkpoint's sentence_encoder.json and in a sentence-transformers
    folder's sentence_bert_config.json, for a model of 64 positions: refused before TensorFlow
    loads, naming the file and its key beside the config's limit."""
    folder, checkpoint = tmp_path / "st", tmp_path / "checkpoint"
    encoder = write_folder(folder)
    (folder / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 4096}))
    checkpoint.mkdir()
    tf1.write(tf1.weights_of(encoder), str(checkpoint / "bert_model.ckpt"))
    encoder.config.to_json_file(str(checkpoint / "bert_config.json"))
    (checkpoint / "vocab.txt").write_bytes((folder / "vocab.txt").read_bytes())
    (checkpoint / "sentence_encoder.json").write_text(json.dumps({"max_seq_length": 4096}))
    in_folder, beside_checkpoint = side_by_side((export, folder, tmp_path / "a"),
                                                (export, checkpoint, tmp_path / "b"))
    refused(in_folder, f"export_saved_model: {folder / 'sentence_bert_config.json'}: "
            f"max_seq_length=4096 is more than the max_position_embeddings=64 of "
            f"{folder / 'config.json'}")
    refused(beside_checkpoint, f"export_saved_model: {checkpoint / 'sentence_encoder.json'}: "
            f"max_seq_length=4096 is more than the max_position_embeddings=64 of "
            f"{checkpoint / 'bert_config.json'}")
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


@pytest.mark.parametrize("text, message", [
    ('{"pooling": "median"}', "pooling must be one of mean, cls, max, got 'median'"),
    ('{"pooling": "mean", "normalize": "l2"}', "field normalize must be a bool or null, got 'l2'"),
    ('{"pooling": "cls", "max_seq_length": "128"}', "field max_seq_length must be an integer or "
                                                    "null, got '128'"),
])
def test_a_sentence_encoder_record_is_checked_field_by_field(tmp_path, text, message):
    (tmp_path / "sentence_encoder.json").write_text(text)
    with pytest.raises(ValueError) as raised:
        sentence_transformers.settings_of(str(tmp_path / "bert_model.ckpt"))
    assert str(raised.value) == f"{tmp_path / 'sentence_encoder.json'}: {message}"
