"""official.tasks.squad: the span loss against the original's formula in numpy, its additivity
over micro-batches, and the evaluation glue."""

import numpy as np
import pytest

from official.tasks import squad
from official.tasks.squad_decoding import SquadPredictions


def original_loss(start_logits, end_logits, start_positions, end_positions):
    """google-research/bert run_squad's compute_loss, in numpy: mean over the batch of
    -sum(one_hot * log_softmax), for start and for end, halved."""
    def compute_loss(logits, positions):
        log_probs = logits - np.log(np.sum(np.exp(logits - logits.max(-1, keepdims=True)), -1,
                                           keepdims=True)) - logits.max(-1, keepdims=True)
        one_hot = np.eye(logits.shape[-1])[positions]
        return -np.mean(np.sum(one_hot * log_probs, axis=-1))
    return (compute_loss(start_logits, start_positions)
            + compute_loss(end_logits, end_positions)) / 2.0


def batch(seed=0, rows=6, seq_len=10):
    rng = np.random.default_rng(seed)
    outputs = {"start_logits": rng.normal(size=(rows, seq_len)).astype("float32"),
               "end_logits": rng.normal(size=(rows, seq_len)).astype("float32")}
    features = {"start_positions": rng.integers(0, seq_len, rows).astype("int32"),
                "end_positions": rng.integers(0, seq_len, rows).astype("int32")}
    return outputs, features


def test_loss_is_the_originals():
    task = squad.SquadTask()
    outputs, features = batch()
    loss, stats = task.loss_and_stats(outputs, features, task.normalizers(features))
    expected = original_loss(outputs["start_logits"].astype(np.float64),
                             outputs["end_logits"].astype(np.float64),
                             features["start_positions"], features["end_positions"])
    np.testing.assert_allclose(loss.numpy(), expected, rtol=1e-5)
    metrics = task.metrics({k: v.numpy() for k, v in stats.items()})
    assert metrics["loss"] == pytest.approx(expected, rel=1e-5)
    starts = np.argmax(outputs["start_logits"], -1) == features["start_positions"]
    assert metrics["start_accuracy"] == pytest.approx(starts.mean())
    assert stats["examples"].numpy() == 6


def test_micro_batches_with_global_normalizers_add_up_to_the_whole_batch():
    task = squad.SquadTask()
    outputs, features = batch(seed=1)
    whole, _ = task.loss_and_stats(outputs, features, task.normalizers(features))
    halves = [{k: v[i:i + 3] for k, v in d.items()} for d in (outputs, features) for i in (0, 3)]
    normalizers = task.normalizers(features)  # summed over the whole batch
    parts = [task.loss_and_stats(halves[i], halves[2 + i], normalizers)[0] for i in (0, 1)]
    np.testing.assert_allclose((parts[0] + parts[1]).numpy(), whole.numpy(), rtol=1e-6)


def test_raw_results_pair_ids_with_their_logits():
    outputs = {"unique_ids": np.array([1000000001, 1000000000], "int32"),
               "start_logits": np.array([[0.5, 0.25], [1.0, 2.0]], "float32"),
               "end_logits": np.array([[0.1, 0.2], [3.0, 4.0]], "float32")}
    results = squad.raw_results(outputs)
    assert [r.unique_id for r in results] == [1000000001, 1000000000]
    assert results[1].start_logits == [1.0, 2.0]
    assert results[0].end_logits == [float(np.float32(0.1)), float(np.float32(0.2))]
    assert all(type(x) is float for x in results[0].start_logits)


def dataset(*qas):
    return {"data": [{"paragraphs": [{"context": "a b", "qas": list(qas)}]}]}


def test_check_answers_names_the_file_and_the_question():
    squad.check_answers(dataset({"id": "q1", "answers": [{"text": "a"}]}), "dev.json", False)
    squad.check_answers(dataset({"id": "q1", "answers": [], "is_impossible": True}),
                        "dev.json", True)
    for bad, v2 in [({"id": "q2", "answers": []}, False),
                    ({"id": "q2", "answers": [], "is_impossible": True}, False),
                    ({"id": "q2", "answers": []}, True),
                    ({"id": "q2"}, False),
                    ({"id": "q2", "answers": [{"answer_start": 0}]}, False)]:
        with pytest.raises(ValueError, match=r"^dev\.json: question q2: no gold answers"):
            squad.check_answers(dataset({"id": "q1", "answers": [{"text": "a"}]}, bad),
                                "dev.json", v2)


def test_evaluate_scores_v1_and_v2():
    v1 = squad.evaluate(dataset({"id": "q1", "answers": [{"text": "the red house"}]}),
                        SquadPredictions({"q1": "red"}, {}, None))
    # "red" against "red house" (articles dropped): precision 1, recall 1/2.
    assert v1 == {"exact_match": 0.0, "f1": pytest.approx(100 * 2 / 3)}

    gold = dataset({"id": "q1", "answers": [{"text": "the red house"}]},
                   {"id": "q2", "answers": []})
    # q1 answered right; q2 (unanswerable) answered "", right too.
    v2 = squad.evaluate(gold, SquadPredictions({"q1": "red house", "q2": ""}, {},
                                               {"q1": -3.0, "q2": 2.0}))
    assert v2["exact"] == 100.0 and v2["HasAns_total"] == 1 and v2["NoAns_exact"] == 100.0
    # Answering "" above null odds -3 (q1 answered, q2 not) is as good as it gets.
    assert v2["best_f1"] == 100.0 and v2["best_f1_thresh"] == -3.0
