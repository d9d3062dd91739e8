"""extract_features, convert_checkpoint and export_saved_model with bad input, as a user meets
it: one line naming the flag or file, no traceback, nothing written (tests/cli.py runs each as a
subprocess; `snapshot` compares the output location before and after)."""

import pytest

from official.checkpoints import tf1
from official.configs import BertConfig
from tests.checkpoint_helpers import original_weights
from tests.cli import refused, run_module, snapshot

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "good", "movie", "the", "plot"]
CONFIG = BertConfig(vocab_size=len(VOCAB), hidden_size=16, num_hidden_layers=1,
                    num_attention_heads=2, intermediate_size=32, max_position_embeddings=32)


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    """A checkpoint release of the tiny model: bert_model.ckpt, bert_config.json, vocab.txt."""
    root = tmp_path_factory.mktemp("release")
    (root / "vocab.txt").write_text("\n".join(VOCAB) + "\n")
    CONFIG.to_json_file(str(root / "bert_config.json"))
    tf1.write(original_weights(CONFIG), str(root / "bert_model.ckpt"))
    (root / "lines.txt").write_text("a good movie\nthe plot ||| a movie\n")
    return root


def extract(model, *flags):
    return run_module("run_scripts.extract_features", f"--vocab_file={model / 'vocab.txt'}",
                      f"--bert_config_file={model / 'bert_config.json'}",
                      f"--init_checkpoint={model / 'bert_model.ckpt'}", "--max_seq_length=16",
                      "--layers=-1", *flags)


def test_extract_features_refuses_an_empty_input(model, tmp_path):
    (tmp_path / "empty.txt").write_text("")
    result = extract(model, f"--input_file={tmp_path / 'empty.txt'}",
                     f"--output_file={tmp_path / 'out.jsonl'}")
    refused(result, "extract_features: ", f"{tmp_path / 'empty.txt'}: empty")
    assert not (tmp_path / "out.jsonl").exists()


def test_extract_features_refuses_an_output_file_that_is_a_directory(model, tmp_path):
    (tmp_path / "folder").mkdir()
    result = extract(model, f"--input_file={model / 'lines.txt'}",
                     f"--output_file={tmp_path / 'folder'}")
    refused(result, f"--output_file={tmp_path / 'folder'}: is a directory, not a file")
    assert snapshot(tmp_path / "folder") == {}


def test_extract_features_refuses_a_vocab_beyond_vocab_size(model, tmp_path):
    bigger = tmp_path / "vocab.txt"
    bigger.write_text("\n".join(VOCAB + ["extra"]) + "\n")
    result = run_module("run_scripts.extract_features", f"--vocab_file={bigger}",
                        f"--bert_config_file={model / 'bert_config.json'}",
                        f"--input_file={model / 'lines.txt'}",
                        f"--output_file={tmp_path / 'out.jsonl'}", "--max_seq_length=16",
                        "--layers=-1")
    refused(result, f"{bigger} has {len(VOCAB) + 1} tokens but", "vocab_size=")
    assert not (tmp_path / "out.jsonl").exists()


def test_convert_checkpoint_names_a_missing_input(model, tmp_path):
    result = run_module("run_scripts.convert_checkpoint", "--input_format=tf1",
                        f"--input={tmp_path / 'absent' / 'bert_model.ckpt'}",
                        f"--output_dir={tmp_path / 'out'}")
    refused(result, "convert_checkpoint: ", f"{tmp_path / 'absent' / 'bert_model.ckpt'}: no "
                                             "checkpoint there (no bert_model.ckpt.index)")
    assert not (tmp_path / "out").exists()


def test_convert_checkpoint_refuses_an_output_dir_that_is_a_file(model, tmp_path):
    (tmp_path / "a_file").write_text("x")
    result = run_module("run_scripts.convert_checkpoint", "--input_format=tf1",
                        f"--input={model / 'bert_model.ckpt'}",
                        f"--output_dir={tmp_path / 'a_file'}")
    refused(result, f"--output_dir={tmp_path / 'a_file'}: is a file, not a directory")
    assert (tmp_path / "a_file").read_text() == "x"


@pytest.mark.parametrize("problem", ["export_dir is a file", "vocab beyond vocab_size",
                                     "a record's string for a bool"])
def test_export_saved_model_checks_before_building(model, tmp_path, problem):
    export_dir, vocab = tmp_path / "export", model / "vocab.txt"
    export_type, weights = "encoder", model
    if problem == "export_dir is a file":
        export_dir.write_text("x")
        expected = f"--export_dir={export_dir}: is a file, not a directory"
    elif problem == "a record's string for a bool":
        # A sentence_encoder.json edited by hand: "false" is a string, not false.
        weights = tmp_path / "converted"
        weights.mkdir()
        for name in ("bert_model.ckpt.index", "bert_model.ckpt.data-00000-of-00001",
                     "bert_config.json"):
            (weights / name).write_bytes((model / name).read_bytes())
        (weights / "sentence_encoder.json").write_text('{"pooling": "mean", "normalize": "false"}')
        export_type = "sentence_encoder"
        expected = (f"{weights / 'sentence_encoder.json'}: field normalize must be a bool or "
                    "null, got 'false'")
    else:
        vocab = tmp_path / "vocab.txt"
        vocab.write_text("\n".join(VOCAB + ["extra"]) + "\n")
        expected = (f"{vocab} has {len(VOCAB) + 1} tokens but {model / 'bert_config.json'} says "
                    f"vocab_size={len(VOCAB)}")
    before = snapshot(export_dir)
    result = run_module("run_scripts.export_saved_model", f"--export_type={export_type}",
                        f"--export_dir={export_dir}", f"--vocab_file={vocab}",
                        f"--init_checkpoint={weights / 'bert_model.ckpt'}",
                        f"--bert_config_file={model / 'bert_config.json'}", "--max_seq_length=16")
    refused(result, "export_saved_model: ", expected)
    assert snapshot(export_dir) == before


@pytest.fixture(scope="module")
def adapter_run(model, tmp_path_factory):
    """A parameter-efficient run (adapters) on the release, as its output_dir."""
    from official.peft import methods
    from tests.peft_helpers import write_run
    folder = tmp_path_factory.mktemp("adapter_run")
    write_run(str(model), methods.from_flags(adapter_size=4), folder)
    return folder


def test_convert_checkpoint_refuses_adapters_for_a_format_without_a_place(adapter_run,
                                                                         tmp_path):
    result = run_module("run_scripts.convert_checkpoint", f"--peft_checkpoint={adapter_run}",
                        "--output_format=hf", f"--output_dir={tmp_path / 'out'}")
    refused(result, f"{adapter_run} has adapters, and Hugging Face has no place for them",
            "write tf1 or tf2")
    assert not (tmp_path / "out").exists()


def test_export_saved_model_refuses_a_peft_run_on_another_base(model, adapter_run, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    tf1.write(original_weights(CONFIG, seed=9), str(other / "bert_model.ckpt"))
    result = run_module("run_scripts.export_saved_model", "--export_type=classifier",
                        "--task_name=SST-2", f"--export_dir={tmp_path / 'export'}",
                        f"--vocab_file={model / 'vocab.txt'}", f"--init_checkpoint={other}",
                        f"--peft_checkpoint={adapter_run}", "--max_seq_length=16")
    refused(result, f"{other} is not the base of the parameter-efficient run {adapter_run}",
            f"trained on {model}")
    assert not (tmp_path / "export").exists()
