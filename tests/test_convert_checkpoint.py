"""The convert_checkpoint command line, run as a user runs it."""

import dataclasses
import os
import subprocess
import sys

import numpy as np

from official import checkpoints
from official.checkpoints import hf, tf1
from tests.checkpoint_helpers import original_weights
from tests.cli import ENV, REPO, run_modules


def last_line(stderr: str) -> str:
    """The error line: TensorFlow's C++ start-up notes may precede it on stderr."""
    assert "Traceback" not in stderr, stderr
    return stderr.strip().splitlines()[-1]


def convert(*args):
    return subprocess.run([sys.executable, "-m", "run_scripts.convert_checkpoint", *args],
                          cwd=REPO, capture_output=True, text=True,
                          env=ENV)


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
    convert = ["run_scripts.convert_checkpoint", "--input_format=tf1", f"--output_dir={out}"]
    # The four commands side by side: each is refused, and none writes.
    missing, bare, bad_json, deeper = run_modules(
        [*convert, f"--input={tmp_path / 'missing'}"],
        [*convert, f"--input={release}"],
        [*convert, f"--input={tmp_path / 'release'}",
         f"--bert_config_file={tmp_path / 'bad.json'}"],
        [*convert, f"--input={tmp_path / 'release'}",
         f"--bert_config_file={tmp_path / 'deeper.json'}"])
    for result in (missing, bare, bad_json, deeper):
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
    assert not out.exists() or os.listdir(out) == []
