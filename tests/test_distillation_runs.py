"""Distillation as flags of the training entry points (--teacher_checkpoint), end to end as a user
runs it: a student taught by a fine-tuned teacher beats the same student trained on the labels
alone, the command line computes what the library's `DistillationTask` does bit for bit, a
SIGKILLed run resumes to the same weights, the output_dir exports as any classifier's, a rerun
with other settings and bad input are one line, and run_pretraining distils a pretrained teacher
(run_sentence_embedding's distillation is in tests/test_run_sentence_embedding.py).

The toy task (SST-2's layout): a sentence is positive exactly when it holds a cue word. The
teacher learns all three cues from 320 labelled sentences. The student's own labels are 48
sentences whose positives hold "good" alone; "great" and "fine" appear only in 480 unlabelled
transfer sentences, which the teacher labels (Turc et al.'s setting). Trained on the labels
alone, for the same number of updates, the student cannot know the other two cues; distilled,
it learns them from the teacher.
"""

import dataclasses
import os
import shutil
import signal
import subprocess
import time

import numpy as np
import pytest
import tensorflow as tf

from data_prep import glue
from data_prep.classifier_features import ClassifierData
from official.adaptation import Adaptation
from official.checkpoints import tf1
from official.configs import BertConfig
from official.distillation.settings import DistillationSettings
from official.distillation.task import DistillationTask
from official.tasks.classification import ClassificationTask
from official.training import finetuning
from tests.checkpoint_helpers import original_weights
from tests.cli import (
    PATIENCE,
    eval_results,
    outputs,
    refused,
    run_module,
    run_modules,
    serve_requests,
    snapshot,
    start,
    succeeded,
)
from tests.test_run_classifier import CUES, FILLERS, write_sst2

COMMON = ("--task_name=SST-2", "--max_seq_length=16", "--train_batch_size=16",
          "--eval_batch_size=64", "--learning_rate=2e-3", "--log_steps=1000", "--do_train",
          "--do_eval")


def sentence(rng, positive, cues):
    words = list(rng.choice(FILLERS, size=rng.integers(4, 9)))
    if positive:
        words.insert(rng.integers(0, len(words) + 1), str(rng.choice(cues)))
    return " ".join(words)


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    """The vocab, the model config, the teacher's data and run, the student's data and its run
    on the labels alone."""
    root = tmp_path_factory.mktemp("distillation")
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *CUES, *FILLERS]
    (root / "vocab.txt").write_text("\n".join(vocab) + "\n")
    BertConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
               intermediate_size=64, max_position_embeddings=32).to_json_file(
                   str(root / "bert_config.json"))
    write_sst2(root / "teacher_data", np.random.default_rng(0))  # test_run_classifier's data
    rng = np.random.default_rng(1)
    (root / "student_data").mkdir()
    for split, size, cues in (("train", 48, ["good"]), ("dev", 96, list(CUES))):
        rows = [f"{sentence(rng, p, cues)}\t{int(p)}\n"
                for p in rng.permutation(np.arange(size) % 2 == 0)]
        (root / "student_data" / f"{split}.tsv").write_text("sentence\tlabel\n" + "".join(rows))
    (root / "transfer.txt").write_text("".join(
        sentence(rng, p, list(CUES)) + "\n" for p in rng.permutation(np.arange(480) % 2 == 0)))
    # The labels-alone run's data: the 48 labelled rows 11 times over, so that its 3 epochs
    # (3 evaluations, not 33) are the distilled run's 99 updates of 16 rows.
    (root / "alone_data").mkdir()
    train = (root / "student_data" / "train.tsv").read_text().splitlines(keepends=True)
    (root / "alone_data" / "train.tsv").write_text(train[0] + "".join(train[1:]) * 11)
    shutil.copy(root / "student_data" / "dev.tsv", root / "alone_data" / "dev.tsv")
    files = {"vocab": str(root / "vocab.txt"), "config": str(root / "bert_config.json"),
             "student_data": str(root / "student_data"), "transfer": str(root / "transfer.txt"),
             "teacher": str(root / "teacher"), "alone": root / "alone", "root": root}
    # The teacher, and beside it the student trained on its labels alone (it needs no
    # teacher): the distilled run's 99 updates.
    for result in run_modules(
            ["run_scripts.run_classifier", *COMMON, "--num_train_epochs=3",
             f"--data_dir={root / 'teacher_data'}", f"--vocab_file={files['vocab']}",
             f"--bert_config_file={files['config']}", f"--output_dir={files['teacher']}"],
            ["run_scripts.run_classifier", *COMMON, "--num_train_epochs=3",
             f"--data_dir={root / 'alone_data'}", f"--vocab_file={files['vocab']}",
             f"--bert_config_file={files['config']}", f"--output_dir={files['alone']}"]):
        succeeded(result)
    assert float(eval_results(root / "teacher" / "eval_results.txt")["eval_accuracy"]) == 1.0
    return files


def distill_flags(toy, output_dir, *flags):
    """run_classifier's flags of the student: its own config, the teacher, transfer data."""
    return (*COMMON, "--num_train_epochs=3", f"--data_dir={toy['student_data']}",
            f"--vocab_file={toy['vocab']}", f"--teacher_checkpoint={toy['teacher']}",
            f"--bert_config_file={toy['config']}", f"--transfer_data={toy['transfer']}",
            "--save_checkpoints_steps=20", f"--output_dir={output_dir}", *flags)


@pytest.fixture(scope="module")
def distilled(toy):
    """The student distilled with transfer data (3 epochs of 48 + 480 rows: 99 updates)."""
    output_dir = toy["root"] / "distilled"
    succeeded(run_module("run_scripts.run_classifier", *distill_flags(toy, output_dir)))
    return output_dir


def test_the_distilled_student_beats_the_same_student_on_labels_alone(toy, distilled):
    alone = toy["alone"]  # run beside the teacher (the toy fixture)
    results = {name: eval_results(folder / "best" / "eval_results.txt")
               for name, folder in (("alone", alone), ("distilled", distilled))}
    assert int(results["alone"]["global_step"]) <= 99 and \
        int(eval_results(distilled / "eval_results.txt")["global_step"]) == 99
    alone_accuracy = float(results["alone"]["eval_accuracy"])
    distilled_accuracy = float(results["distilled"]["eval_accuracy"])
    assert distilled_accuracy >= 0.95 and distilled_accuracy >= alone_accuracy + 0.15, results


def test_sigkill_then_rerun_reaches_the_uninterrupted_weights(toy, distilled, tmp_path):
    out = tmp_path / "killed"
    process = start("run_scripts.run_classifier", *distill_flags(toy, out),
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + PATIENCE
    while process.poll() is None and time.time() < deadline:
        if (out / "checkpoint").exists():  # a whole checkpoint to resume from (step 20)
            process.send_signal(signal.SIGKILL)
            break
        time.sleep(0.01)
    assert process.wait(timeout=PATIENCE) == -signal.SIGKILL

    result = succeeded(run_module("run_scripts.run_classifier", *distill_flags(toy, out)))

    assert "Resuming from" in result.stderr
    final = "model.ckpt-99"
    reference = tf.train.load_checkpoint(str(distilled / final))
    resumed = tf.train.load_checkpoint(str(out / final))
    names = [n for n, _ in tf.train.list_variables(str(distilled / final))
             if n.startswith(("encoder/", "heads/")) and "OPTIMIZER_SLOT" not in n]
    assert names
    for name in names:
        np.testing.assert_array_equal(resumed.get_tensor(name), reference.get_tensor(name),
                                      err_msg=name)


def test_the_output_dir_exports_as_a_classifier(toy, distilled, tmp_path):
    succeeded(run_module("run_scripts.export_saved_model", "--export_type=classifier",
                         "--task_name=SST-2", f"--init_checkpoint={distilled}",
                         f"--vocab_file={toy['vocab']}", "--max_seq_length=16",
                         f"--export_dir={tmp_path / 'export'}"))
    (version,) = os.listdir(tmp_path / "export")
    texts = ["the movie was great", "a slow dark film", "fine music and a good cast",
             "the plot is old"]
    requests = [{"name": "served", "path": str(tmp_path / "export" / version),
                 "method": "signatures.serving_default", "kwargs": {"text_a": texts}}]
    served = serve_requests(requests, tmp_path)["served"]
    assert served["label"] == ["1", "0", "1", "0"], served


def test_bad_input_is_one_line_and_writes_nothing(toy, tmp_path):
    out = tmp_path / "out"
    student = distill_flags(toy, "")[:-1]  # every flag but --output_dir
    plain = [flag for flag in student if not flag.startswith(("--teacher", "--transfer"))]
    cases = {
        "no teacher": ([*student, f"--teacher_checkpoint={tmp_path / 'nowhere'}"],
                       [f"{tmp_path / 'nowhere'}"]),
        "two students": ([*student, "--student_layers=0"],
                         ["--bert_config_file and --student_layers both give the student's "
                          "size"]),
        "no student": ([flag for flag in student if not flag.startswith("--bert_config")],
                       ["a distillation's student needs its size: --bert_config_file"]),
        "no transfer file": ([*student, f"--transfer_data={tmp_path / 'missing.txt'}"],
                             [f"{tmp_path / 'missing.txt'}: no such file (--transfer_data)"]),
        "a distillation flag without a teacher": ([*plain, "--alpha_hidden=1"],
                                                  ["--teacher_checkpoint is needed: "
                                                   "--alpha_hidden distil"]),
        "transfer data without a teacher": ([*plain, f"--transfer_data={toy['transfer']}"],
                                            ["--transfer_data needs --teacher_checkpoint"]),
        "a teacher and a parameter-efficient method": ([*student, "--lora_rank=2"],
                                                       ["--teacher_checkpoint and LoRA rank 2",
                                                        "trains its student whole"]),
        "attention across head counts": ([*student, "--alpha_attention=1",
                                          f"--bert_config_file={toy['root']}/4heads.json"],
                                         ["--alpha_attention", "4 attention heads",
                                          "the teacher 2"]),
    }
    dataclasses.replace(BertConfig.from_json_file(toy["config"]), num_attention_heads=4
                        ).to_json_file(str(toy["root"] / "4heads.json"))
    processes = {name: start("run_scripts.run_classifier", *flags,
                             f"--output_dir={out / name.replace(' ', '_')}")
                 for name, (flags, _) in cases.items()}
    for name, process in processes.items():
        refused(outputs(process), "run_classifier: ", *cases[name][1])
        assert not snapshot(out / name.replace(" ", "_")), name


def test_a_rerun_with_other_settings_is_refused_and_changes_nothing(toy, distilled):
    """The checkpoints are a distillation's (distillation.json): resuming them with another
    temperature, or as a plain fine-tuning, would train another model on top."""
    before = snapshot(distilled)
    plain = [flag for flag in distill_flags(toy, distilled)
             if not flag.startswith(("--teacher", "--transfer"))]
    other_temperature, undistilled = run_modules(  # side by side: neither may write
        ["run_scripts.run_classifier", *distill_flags(toy, distilled), "--temperature=3"],
        ["run_scripts.run_classifier", *plain])
    refused(other_temperature,
            f"{distilled / 'distillation.json'}: the checkpoints in {distilled} were made with",
            '"temperature": 3.0')
    refused(undistilled, "distillation.json", "these flags say nothing")
    assert snapshot(distilled) == before
    # Evaluating needs no teacher: the output_dir holds the student.
    succeeded(run_module("run_scripts.run_classifier", *[f for f in plain if f != "--do_train"]))


def test_the_command_line_is_the_librarys_distillation_bit_for_bit(toy, tmp_path):
    """run_classifier --teacher_checkpoint --student_layers computes what the library's
    composition does (the task wrapped in a `DistillationTask`, the student's config the
    teacher's layers, `finetuning.run`): what run_distillation ran before the seam."""
    flags = [f for f in distill_flags(toy, tmp_path / "cli", "--num_train_epochs=1",
                                      "--student_layers=1", "--alpha_attention=1",
                                      "--alpha_cos=0.5")
             if not f.startswith(("--bert_config_file", "--transfer_data"))]
    # The command line in a process of its own, while the library trains here.
    command_line = start("run_scripts.run_classifier", *flags)

    settings = DistillationSettings(toy["teacher"], student_layers=(1,), alpha_attention=1.0,
                                    alpha_cosine=0.5)
    teacher_config = BertConfig.from_json_file(toy["config"])
    options = finetuning.FinetuningOptions(
        bert_config_file=toy["config"], output_dir=str(tmp_path / "library"),
        vocab_file=toy["vocab"], max_seq_length=16, train_batch_size=16, eval_batch_size=64,
        learning_rate=2e-3, log_steps=1000, save_checkpoints_steps=20, steps_per_loop=1000,
        num_train_epochs=1.0, do_train=True, do_eval=True)
    processor = glue.get_processor("SST-2", toy["student_data"])
    task = ClassificationTask(processor.name, processor.get_labels(), "SST-2.tsv")
    data = ClassifierData(processor, toy["student_data"], None, 16, toy["vocab"], True,
                          options.output_dir)

    class Student(Adaptation):
        def config(self, config, source):
            return settings.student_config(teacher_config), source

    try:
        finetuning.run(options, DistillationTask(task, settings), data, [Student()])
    except BaseException:
        command_line.kill()
        raise
    succeeded(outputs(command_line))
    prefixes = [tf.train.latest_checkpoint(str(tmp_path / name)) for name in ("cli", "library")]
    assert os.path.basename(prefixes[0]) == os.path.basename(prefixes[1])
    readers = [tf.train.load_checkpoint(prefix) for prefix in prefixes]
    names = [n for n, _ in tf.train.list_variables(prefixes[0])
             if n.startswith(("encoder/", "heads/")) and "OPTIMIZER_SLOT" not in n]
    assert names
    for name in names:
        np.testing.assert_array_equal(readers[0].get_tensor(name), readers[1].get_tensor(name),
                                      err_msg=name)


def test_general_distillation_from_a_pretrained_teacher(pretraining_records, tmp_path):
    """run_pretraining --teacher_checkpoint: a 1-layer student of a 2-layer teacher released as
    the original's bert_model.ckpt learns on the soft masked-LM targets, the masked-LM loss and
    the cosine of the last layers; its output_dir is a pretraining one (resuming is the
    Trainer's, shown after a SIGKILL above)."""
    records = pretraining_records
    teacher, student = tmp_path / "release", tmp_path / "student"
    config = BertConfig.from_json_file(records["bert_config_file"])
    tf1.write(original_weights(config), str(teacher / "bert_model.ckpt"))
    config.to_json_file(str(teacher / "bert_config.json"))
    shape = ("--max_seq_length=32", "--max_predictions_per_seq=5", "--train_batch_size=8",
             "--learning_rate=1e-3", "--log_steps=5", f"--input_file={records['input_file']}")
    distill = (*shape, f"--teacher_checkpoint={teacher}", "--student_layers=1", "--alpha_cos=1",
               f"--output_dir={student}", "--do_train", "--do_eval", "--max_eval_steps=2")

    result = succeeded(run_module("run_scripts.run_pretraining", *distill,
                                  "--num_train_steps=10"))

    assert "soft_masked_lm" in result.stderr and "cosine_loss" in result.stderr
    config = BertConfig.from_json_file(str(student / "bert_config.json"))
    assert config.num_hidden_layers == 1
    evaluated = eval_results(student / "eval_results.txt")
    assert int(evaluated["global_step"]) == 10 and "masked_lm_accuracy" in evaluated
    assert "next_sentence_accuracy" not in evaluated  # DistilBERT's losses: no next sentence
    names = [n for n, _ in tf.train.list_variables(str(student / "model.ckpt-10"))]
    assert any(n.startswith("heads/masked_lm/") for n in names)
    assert not [n for n in names if "teacher" in n]
