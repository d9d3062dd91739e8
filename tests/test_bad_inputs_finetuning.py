"""run_classifier, run_squad and run_ner with bad input, as a user meets it: checked before any
work, one line naming the flag or file, no traceback, the output location as it was. (What the
fine-tuning jobs share with run_pretraining, the training loop's stop at a non-finite loss and
the output_dir's checks, is tested there: tests/test_bad_inputs_pretraining.py.)

Each case is a subprocess (tests/cli.py) on a toy task in GLUE's SST-2 layout
(tests/test_run_classifier.py writes it) with a tiny model. "As it was" is
`tests.cli.snapshot`: every file's bytes under the output_dir, before and after (or that no
output_dir was made at all).
"""

import shutil

import numpy as np
import pytest

from official.checkpoints import hf, tf1
from official.configs import BertConfig
from official.peft import methods
from official.tasks.classification import ClassificationTask
from tests.checkpoint_helpers import original_weights
from tests.cli import refused, run_module, run_modules, snapshot, succeeded
from tests.peft_helpers import write_base, write_run
from tests.test_run_classifier import CUES, FILLERS, write_sst2, write_stsb

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *CUES, *FILLERS]
CONFIG = BertConfig(vocab_size=len(VOCAB), hidden_size=32, num_hidden_layers=2,
                    num_attention_heads=2, intermediate_size=64, max_position_embeddings=32)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """The tiny model's vocab and config, and a small SST-2-layout task."""
    root = tmp_path_factory.mktemp("finetuning_inputs")
    (root / "vocab.txt").write_text("\n".join(VOCAB) + "\n")
    CONFIG.to_json_file(str(root / "bert_config.json"))
    write_sst2(str(root / "data"), np.random.default_rng(0),
               sizes=(("train", 64), ("dev", 16), ("test", 8)))
    return {"root": root, "vocab_file": str(root / "vocab.txt"),
            "bert_config_file": str(root / "bert_config.json"), "data": root / "data"}


def classify_command(files, output_dir, *flags, data=None, config=None, vocab=None):
    """run_classifier's module and flags for the small task (`run_module`'s arguments)."""
    return [
        "run_scripts.run_classifier", "--task_name=SST-2", f"--data_dir={data or files['data']}",
        f"--output_dir={output_dir}", f"--vocab_file={vocab or files['vocab_file']}",
        f"--bert_config_file={config or files['bert_config_file']}", "--max_seq_length=16",
        "--train_batch_size=16", "--eval_batch_size=16", "--predict_batch_size=8",
        "--learning_rate=2e-3", "--num_train_epochs=1", *flags]


def classify(files, output_dir, *flags, data=None, config=None, vocab=None):
    return run_module(*classify_command(files, output_dir, *flags, data=data, config=config,
                                        vocab=vocab))


@pytest.fixture(scope="module")
def finished(files, tmp_path_factory):
    """A finished run: trained one epoch (4 steps) from a Hugging Face folder as its
    --init_checkpoint, evaluated (best/ kept), predicted."""
    root = tmp_path_factory.mktemp("finished")
    (root / "hf").mkdir()
    hf.write(str(root / "hf"), CONFIG, original_weights(CONFIG, heads=False))
    succeeded(classify(files, root / "out", "--do_train", "--do_eval", "--do_predict",
                       f"--init_checkpoint={root / 'hf'}"))
    return root / "out"


def copy_of(folder, tmp_path, name="out"):
    shutil.copytree(folder, tmp_path / name)
    return tmp_path / name


def data_copy(files, tmp_path):
    shutil.copytree(files["data"], tmp_path / "data")
    return tmp_path / "data"


def test_a_split_with_only_a_header_is_refused_before_any_record(files, tmp_path):
    data = data_copy(files, tmp_path)
    (data / "train.tsv").write_text("sentence\tlabel\n")
    result = classify(files, tmp_path / "out", "--do_train", "--do_eval", data=data)
    refused(result, "run_classifier: ", f"{data / 'train'}.tsv: no examples after its header")
    assert not (tmp_path / "out").exists()


def test_a_bad_row_in_the_test_file_stops_the_run_before_training(files, tmp_path):
    data = data_copy(files, tmp_path)
    lines = (data / "test.tsv").read_text().splitlines()
    (data / "test.tsv").write_text("\n".join([*lines, "only-one-column"]) + "\n")
    result = classify(files, tmp_path / "out", "--do_train", "--do_predict", data=data)
    refused(result, f"{data / 'test.tsv'}:{len(lines) + 1}: 1 columns")
    assert not (tmp_path / "out").exists()


def test_a_nan_score_is_refused_with_its_file_and_line_before_any_record(files, tmp_path):
    """A regression label must be a finite number: a nan would train to a nan loss (blamed on
    the learning rate) and evaluate to nan metrics that then choose best/."""
    data = tmp_path / "stsb"
    write_stsb(str(data), np.random.default_rng(0), sizes=(("train", 16), ("dev", 8)))
    lines = (data / "dev.tsv").read_text().splitlines()
    lines[3] = lines[3].rsplit("\t", 1)[0] + "\tnan"
    (data / "dev.tsv").write_text("\n".join(lines) + "\n")
    result = run_module(
        "run_scripts.run_classifier", "--task_name=STS-B", f"--data_dir={data}",
        f"--output_dir={tmp_path / 'out'}", f"--vocab_file={files['vocab_file']}",
        f"--bert_config_file={files['bert_config_file']}", "--max_seq_length=16",
        "--do_train", "--do_eval")
    refused(result, f"{data / 'dev.tsv'}:4: label 'nan' is not a finite number")
    assert not (tmp_path / "out").exists()


def test_predicting_from_a_never_fine_tuned_output_dir_is_refused(files, tmp_path):
    result = classify(files, tmp_path / "out", "--do_predict")
    refused(result, "--do_predict without --do_train", "no fine-tuned checkpoint",
            "--allow_untrained_head")
    assert not (tmp_path / "out").exists()


def test_allow_untrained_head_predicts_on_purpose(files, tmp_path):
    result = succeeded(classify(files, tmp_path / "out", "--do_predict",
                                "--allow_untrained_head"))
    assert "No checkpoint in" in result.stderr
    assert (tmp_path / "out" / "test_results.tsv").exists()


def test_config_vocab_and_checkpoint_are_checked_before_any_record(files, tmp_path):
    out = tmp_path / "out"
    bigger = tmp_path / "bigger_vocab.txt"
    bigger.write_text("\n".join(VOCAB + ["extra1", "extra2"]) + "\n")
    other = BertConfig(**dict(CONFIG.to_dict(), num_hidden_layers=3))
    tf1.write(original_weights(other), str(tmp_path / "deeper.ckpt"))
    # Garbage bytes under a checkpoint's names.
    for name in ("garbage.ckpt.index", "garbage.ckpt.data-00000-of-00001"):
        (tmp_path / name).write_bytes(np.random.default_rng(0).bytes(4096))
    # The four side by side, into the same output_dir: none may write.
    too_long, bigger_vocab, deeper, garbage = run_modules(
        classify_command(files, out, "--do_train", "--max_seq_length=64"),
        classify_command(files, out, "--do_train", vocab=str(bigger)),
        classify_command(files, out, "--do_train",
                         f"--init_checkpoint={tmp_path / 'deeper.ckpt'}"),
        classify_command(files, out, "--do_train",
                         f"--init_checkpoint={tmp_path / 'garbage.ckpt'}"))
    refused(too_long, "--max_seq_length=64 is more than the max_position_embeddings=32",
            files["bert_config_file"])
    refused(bigger_vocab, f"{bigger} has {len(VOCAB) + 2} tokens but "
                          f"{files['bert_config_file']} says vocab_size={len(VOCAB)}")
    refused(deeper, "deeper.ckpt does not fit the model: 16 variables unexpected",
            ", and 13 more)")
    # The garbage: the reader's refusal, with the path.
    refused(garbage, f"{tmp_path / 'garbage.ckpt'}: unreadable checkpoint")
    assert not out.exists()


def test_a_rerun_with_another_config_is_refused_and_changes_nothing(files, finished, tmp_path):
    out = copy_of(finished, tmp_path)
    other = tmp_path / "other.json"
    BertConfig(**dict(CONFIG.to_dict(), intermediate_size=48)).to_json_file(str(other))
    before = snapshot(out)
    result = classify(files, out, "--do_train", "--do_predict", config=str(other))
    refused(result, f"{out}/bert_config.json", f"--bert_config_file={other}",
            "intermediate_size (64 vs 48)")
    assert snapshot(out) == before


def test_a_hugging_face_folder_is_an_init_checkpoint(finished):
    """The finished run started from one (one process shows both). (A folder whose config
    computes something else is refused: test_checkpoints_hf.)"""
    assert (finished / "model.ckpt-4.index").exists()


def test_run_squad_checks_the_config_before_reading_its_files(files, tmp_path):
    squad_file = tmp_path / "train.json"
    squad_file.write_text('{"version": "1.1", "data": []}')
    result = run_module("run_scripts.run_squad", f"--vocab_file={files['vocab_file']}",
                        f"--bert_config_file={files['bert_config_file']}",
                        f"--output_dir={tmp_path / 'out'}", "--do_train",
                        f"--train_file={squad_file}", "--max_seq_length=384")
    refused(result, "run_squad: --max_seq_length=384 is more than the "
                    "max_position_embeddings=32")
    assert not (tmp_path / "out").exists()


def test_run_ner_refuses_an_untrained_head(files, tmp_path):
    data = tmp_path / "conll"
    data.mkdir()
    (data / "eng.testb").write_text("good NN I-NP B-ORG\n")
    result = run_module("run_scripts.run_ner", f"--data_dir={data}",
                        f"--vocab_file={files['vocab_file']}",
                        f"--bert_config_file={files['bert_config_file']}", "--max_seq_length=16",
                        f"--output_dir={tmp_path / 'out'}", "--do_predict")
    refused(result, "run_ner: --do_predict without --do_train", "--allow_untrained_head")
    assert not (tmp_path / "out").exists()


@pytest.fixture(scope="module")
def peft_finished(tmp_path_factory):
    """A LoRA run of SST-2 on a base of its own (the base and the output_dir), written directly
    (tests/peft_helpers.py): what a finished run leaves."""
    root = tmp_path_factory.mktemp("peft_finished")
    base = write_base(CONFIG, root / "base")
    write_run(base, methods.from_flags(lora_rank=2), root / "out",
              ClassificationTask("sst-2", ["0", "1"]))  # run_classifier's name
    return root


def test_bad_peft_flags_are_refused_before_any_work(files, tmp_path):
    """(Every PEFT flag's check, in-process: tests/test_peft_settings.py, test_peft_methods.py,
    test_peft_adaptation.py.)"""
    result = classify(files, tmp_path / "out", "--do_train", "--adapter_size=8", "--lora_rank=4")
    refused(result, "run_classifier: ", "--adapter_size and --lora_rank are two methods")
    assert not (tmp_path / "out").exists()


def test_a_reversed_student_is_refused_before_any_work(files, tmp_path):
    """(The distillation flags' other checks, in-process: tests/test_distillation.py.)"""
    result = classify(files, tmp_path / "out", "--do_train", f"--teacher_checkpoint={tmp_path}",
                      "--student_layers=1,0", "--bert_config_file=")
    refused(result, "run_classifier: --student_layers=1,0 is not in increasing order",
            "--student_layers_any_order")
    assert not (tmp_path / "out").exists()


def test_a_peft_run_resumed_on_another_base_is_refused_and_changes_nothing(files, peft_finished,
                                                                         tmp_path):
    """(A PEFT run and a full fine-tuning in one output_dir are refused the same way, in-process:
    tests/test_peft_adaptation.py.)"""
    out = copy_of(peft_finished / "out", tmp_path)
    tf1.write(original_weights(CONFIG, heads=False, seed=4), str(tmp_path / "other.ckpt"))
    before = snapshot(out)
    refused(classify(files, out, "--do_train", "--do_predict", "--lora_rank=2",
                     f"--init_checkpoint={tmp_path / 'other.ckpt'}"),
            f"{tmp_path / 'other.ckpt'} is not the base of the parameter-efficient run {out}")
    assert snapshot(out) == before
    # Predicting alone needs no flag at all: the run's record names the method and the base.
    succeeded(classify(files, out, "--do_predict"))
    assert (out / "test_results.tsv").exists()
