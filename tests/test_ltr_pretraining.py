"""run_pretraining --objective=ltr: the BERT paper's left-to-right ablation ("LTR & No NSP").

The input pipeline undoes the records' masking and makes every position predict the next token
(official/training/pretraining_input.next_token_batch), checked on a hand-made record and against
numpy on random ones; the task reports the masked-LM loss under next-token names. End to end, a
tiny run writes a bert_config.json with causal attention, resumes against it, and its eval
next_token_loss is a float64 numpy BERT's next-token cross-entropy, causal mask and all, for
the checkpoint it wrote, and below that of the weights it started from. Bad flags are one line
before TensorFlow loads.
"""

import json
import math
import os

import numpy as np
import pytest
import tensorflow as tf

from data_prep import pretraining_examples as pe
from official import checkpoints
from official.checkpoints import tf1
from official.configs import BertConfig
from official.pretraining_shards import expand_input_files
from official.tasks.pretraining import PretrainingTask
from official.training import pretraining_input as pi
from tests.checkpoint_helpers import original_weights
from tests.cli import ENV, REPO, eval_results, refused, run_modules, succeeded
from tests.numpy_bert import head_log_probs
from tests.pretraining_helpers import one_layer
from tests.test_masking_mix import as_tensors, stored_batch
from tests.test_run_pretraining import command

CLS, SEP, MASK = 101, 102, 103
WITHOUT_TENSORFLOW = dict(ENV, PYTHONPATH=os.pathsep.join(
    [os.path.join(REPO, "tests", "without_tensorflow"), ENV["PYTHONPATH"]]))


def test_a_hand_made_records_next_tokens_are_its_text_shifted_by_one(tmp_path):
    """[CLS] 7 [MASK] 55 [SEP], which stored 8 and 9 at positions 2 and 3 (55 a random
    replacement), reads as the text [CLS] 7 8 9 [SEP]; each position predicts the one after it,
    [SEP] and the padding nothing."""
    path = str(tmp_path / "one.tfrecord")
    with pe.open_shard(path) as shard:
        shard.write(pe.make_example([CLS, 7, MASK, 55, SEP], [0, 0, 0, 1, 1], [2, 3], [8, 9], 1,
                                    max_seq_length=8, max_predictions_per_seq=3))
    batch = next(iter(pi.pretraining_dataset([path], max_seq_length=8, max_predictions_per_seq=3,
                                             batch_size=1, is_training=False, next_token=True)))
    batch = {name: value.numpy()[0] for name, value in batch.items()}
    np.testing.assert_array_equal(batch["input_word_ids"], [CLS, 7, 8, 9, SEP, 0, 0, 0])
    np.testing.assert_array_equal(batch["masked_lm_positions"], [0, 1, 2, 3, 4, 5, 6])
    np.testing.assert_array_equal(batch["masked_lm_ids"], [7, 8, 9, SEP, 0, 0, 0])
    np.testing.assert_array_equal(batch["masked_lm_weights"], [1, 1, 1, 1, 0, 0, 0])
    np.testing.assert_array_equal(batch["input_type_ids"], [0, 0, 0, 1, 1, 0, 0, 0])
    assert batch["next_sentence_labels"] == 1


def test_next_token_batches_are_the_unmasked_text_shifted_by_one_as_numpy_makes_them():
    text, features = stored_batch(7, rows=50)
    out = pi.next_token_batch(as_tensors(features))  # the pipeline's int32 and float32
    out = {name: value.numpy() for name, value in out.items()}
    # numpy: the stored [MASK]s put back from masked_lm_ids, then shifted by one.
    ids = features["input_word_ids"].copy()
    for row in range(len(ids)):
        used = features["masked_lm_weights"][row] > 0
        ids[row, features["masked_lm_positions"][row, used]] = features["masked_lm_ids"][row, used]
    np.testing.assert_array_equal(ids, text)
    np.testing.assert_array_equal(out["input_word_ids"], ids)
    np.testing.assert_array_equal(out["masked_lm_ids"], ids[:, 1:])
    np.testing.assert_array_equal(out["masked_lm_weights"], features["input_mask"][:, 1:])
    np.testing.assert_array_equal(out["masked_lm_positions"],
                                  np.tile(np.arange(ids.shape[1] - 1), (len(ids), 1)))
    assert out["masked_lm_weights"].dtype == np.float32
    for name in ("input_mask", "input_type_ids", "next_sentence_labels"):
        np.testing.assert_array_equal(out[name], features[name])


def test_the_next_token_task_reports_its_loss_under_its_own_names():
    task = PretrainingTask(next_sentence=False, next_token=True)
    metrics = task.metrics({"masked_lm_loss_sum": 12.0, "masked_lm_correct": 3.0,
                            "masked_lm_weight": 6.0, "examples": 2.0})
    assert metrics == {"next_token_accuracy": 0.5, "next_token_loss": 2.0,
                       "perplexity": pytest.approx(math.exp(2.0)), "loss": 2.0}
    assert task.metrics({"masked_lm_loss_sum": 1e6, "masked_lm_correct": 0.0,
                         "masked_lm_weight": 1.0, "examples": 1.0})["perplexity"] == math.inf
    with pytest.raises(ValueError, match="without a second-sentence objective"):
        PretrainingTask(next_sentence=True, next_token=True)
    with pytest.raises(ValueError, match="not masked"):
        pi.pretraining_dataset(["x"], max_seq_length=8, max_predictions_per_seq=2, batch_size=1,
                               is_training=False, next_token=True,
                               dynamic_masking=pi.DynamicMasking(10, 3, (0, 1, 2)))


def next_token_loss_sum(w, config, ids, mask, segments):
    """(sum of -log P(token t+1 | tokens <= t) over real next tokens, their number) of one row,
    by the float64 numpy BERT with causal attention (tests/numpy_bert.py)."""
    log_probs = head_log_probs(w, config, ids, mask, segments, causal=True)[:-1]
    predicted = mask[1:] > 0
    return -log_probs[np.arange(len(ids) - 1), ids[1:]][predicted].sum(), predicted.sum()


def first_records(input_file, count):
    """The first `count` records eval reads (the files in order), unmasked in numpy."""
    rows = []
    for record in tf.data.TFRecordDataset(expand_input_files(input_file)).take(count):
        feature = tf.train.Example.FromString(record.numpy()).features.feature
        get = {name: np.array(feature[name].int64_list.value) for name in
               ("input_ids", "input_mask", "segment_ids", "masked_lm_positions",
                "masked_lm_ids")}
        weights = np.array(feature["masked_lm_weights"].float_list.value) > 0
        ids = get["input_ids"].copy()
        ids[get["masked_lm_positions"][weights]] = get["masked_lm_ids"][weights]
        rows.append((ids, get["input_mask"], get["segment_ids"]))
    return rows


def numpy_next_token_loss(weights, config, rows):
    sums = [next_token_loss_sum(weights, config, *row) for row in rows]
    return sum(s for s, _ in sums) / sum(n for _, n in sums)


@pytest.fixture(scope="module")
def ltr_run(pretraining_records, tmp_path_factory):
    """6 left-to-right steps from an original TF1 checkpoint, then the same command to step 12
    with --do_eval (it resumes at 6); beside them, the bad flags' runs, without TensorFlow. The
    model at one layer (tests/pretraining_helpers.py)."""
    root = tmp_path_factory.mktemp("ltr")
    records = one_layer(pretraining_records, root)
    config = BertConfig.from_json_file(records["bert_config_file"])
    init = original_weights(config)
    # Logits of a few units, so that what a position sees matters: at N(0, 0.2) weights alone the
    # predictions are near uniform, and a model that saw the next token would score within
    # 2e-4 of one that did not (here, at one layer, 0.25% at the start, 5e-4 after 12 steps).
    init["bert/embeddings/word_embeddings"] *= 5
    init["cls/predictions/transform/LayerNorm/gamma"] += 1
    tf1.write(init, str(root / "release" / "bert_model.ckpt"))
    out = root / "out"
    flags = ["--objective=ltr", "--do_train", "--save_checkpoints_steps=6", "--log_steps=3",
             f"--init_checkpoint={root / 'release'}"]
    bad_objective, with_teacher, with_mix = run_modules(
        command(records, root / "bad", "--do_train", "--objective=rtl"),
        command(records, root / "bad", "--do_train", "--objective=ltr",
                f"--teacher_checkpoint={root / 'release'}"),
        command(records, root / "bad", "--do_train", "--objective=ltr",
                "--dynamic_masking", "--masking_mix=1,0,0"),
        env=WITHOUT_TENSORFLOW)
    first, = run_modules(command(records, out, *flags, "--num_train_steps=6"))
    succeeded(first)
    second, = run_modules(command(records, out, *flags, "--num_train_steps=12",
                                  "--do_eval", "--max_eval_steps=2"))
    return {"config": config, "init": init, "out": out, "log": succeeded(second).stderr,
            "bad_objective": bad_objective, "with_teacher": with_teacher, "with_mix": with_mix,
            "root": root}


def test_the_run_writes_a_causal_config_and_resumes_against_it(ltr_run):
    out = ltr_run["out"]
    written = json.loads((out / "bert_config.json").read_text())
    assert written["causal_attention"] is True
    assert {k: v for k, v in written.items() if k != "causal_attention"} == \
        ltr_run["config"].to_dict()
    assert f"Resuming from {out}/model.ckpt-6 at step 6" in ltr_run["log"]
    assert "left to right, causal attention" in ltr_run["log"]


def test_the_eval_loss_is_numpys_next_token_cross_entropy_and_fell(ltr_run, pretraining_records):
    results = eval_results(ltr_run["out"] / "eval_results.txt")
    assert sorted(results) == ["global_step", "loss", "next_token_accuracy", "next_token_loss",
                               "perplexity"]
    assert results["global_step"] == "12"
    rows = first_records(pretraining_records["input_file"], 2 * 8)  # --max_eval_steps=2 of 8
    trained = numpy_next_token_loss(checkpoints.read_weights(str(ltr_run["out"])),
                                    ltr_run["config"], rows)
    loss = float(results["next_token_loss"])
    # float32 against float64 agree to 1e-7 here; without the causal mask numpy is 5e-4 away.
    assert loss == pytest.approx(trained, rel=2e-6)
    assert float(results["loss"]) == loss
    assert float(results["perplexity"]) == pytest.approx(math.exp(loss), rel=1e-5)
    assert trained < numpy_next_token_loss(ltr_run["init"], ltr_run["config"], rows)


def test_bad_ltr_flags_are_one_line_before_tensorflow(ltr_run):
    refused(ltr_run["bad_objective"], "run_pretraining: --objective must be one of mlm, ltr, "
            "got 'rtl'")
    refused(ltr_run["with_teacher"], "run_pretraining: --objective=ltr and --teacher_checkpoint")
    refused(ltr_run["with_mix"], "run_pretraining: --masking_mix=1.0,0.0,0.0: --objective=ltr "
            "masks nothing")
    assert not (ltr_run["root"] / "bad").exists()
