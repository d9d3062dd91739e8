"""Tests for official.tasks.feature_extraction and the run_scripts.extract_features CLI."""

import json
import os

import numpy as np
import pytest

from official.checkpoints import tf2
from official.configs import BertConfig
from official.modeling.encoder import build_encoder
from official.tasks import feature_extraction as fe
from official.text.tokenizer import FullTokenizer
from tests.cli import run_module

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "dog", "is", "hairy", ".", ",",
         "hello", "world", "!", "jack", "##son", "##ville", "?", "no", "it", "not", "a", "b", "c",
         "d", "e", "f"]
ID = {token: i for i, token in enumerate(VOCAB)}


@pytest.fixture
def vocab_file(tmp_path):
    path = tmp_path / "vocab.txt"
    path.write_text("\n".join(VOCAB) + "\n", encoding="utf-8")
    return str(path)


@pytest.fixture
def tokenizer(vocab_file):
    return FullTokenizer(vocab_file, do_lower_case=True)


@pytest.fixture
def config():
    return BertConfig(vocab_size=len(VOCAB), hidden_size=32, num_hidden_layers=2,
                      num_attention_heads=4, intermediate_size=64, max_position_embeddings=16,
                      type_vocab_size=2)


def write_lines(path, lines):
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    return str(path)


def test_read_examples(tmp_path):
    path = write_lines(tmp_path / "in.txt", [
        b"Hello world!", b"the dog ||| is hairy", b"", b"a ||| b ||| c", b"  padded line \r",
        b"no|||pair"])
    assert fe.read_examples(path) == [
        fe.InputExample(0, "Hello world!"),
        fe.InputExample(1, "the dog", "is hairy"),
        fe.InputExample(2, ""),
        fe.InputExample(3, "a ||| b", "c"),  # The original's regex is greedy.
        fe.InputExample(4, "padded line"),
        fe.InputExample(5, "no|||pair"),
    ]


def test_read_examples_errors(tmp_path):
    with pytest.raises(ValueError, match=r"nowhere\.txt: no such input file"):
        fe.read_examples(str(tmp_path / "nowhere.txt"))
    path = write_lines(tmp_path / "latin1.txt", [b"fine", "caf\xe9".encode("latin-1")])
    with pytest.raises(ValueError, match=r"latin1\.txt: line 2: not valid UTF-8"):
        fe.read_examples(path)


def test_single_sentence_features(tokenizer):
    [feature] = fe.convert_examples_to_features(
        [fe.InputExample(7, "Hello, world!")], seq_length=8, tokenizer=tokenizer)
    assert feature.unique_id == 7
    assert feature.tokens == ["[CLS]", "hello", ",", "world", "!", "[SEP]"]
    assert feature.input_ids == [2, ID["hello"], ID[","], ID["world"], ID["!"], 3, 0, 0]
    assert feature.input_mask == [1, 1, 1, 1, 1, 1, 0, 0]
    assert feature.input_type_ids == [0] * 8


def test_single_sentence_is_cut_to_fit(tokenizer):
    [feature] = fe.convert_examples_to_features(
        [fe.InputExample(0, "a b c d e f")], seq_length=5, tokenizer=tokenizer)
    assert feature.tokens == ["[CLS]", "a", "b", "c", "[SEP]"]
    assert feature.input_mask == [1] * 5


def test_pair_features(tokenizer):
    [feature] = fe.convert_examples_to_features(
        [fe.InputExample(0, "is this jacksonville?", "no it is not.")], seq_length=16,
        tokenizer=tokenizer)
    assert feature.tokens == ["[CLS]", "is", "[UNK]", "jack", "##son", "##ville", "?", "[SEP]",
                              "no", "it", "is", "not", ".", "[SEP]"]
    assert feature.input_ids[:8] == [2, ID["is"], 1, ID["jack"], ID["##son"], ID["##ville"],
                                     ID["?"], 3]
    assert feature.input_type_ids == [0] * 8 + [1] * 6 + [0] * 2
    assert feature.input_mask == [1] * 14 + [0] * 2


@pytest.mark.parametrize("text_a, text_b, seq_length, kept_a, kept_b", [
    ("a b c d e", "f", 7, "a b c", "f"),        # 4 of 7 left for text: the longer loses tokens
    ("a b c", "d e f", 7, "a b", "d e"),        # a tie costs text_b first, then text_a
    ("a b c", "d e f", 8, "a b c", "d e"),
    ("a", "b c d e f", 6, "a", "b c"),
])
def test_pair_is_truncated_longer_first(tokenizer, text_a, text_b, seq_length, kept_a, kept_b):
    [feature] = fe.convert_examples_to_features(
        [fe.InputExample(0, text_a, text_b)], seq_length, tokenizer)
    assert feature.tokens == ["[CLS]", *kept_a.split(), "[SEP]", *kept_b.split(), "[SEP]"]
    assert len(feature.input_ids) == seq_length


def test_empty_text_b_makes_a_single_sentence(tokenizer):
    [feature] = fe.convert_examples_to_features(
        [fe.InputExample(0, "a b c d", "\u200b")], seq_length=5, tokenizer=tokenizer)
    assert feature.tokens == ["[CLS]", "a", "b", "c", "[SEP]"]


def test_json_output_matches_the_encoder(tmp_path, tokenizer, config):
    encoder = build_encoder(config)
    examples = [fe.InputExample(0, "Hello, world!"), fe.InputExample(1, "the dog", "is hairy."),
                fe.InputExample(2, "")]
    output = str(tmp_path / "out.jsonl")
    layers = [-1, 0]
    # batch_size 2 also covers a last, smaller batch.
    fe.extract_features(examples, output, encoder, tokenizer, layers, max_seq_length=10,
                        batch_size=2)

    with open(output, encoding="utf-8") as f:
        lines = [json.loads(line) for line in f]
    features = fe.convert_examples_to_features(examples, 10, tokenizer)
    outputs = encoder({"input_word_ids": np.array([f.input_ids for f in features], "int32"),
                       "input_mask": np.array([f.input_mask for f in features], "int32"),
                       "input_type_ids": np.array([f.input_type_ids for f in features], "int32")},
                      training=False)["encoder_outputs"]
    assert [line["linex_index"] for line in lines] == [0, 1, 2]
    for n, (line, feature) in enumerate(zip(lines, features)):
        assert list(line) == ["linex_index", "features"]
        assert [token["token"] for token in line["features"]] == feature.tokens
        for i, token in enumerate(line["features"]):
            assert list(token) == ["token", "layers"]
            assert [layer["index"] for layer in token["layers"]] == layers
            for layer in token["layers"]:
                assert list(layer) == ["index", "values"]
                assert len(layer["values"]) == config.hidden_size
                assert all(round(v, 6) == v for v in layer["values"])
                expected = np.asarray(outputs[layer["index"]])[n, i]
                np.testing.assert_allclose(layer["values"], expected, atol=1e-5)
    assert lines[2]["features"][1]["token"] == "[SEP]" and len(lines[2]["features"]) == 2


@pytest.mark.parametrize("kwargs, message", [
    ({"layer_indexes": [-3]}, r"layers: index -3 is out of range .* 2 layers"),
    ({"layer_indexes": [2]}, r"layers: index 2 is out of range"),
    ({"max_seq_length": 17}, r"max_seq_length=17 is more than the max_position_embeddings=16"),
    ({"doc_stride": 0}, r"doc_stride: must be at least 1, got 0"),
])
def test_bad_arguments_write_nothing(tmp_path, tokenizer, config, kwargs, message):
    output = tmp_path / "out.jsonl"
    args = {"layer_indexes": [-1], "max_seq_length": 8, **kwargs}
    with pytest.raises(ValueError, match=message):
        fe.extract_features([fe.InputExample(0, "a")], str(output), build_encoder(config),
                            tokenizer, **args)
    assert os.listdir(tmp_path) == ["vocab.txt"]


def test_failure_while_writing_leaves_no_file(tmp_path, tokenizer, config, monkeypatch):
    def fail_on_second_line(feature, *args):
        if feature.unique_id == 1:
            raise RuntimeError("disk full")
        return {"linex_index": feature.unique_id}

    monkeypatch.setattr(fe, "feature_json", fail_on_second_line)
    with pytest.raises(RuntimeError):
        fe.extract_features([fe.InputExample(0, "a"), fe.InputExample(1, "b")],
                            str(tmp_path / "out.jsonl"), build_encoder(config), tokenizer, [-1],
                            max_seq_length=8)
    assert os.listdir(tmp_path) == ["vocab.txt"]


TEN_TOKENS = "the dog is hairy . hello world ! a b"


def window_vectors(encoder, tokenizer, text, starts, owners, size, layers):
    """The vectors a windowed line should hold, [len(layers), tokens + 2, hidden], each window
    run through the encoder alone: [CLS] from window 0, token t from window owners[t] (which
    starts at token starts[owners[t]]), [SEP] from the last window."""
    ids = tokenizer.convert_tokens_to_ids(tokenizer.tokenize(text))
    rows = []
    for start in starts:
        row = np.array([[ID["[CLS]"], *ids[start:start + size], ID["[SEP]"]]], "int32")
        outputs = encoder({"input_word_ids": row, "input_mask": np.ones_like(row),
                           "input_type_ids": np.zeros_like(row)},
                          training=False)["encoder_outputs"]
        rows.append(np.stack([np.asarray(outputs[i])[0] for i in layers]))  # [layers, row, h]
    last = rows[-1]
    return np.stack([rows[0][:, 0],
                     *(rows[w][:, 1 + t - starts[w]] for t, w in enumerate(owners)),
                     last[:, last.shape[1] - 1]], axis=1)


@pytest.mark.parametrize("text, doc_stride, starts, owners", [
    # max_seq_length 6: windows of 4 tokens. Token t's score in a window is
    # min(t - start, end - t) + 0.01 * length; a tie goes to the longer, then the earlier window.
    # Stride 2: [0-3] [2-5] [4-7] [6-9]; t3 scores 0 in window 0 and 1 in window 1.
    (TEN_TOKENS, 2, [0, 2, 4, 6], [0, 0, 0, 1, 1, 2, 2, 3, 3, 3]),
    # Stride 3: [0-3] [3-6] [6-9]; t3 and t6 score 0 in both their windows: the earlier wins.
    (TEN_TOKENS, 3, [0, 3, 6], [0, 0, 0, 0, 1, 1, 1, 2, 2, 2]),
    # 11 tokens, stride 3: a last window [9-10] of 2 tokens; t9 scores 0.04 in window 2 (the
    # longer) and 0.02 in window 3. [SEP] comes from window 3, after its 2 tokens.
    (TEN_TOKENS + " c", 3, [0, 3, 6, 9], [0, 0, 0, 0, 1, 1, 1, 2, 2, 2, 3]),
])
def test_doc_stride_takes_each_token_from_its_max_context_window(
        tmp_path, tokenizer, config, text, doc_stride, starts, owners):
    encoder = build_encoder(config)
    layers = [-1, 0]
    output = tmp_path / "out.jsonl"
    # batch_size 3 windows: the long text's windows fill one batch and share the next with
    # the short line's.
    fe.extract_features([fe.InputExample(0, text), fe.InputExample(1, "hello world")],
                        str(output), encoder, tokenizer, layers, max_seq_length=6,
                        batch_size=3, doc_stride=doc_stride)

    long_line, short_line = [json.loads(line) for line in output.read_text().splitlines()]
    assert long_line["linex_index"] == 0 and short_line["linex_index"] == 1
    assert [f["token"] for f in long_line["features"]] == ["[CLS]", *text.split(), "[SEP]"]
    expected = window_vectors(encoder, tokenizer, text, starts, owners, 4, layers)
    for i, token in enumerate(long_line["features"]):
        assert [layer["index"] for layer in token["layers"]] == layers
        for j, layer in enumerate(token["layers"]):
            np.testing.assert_allclose(layer["values"], expected[j, i], atol=1e-5,
                                       err_msg=f"token {i} ({token['token']}), layer {j}")
    assert [f["token"] for f in short_line["features"]] == ["[CLS]", "hello", "world", "[SEP]"]
    expected = window_vectors(encoder, tokenizer, "hello world", [0], [0, 0], 4, layers)
    for i, token in enumerate(short_line["features"]):
        for j, layer in enumerate(token["layers"]):
            np.testing.assert_allclose(layer["values"], expected[j, i], atol=1e-5)


def test_doc_stride_on_texts_that_fit_changes_nothing(tmp_path, tokenizer, config):
    encoder = build_encoder(config)
    # The last text fills its window exactly (6 tokens, max_seq_length 8).
    examples = [fe.InputExample(0, "Hello, world!"), fe.InputExample(1, ""),
                fe.InputExample(2, "the dog is hairy."), fe.InputExample(3, "a b c d e f")]
    outputs = {}
    for doc_stride in (None, 1):
        output = tmp_path / f"out_{doc_stride}.jsonl"
        fe.extract_features(examples, str(output), encoder, tokenizer, [-1, -2],
                            max_seq_length=8, batch_size=3, doc_stride=doc_stride)
        outputs[doc_stride] = output.read_bytes()
    assert outputs[1] == outputs[None]


def test_doc_stride_refuses_pairs(tmp_path, tokenizer, config):
    path = write_lines(tmp_path / "in.txt", [b"Hello", b"the dog ||| is hairy"])
    assert len(fe.read_examples(path)) == 2  # Without doc_stride, pairs are read.
    with pytest.raises(ValueError, match=r"in\.txt: line 2: a pair .* single texts only"):
        fe.read_examples(path, single_texts=True)
    output = tmp_path / "out.jsonl"
    with pytest.raises(ValueError, match=r"doc_stride: line 2 is a pair"):
        fe.extract_features(fe.read_examples(path), str(output), build_encoder(config),
                            tokenizer, [-1], max_seq_length=8, doc_stride=2)
    assert not output.exists()


def run_cli(*flags):
    return run_module("run_scripts.extract_features", *flags)


@pytest.fixture
def model_files(tmp_path, vocab_file, config):
    """bert_config.json and a checkpoint of a random encoder, which the test keeps."""
    config_file = str(tmp_path / "bert_config.json")
    config.to_json_file(config_file)
    encoder = build_encoder(config)
    prefix = str(tmp_path / "bert_model.ckpt")
    tf2.save(encoder, prefix)
    return encoder, ["--vocab_file", vocab_file, "--bert_config_file", config_file,
                     "--init_checkpoint", prefix]


def test_cli_writes_features_of_the_checkpoint(tmp_path, tokenizer, model_files):
    encoder, model_flags = model_files
    input_file = write_lines(tmp_path / "in.txt", [b"Hello, world!", b"the dog ||| is hairy."])
    output = tmp_path / "out.jsonl"
    result = run_cli("--input_file", input_file, "--output_file", str(output),
                     "--layers=-1,-2", "--max_seq_length=12", *model_flags)
    assert result.returncode == 0, result.stderr

    lines = [json.loads(line) for line in output.read_text().splitlines()]
    assert [line["linex_index"] for line in lines] == [0, 1]
    [feature] = fe.convert_examples_to_features(fe.read_examples(input_file)[1:], 12, tokenizer)
    outputs = encoder({"input_word_ids": np.array([feature.input_ids], "int32"),
                       "input_mask": np.array([feature.input_mask], "int32"),
                       "input_type_ids": np.array([feature.input_type_ids], "int32")},
                      training=False)["encoder_outputs"]
    for i, token in enumerate(lines[1]["features"]):
        assert token["token"] == feature.tokens[i]
        for layer in token["layers"]:
            np.testing.assert_allclose(
                layer["values"], np.asarray(outputs[layer["index"]])[0, i], atol=1e-5)


@pytest.mark.parametrize("bad_flags, message", [
    (["--input_file", "/nonexistent/in.txt"], "/nonexistent/in.txt: no such input file"),
    (["--layers=-1,5"], "layers: index 5 is out of range"),
    (["--doc_stride=0"], "doc_stride: must be at least 1, got 0"),
    (["--doc_stride=2"], "in.txt: line 2: a pair (`a ||| b`), but doc_stride windows single"),
])
def test_cli_bad_input_is_one_line_and_no_output(tmp_path, model_files, bad_flags, message):
    input_file = write_lines(tmp_path / "in.txt", [b"Hello", b"the dog ||| is hairy"])
    output = tmp_path / "out.jsonl"
    result = run_cli("--input_file", input_file, "--output_file", str(output), *model_files[1],
                     *bad_flags)
    assert result.returncode != 0
    last_line = result.stderr.strip().splitlines()[-1]
    assert last_line.startswith("extract_features: ") and message in last_line
    assert "Traceback" not in result.stderr
    assert not output.exists()


def test_cli_doc_stride_windows_long_lines(tmp_path, tokenizer, model_files):
    encoder, model_flags = model_files
    input_file = write_lines(tmp_path / "in.txt", [TEN_TOKENS.encode()])
    output = tmp_path / "out.jsonl"
    result = run_cli("--input_file", input_file, "--output_file", str(output), "--layers=-1",
                     "--max_seq_length=6", "--doc_stride=2", "--batch_size=3", *model_flags)
    assert result.returncode == 0, result.stderr

    [line] = [json.loads(line) for line in output.read_text().splitlines()]
    assert [f["token"] for f in line["features"]] == ["[CLS]", *TEN_TOKENS.split(), "[SEP]"]
    # The windows and owners of the first case of the library test above.
    expected = window_vectors(encoder, tokenizer, TEN_TOKENS, [0, 2, 4, 6],
                              [0, 0, 0, 1, 1, 2, 2, 3, 3, 3], 4, [-1])
    for i, token in enumerate(line["features"]):
        np.testing.assert_allclose(token["layers"][0]["values"], expected[0, i], atol=1e-5)
