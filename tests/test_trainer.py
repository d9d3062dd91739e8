"""The training loop's own promises: gradient accumulation, eval results in the original's format.

(Resuming, preemption and the entry point are in test_run_pretraining.py; several workers in
test_distributed_training.py.)
"""

import keras
import numpy as np

from official.tasks.pretraining import PretrainingTask
from official.training.trainer import write_eval_results
from tests import distributed_worker


class _BatchSizeSpy(PretrainingTask):
    """Records the batch size each traced loss computation sees."""

    def __init__(self):
        super().__init__()
        self.batch_sizes = []

    def loss_and_stats(self, outputs, features, normalizers):
        self.batch_sizes.append(features["masked_lm_weights"].shape[0])
        return super().loss_and_stats(outputs, features, normalizers)


def test_accumulated_micro_batches_give_the_big_batch_update(tmp_path):
    whole = distributed_worker.train(str(tmp_path / "whole"))
    spy = _BatchSizeSpy()
    accumulated = distributed_worker.train(str(tmp_path / "micro"), gradient_accumulation_steps=4,
                                           task=spy)
    # The loss really ran on micro-batches of 8 / 4 rows ...
    assert set(spy.batch_sizes) == {distributed_worker.GLOBAL_BATCH // 4}
    # ... and three updates of clipped AdamW agree with the one-batch run.
    np.testing.assert_allclose(accumulated, whole, atol=2e-6)


def test_variables_the_loss_does_not_use_are_left_alone(tmp_path):
    """Without the next-sentence loss the pooler and its head get no gradient: as with the
    original's optimiser, they are not updated, not even by weight decay."""
    initial = distributed_worker.build_model()
    trained = distributed_worker.train_model(
        str(tmp_path), gradient_accumulation_steps=2, task=PretrainingTask(next_sentence=False))
    for before, after in zip(initial.weights, trained.weights):
        unused = "pooler" in after.path or "next_sentence" in after.path
        same = np.array_equal(keras.ops.convert_to_numpy(before),
                              keras.ops.convert_to_numpy(after))
        assert same == unused, after.path


def test_eval_results_are_written_as_the_original_does(tmp_path):
    path = tmp_path / "eval_results.txt"
    write_eval_results(str(path), {"masked_lm_accuracy": 0.5, "loss": 2.0 / 3.0,
                                   "masked_lm_loss": 7.25}, step=1000)
    assert path.read_text() == ("global_step = 1000\n"
                                "loss = 0.6666667\n"
                                "masked_lm_accuracy = 0.5\n"
                                "masked_lm_loss = 7.25\n")
