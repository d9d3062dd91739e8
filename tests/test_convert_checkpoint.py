"""The convert_checkpoint command line, run as a user runs it."""

import ast
import dataclasses
import importlib.util
import os

import numpy as np

from official import checkpoints
from official.checkpoints import hf, tf1, tf2
from tests.checkpoint_helpers import original_weights
from tests.cli import run_module, run_modules


def last_line(stderr: str) -> str:
    """The error line: TensorFlow's C++ start-up notes may precede it on stderr."""
    assert "Traceback" not in stderr, stderr
    return stderr.strip().splitlines()[-1]


def convert(*args):
    return run_module("run_scripts.convert_checkpoint", *args)


def original_release(directory, config):
    """A folder laid out like the original's releases: bert_model.ckpt, bert_config.json, vocab."""
    directory.mkdir()
    weights = original_weights(config)
    tf1.write(weights, str(directory / "bert_model.ckpt"))
    config.to_json_file(str(directory / "bert_config.json"))
    (directory / "vocab.txt").write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n")
    return weights


def test_original_release_to_tf2_to_hugging_face(tiny_config, tmp_path):
    weights = original_release(tmp_path / "release", tiny_config)
    result = convert("--input_format=tf1", f"--input={tmp_path / 'release'}",
                     f"--output_dir={tmp_path / 'tf2'}")
    assert result.returncode == 0, result.stderr
    assert sorted(os.listdir(tmp_path / "tf2")) == [
        "bert_config.json", "bert_model.ckpt.data-00000-of-00001", "bert_model.ckpt.index",
        "vocab.txt"]
    converted = checkpoints.read_weights(str(tmp_path / "tf2"))
    assert sorted(converted) == sorted(weights)
    for name, value in weights.items():
        np.testing.assert_array_equal(converted[name], value, err_msg=name)

    result = convert("--input_format=tf2", f"--input={tmp_path / 'tf2' / 'bert_model.ckpt'}",
                     f"--output_dir={tmp_path / 'hf'}", "--output_format=hf")
    assert result.returncode == 0, result.stderr
    config, hf_weights, vocab = hf.read(str(tmp_path / "hf"))
    assert config == tiny_config and vocab is not None
    for name, value in weights.items():
        np.testing.assert_array_equal(hf_weights[name], value, err_msg=name)


def test_bad_inputs_give_one_line_errors_and_no_output(tiny_config, tmp_path):
    out = tmp_path / "out"
    # A checkpoint without its config.
    release = tmp_path / "bare"
    original_release(release, tiny_config)
    os.unlink(release / "bert_config.json")
    original_release(tmp_path / "release", tiny_config)
    (tmp_path / "bad.json").write_text('{"vocab_size": 100,\n "hidden_size": }')
    deeper = dataclasses.replace(tiny_config, num_hidden_layers=3)
    deeper.to_json_file(str(tmp_path / "deeper.json"))
    # A TF2 checkpoint with its config and no vocab, as a fine-tuning's output_dir.
    (tmp_path / "finetuned").mkdir()
    tf2.write(original_weights(tiny_config), str(tmp_path / "finetuned" / "bert_model.ckpt"))
    tiny_config.to_json_file(str(tmp_path / "finetuned" / "bert_config.json"))
    convert = ["run_scripts.convert_checkpoint", "--input_format=tf1", f"--output_dir={out}"]
    # The five commands side by side: each is refused, and none writes.
    missing, bare, bad_json, deeper, no_vocab = run_modules(
        [*convert, f"--input={tmp_path / 'missing'}"],
        [*convert, f"--input={release}"],
        [*convert, f"--input={tmp_path / 'release'}",
         f"--bert_config_file={tmp_path / 'bad.json'}"],
        [*convert, f"--input={tmp_path / 'release'}",
         f"--bert_config_file={tmp_path / 'deeper.json'}"],
        ["run_scripts.convert_checkpoint", "--input_format=tf2", "--output_format=hf",
         f"--input={tmp_path / 'finetuned'}", f"--output_dir={out}"])
    for result in (missing, bare, bad_json, deeper, no_vocab):
        assert result.returncode != 0
    # The checkpoint itself is what is missing, and the message says so (not its config).
    assert last_line(missing.stderr) == (
        f"convert_checkpoint: {tmp_path / 'missing'}: no checkpoint there (no missing.index)")
    # A checkpoint without its config: that is named.
    assert last_line(bare.stderr) == (
        f"convert_checkpoint: {release}: no bert_config.json beside the checkpoint; "
        "pass --bert_config_file")
    assert last_line(bad_json.stderr) == (
        f"convert_checkpoint: {tmp_path / 'bad.json'}: line 2: invalid JSON (Expecting value)")
    # A layer more: its 16 variables, counted, the first three named.
    assert ("does not fit the model: 16 variables missing from the checkpoint "
            "(bert/encoder/layer_2/") in last_line(deeper.stderr)
    assert ", and 13 more)" in last_line(deeper.stderr)
    # Hugging Face's folder without vocab.txt: transformers' tokenizer would have a few words.
    assert last_line(no_vocab.stderr) == (
        f"convert_checkpoint: {tmp_path / 'finetuned'}: no vocab.txt beside it, and Hugging Face "
        "needs one (transformers' tokenizer would read every word as [UNK]): pass --vocab_file, "
        "the vocab the model was trained with")
    assert not out.exists() or os.listdir(out) == []


def original_activations() -> set[str]:
    """The hidden_act names the original's modeling.get_activation compares with, read from its
    source (bert.modeling itself cannot be imported: it needs tf.contrib)."""
    folder = importlib.util.find_spec("bert").submodule_search_locations[0]
    with open(os.path.join(folder, "modeling.py"), encoding="utf-8") as f:
        tree = ast.parse(f.read())
    function = next(node for node in ast.walk(tree)
                    if isinstance(node, ast.FunctionDef) and node.name == "get_activation")
    return {node.comparators[0].value for node in ast.walk(function)
            if isinstance(node, ast.Compare) and isinstance(node.comparators[0], ast.Constant)}


def test_an_activation_the_original_lacks_is_kept_in_tf1_with_a_warning(tiny_config, tmp_path):
    """The original refuses "gelu_exact" (its "gelu" is the tanh form): the tf1 output keeps it,
    since "gelu" would compute another function, and says in one line that the original code
    cannot run it."""
    assert original_activations() == set(tf1.ORIGINAL_ACTIVATIONS)
    exact = dataclasses.replace(tiny_config, hidden_act="gelu_exact")
    original_release(tmp_path / "release", exact)
    result = convert("--input_format=tf1", f"--input={tmp_path / 'release'}",
                     "--output_format=tf1", f"--output_dir={tmp_path / 'tf1'}")
    assert result.returncode == 0, result.stderr
    warnings = [line for line in result.stderr.splitlines() if line.startswith("WARNING: ")]
    assert warnings == ["WARNING: the tf1 bert_config.json keeps hidden_act 'gelu_exact', which "
                        "the original code cannot run (its modeling.get_activation knows gelu, "
                        "relu, tanh, linear; its gelu is the tanh form, so writing that would "
                        "change the model); this project reads the checkpoint"]
    assert checkpoints.config_beside(str(tmp_path / "tf1"))[1] == exact
