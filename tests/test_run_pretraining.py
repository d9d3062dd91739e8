"""run_pretraining end to end, as a user runs it: train, eval, resume, preemption, bad input.

Each run is a process of its own (tests/cli.py; the entry point turns on TensorFlow's op
determinism for the whole process), on TFRecords that data_prep makes from the shipped sample
(conftest.pretraining_records), the model at one layer (tests/pretraining_helpers.py).
"""

import os
import signal
import subprocess
import time

import numpy as np
import pytest
import tensorflow as tf

from official import checkpoints
from official.checkpoints import tf1
from official.configs import BertConfig
from official.modeling.encoder import build_encoder
from tests.checkpoint_helpers import original_weights
from tests.cli import PATIENCE, REPO, lines_until, run_module, run_modules, start
from tests.pretraining_helpers import one_layer


def command(data, output_dir, *flags):
    """run_pretraining's module and flags (tests/cli.py's `start`)."""
    return ["run_scripts.run_pretraining", f"--input_file={data['input_file']}",
            f"--output_dir={output_dir}",
            f"--bert_config_file={data['bert_config_file']}", "--max_seq_length=32",
            "--max_predictions_per_seq=5", "--train_batch_size=8", "--eval_batch_size=8",
            "--learning_rate=1e-3", "--num_warmup_steps=2", *flags]


def run(data, output_dir, *flags):
    return run_module(*command(data, output_dir, *flags))


def succeeded(result):
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Traceback" not in result.stderr
    return result.stderr


@pytest.fixture(scope="module")
def records(pretraining_records, tmp_path_factory):
    """conftest.pretraining_records with its model at one layer (tests/pretraining_helpers.py)."""
    return one_layer(pretraining_records, tmp_path_factory.mktemp("one_layer"))


def eval_results(output_dir):
    lines = open(os.path.join(output_dir, "eval_results.txt")).read().splitlines()
    return dict(line.split(" = ") for line in lines)


@pytest.fixture(scope="module")
def resumed(records, tmp_path_factory):
    """12 steps and an eval in one run, then the same command again after its step-12
    checkpoint is removed, so that it resumes at step 6; both start from an original TF1
    checkpoint (--init_checkpoint, as a user reruns the whole command): {"init": the TF1
    weights, "straight" and "resumed": the weights at step 12, "first": the first run's stderr,
    files and eval results, "log": the rerun's stderr, "out": the output_dir}."""
    root = tmp_path_factory.mktemp("resumed")
    config = BertConfig.from_json_file(records["bert_config_file"])
    init = original_weights(config)
    tf1.write(init, str(root / "release" / "bert_model.ckpt"))
    out = root / "out"
    flags = ["--do_train", "--do_eval", "--num_train_steps=12", "--save_checkpoints_steps=6",
             "--log_steps=6", "--iterations_per_loop=3", "--max_eval_steps=4",
             "--dynamic_masking", f"--vocab_file={records['vocab_file']}",
             f"--init_checkpoint={root / 'release'}"]
    first = {"log": succeeded(run(records, out, *flags)), "files": set(os.listdir(out)),
             "train_events": os.listdir(out / "train"), "results": eval_results(out)}
    straight = checkpoints.read_weights(str(out / "model.ckpt-12"))
    for name in os.listdir(out):
        if name.startswith("model.ckpt-12."):
            os.remove(out / name)
    tf.compat.v1.train.update_checkpoint_state(str(out), str(out / "model.ckpt-6"))

    log = succeeded(run(records, out, *flags))
    return {"init": init, "straight": straight, "first": first, "log": log, "out": out,
            "resumed": checkpoints.read_weights(str(out / "model.ckpt-12"))}


def test_train_then_eval_and_the_output_dir_starts_the_next_job(resumed, records, tmp_path):
    """The resumed fixture's first run: trained, evaluated, and its output_dir read as the next
    job's --init_checkpoint (where the rerun wrote the same weights again)."""
    log, out = resumed["first"]["log"], resumed["out"]
    assert "step 6/12" in log and "step 12/12" in log and "ETA" in log
    assert {"model.ckpt-6.index", "model.ckpt-12.index", "checkpoint", "bert_config.json",
            "eval_results.txt", "train", "eval"} <= resumed["first"]["files"]
    assert resumed["first"]["train_events"], "no TensorBoard events"
    results = resumed["first"]["results"]
    assert sorted(results) == ["global_step", "loss", "masked_lm_accuracy", "masked_lm_loss",
                               "next_sentence_accuracy", "next_sentence_loss"]
    assert results["global_step"] == "12"
    assert 0 < float(results["masked_lm_loss"]) < np.log(30522) + 1

    # The output dir is an --init_checkpoint: the encoder and both heads, under original names.
    weights = checkpoints.read_weights(str(out))
    assert "cls/predictions/output_bias" in weights
    assert "cls/seq_relationship/output_weights" in weights
    encoder = build_encoder(BertConfig.from_json_file(str(out / "bert_config.json")))
    checkpoints.load_init_checkpoint(str(out), encoder)
    earlier = checkpoints.read_weights(str(out / "model.ckpt-6"))
    assert not np.array_equal(earlier["bert/pooler/dense/kernel"],
                              weights["bert/pooler/dense/kernel"])

    # Evaluating from it in another directory gives the same figures as at the end of training.
    again = tmp_path / "again"
    succeeded(run(records, again, "--do_eval", f"--init_checkpoint={out}",
                  "--max_eval_steps=4"))
    assert {k: v for k, v in eval_results(again).items() if k != "global_step"} == {
        k: v for k, v in results.items() if k != "global_step"}


def test_resumed_run_reaches_the_same_weights(resumed):
    """2N steps in one run == N steps, a restart of the same command, N more (dropout on,
    dynamic masking on, so the input iterator and random states must be restored too; and the
    restart's weights are the checkpoint's, not --init_checkpoint's).

    The interruption is made exact: after an uninterrupted run, its step-2N checkpoint is
    removed, as if the process had died right after saving step N.
    """
    assert "Resuming from" in resumed["log"] and "model.ckpt-6 at step 6" in resumed["log"]
    straight, again = resumed["straight"], resumed["resumed"]
    assert straight.keys() == again.keys()
    for name in straight:
        np.testing.assert_array_equal(straight[name], again[name], err_msg=name)


def _start_until(data, output_dir, ready, *flags):
    """Starts a long run and returns it once `ready()` holds."""
    process = start(*command(data, output_dir, "--do_train", "--num_train_steps=100000",
                             "--iterations_per_loop=1", *flags), stdout=subprocess.DEVNULL)
    deadline = time.time() + PATIENCE
    while not ready():
        assert process.poll() is None, process.stderr.read()[-3000:]
        assert time.time() < deadline, "the run did not get going"
        time.sleep(0.2)
    return process


def test_sigterm_saves_and_a_rerun_resumes(records, tmp_path):
    out = tmp_path / "out"
    process = _start_until(records, out, lambda: (out / "train").exists(),
                           "--save_checkpoints_steps=100000", "--log_steps=1")
    said = lines_until(process.stderr, r"\bstep [1-9]\d*/")  # a step is done
    process.send_signal(signal.SIGTERM)
    _, rest = process.communicate(timeout=PATIENCE)
    stderr = said + rest
    assert process.returncode == 143, stderr[-3000:]
    assert "Traceback" not in stderr
    assert "SIGTERM" in stderr.strip().splitlines()[-1]
    saved = [f for f in os.listdir(out) if f.endswith(".index")]
    assert len(saved) == 1, saved
    step = int(saved[0][len("model.ckpt-"):-len(".index")])
    assert step >= 1

    log = succeeded(run(records, out, "--do_train", f"--num_train_steps={step + 1}",
                        "--log_steps=1"))
    assert f"Resuming from {out}/model.ckpt-{step} at step {step}" in log
    assert f"step {step + 1}/{step + 1}" in log


@pytest.fixture(scope="module")
def contiguous_records(records, tmp_path_factory):
    """Records of one stretch of text each (create_pretraining_data --objective=none)."""
    from data_prep import fast_generation
    from data_prep.pretraining_options import PretrainingDataOptions

    data_dir = tmp_path_factory.mktemp("contiguous")
    fast_generation.generate(
        [os.path.join(REPO, "tests", "data", "pretraining_sample.txt")], str(data_dir),
        records["vocab_file"], True,
        PretrainingDataOptions(max_seq_length=32, max_predictions_per_seq=5, dupe_factor=1,
                               objective="none"))
    return str(data_dir / "*.tfrecord")


def test_mlm_only_data_has_no_next_sentence_metrics(records, contiguous_records,
                                                    tmp_path):
    data = dict(records, input_file=contiguous_records)
    succeeded(run(data, tmp_path / "out", "--do_eval", "--max_eval_steps=2"))
    assert sorted(eval_results(tmp_path / "out")) == [
        "global_step", "loss", "masked_lm_accuracy", "masked_lm_loss"]


@pytest.fixture(scope="module")
def second_sentence_runs(records, contiguous_records, tmp_path_factory):
    """From an original TF1 checkpoint with both heads, side by side: three steps without the
    second-sentence loss; three with it, evaluated on held-out contiguous records; three of
    a probe of the frozen pooled output; the probe's bad flags."""
    root = tmp_path_factory.mktemp("second_sentence")
    config = BertConfig.from_json_file(records["bert_config_file"])
    init = original_weights(config, seed=5)
    tf1.write(init, str(root / "release" / "bert_model.ckpt"))
    start = [f"--init_checkpoint={root / 'release'}", "--do_train", "--do_eval",
             "--num_train_steps=3", "--max_eval_steps=2", "--log_steps=1"]
    runs = side_by_side(records, root, {
        "no_loss": [*start, "--nosecond_sentence_loss"],
        "held_out": [*start, f"--eval_input_file={contiguous_records}"],
        "probe": [*start, "--probe_second_sentence", "--learning_rate=0.1"],
        "probe_alone": ["--do_train", "--num_train_steps=3", "--probe_second_sentence"],
        "probe_ltr": [*start, "--probe_second_sentence", "--objective=ltr"],
    })
    probe_of_text = side_by_side(dict(records, input_file=contiguous_records), root,
                                 {"probe_of_text": [*start, "--probe_second_sentence"]})
    return {"init": init, **runs, **probe_of_text}


def test_without_the_second_sentence_loss_its_head_learns_nothing(second_sentence_runs):
    out, result = second_sentence_runs["no_loss"]
    log = succeeded(result)
    assert "its second-sentence loss left out" in log and "nsp_loss" not in log
    assert "next_sentence_accuracy" not in eval_results(out)
    weights, init = checkpoints.read_weights(str(out)), second_sentence_runs["init"]
    # The head and the pooler under it get no gradient; the masked LM trains the layers.
    for name in ("cls/seq_relationship/output_weights", "cls/seq_relationship/output_bias",
                 "bert/pooler/dense/kernel"):
        np.testing.assert_array_equal(weights[name], init[name])
    assert not np.array_equal(weights["bert/encoder/layer_0/attention/self/query/kernel"],
                              init["bert/encoder/layer_0/attention/self/query/kernel"])


def test_held_out_records_of_another_objective_are_scored_as_they_are(second_sentence_runs):
    out, result = second_sentence_runs["held_out"]
    assert "nsp_loss" in succeeded(result)  # trained with the records' next-sentence loss
    assert sorted(eval_results(out)) == ["global_step", "loss", "masked_lm_accuracy",
                                         "masked_lm_loss"]


def test_a_probe_trains_a_fresh_second_sentence_head_and_nothing_else(second_sentence_runs):
    out, result = second_sentence_runs["probe"]
    log = succeeded(result)
    assert "a probe of the nsp head, encoder frozen" in log
    assert "cls/seq_relationship/* of " in log and "left out: that head starts fresh" in log
    weights, init = checkpoints.read_weights(str(out)), second_sentence_runs["init"]
    assert weights.keys() == init.keys()
    head = ("cls/seq_relationship/output_weights", "cls/seq_relationship/output_bias")
    for name in weights:
        if name not in head:
            np.testing.assert_array_equal(weights[name], init[name], err_msg=name)
    # Fresh (not the checkpoint's head), then trained: neither its initialisation's zero bias
    # nor the checkpoint's.
    assert not np.array_equal(weights[head[1]], init[head[1]])
    assert np.abs(weights[head[1]]).max() > 0
    assert "next_sentence_accuracy" in eval_results(out)


@pytest.mark.parametrize("case, message", [
    ("probe_alone", "--probe_second_sentence trains a head on a checkpoint: it needs "
                    "--init_checkpoint"),
    ("probe_ltr", "not with --objective=ltr"),
    ("probe_of_text", "have no second sentence to tell apart")])
def test_a_probe_without_its_checkpoint_or_second_sentences_is_one_line(second_sentence_runs,
                                                                        case, message):
    _, result = second_sentence_runs[case]
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert message in result.stderr.strip().splitlines()[-1]


def test_an_original_tf1_checkpoint_initialises_pretraining(resumed):
    """The resumed runs started from one: 12 steps of learning rate 1e-3 move no weight by 0.1,
    while a random start is 0.2-scale away from the checkpoint's (original_weights)."""
    for name, value in resumed["init"].items():
        np.testing.assert_allclose(resumed["straight"][name], value, atol=0.1, err_msg=name)


def side_by_side(data, root, flags: dict) -> dict:
    """{name: (output_dir, result)}: `run(data, root / name, *flags[name])` for every name,
    the runs side by side (each a process of its own)."""
    return {name: (root / name, result) for name, result in zip(
        flags, run_modules(*(command(data, root / name, *flags[name]) for name in flags)))}


BAD_INPUTS = {
    "no_records": (["--do_train", "--input_file=/nonexistent/*.tfrecord"],
                   "/nonexistent/*.tfrecord"),
    "records_of_another_length": (["--do_train", "--max_seq_length=16"],
                                  "expected max_seq_length=16"),
    "nothing_to_do": (["--num_train_steps=1"], "do_train or do_eval"),
    "uneven_micro_batches": (["--do_train", "--train_batch_size=6",
                              "--gradient_accumulation_steps=4"], "train_batch_size=6"),
    "masking_without_vocab": (["--do_train", "--dynamic_masking"], "needs --vocab_file"),
    "restart_input_of_nothing": (["--do_train", "--restart_input"],
                                 "holds no checkpoint to go on from"),
}


@pytest.fixture(scope="module")
def bad_input_runs(records, tmp_path_factory):
    """Every BAD_INPUTS command, side by side: {case: (output_dir, result)}."""
    return side_by_side(records, tmp_path_factory.mktemp("bad_input"),
                        {case: flags for case, (flags, _) in BAD_INPUTS.items()})


@pytest.mark.parametrize("case", BAD_INPUTS)
def test_bad_input_is_one_line(bad_input_runs, case):
    _, result = bad_input_runs[case]
    message = BAD_INPUTS[case][1]
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("run_pretraining: ") and message in last, last


MIXED_PRECISION = {
    "bfloat16_xla": ["--dtype=bfloat16", "--jit_compile"],
    "float16_lamb_mirrored": ["--dtype=float16", "--optimizer=lamb",
                              "--gradient_accumulation_steps=2",
                              "--distribution_strategy=mirrored"],
}


@pytest.fixture(scope="module")
def mixed_precision_runs(records, tmp_path_factory):
    """Both MIXED_PRECISION runs, side by side: {case: (output_dir, result)}."""
    return side_by_side(records, tmp_path_factory.mktemp("mixed_precision"),
                        {case: ["--do_train", "--do_eval", "--num_train_steps=3",
                                "--max_eval_steps=2", *flags]
                         for case, flags in MIXED_PRECISION.items()})


@pytest.mark.parametrize("case", MIXED_PRECISION)
def test_mixed_precision_xla_lamb_and_mirrored_runs(mixed_precision_runs, case):
    out, result = mixed_precision_runs[case]
    succeeded(result)
    results = eval_results(out)
    assert results["global_step"] == "3"
    assert 0 < float(results["loss"]) < np.log(30522) + 1
    weights = checkpoints.read_weights(str(out))
    assert weights["bert/embeddings/word_embeddings"].dtype == np.float32
