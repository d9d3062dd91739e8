"""Tests for official/training/summaries.py: curves written by tf.summary's own writer, and an
eval_results.txt in the original's `key = value` layout, read back."""

import pytest
import tensorflow as tf

from official.training.summaries import read_eval_results, read_scalars


def test_read_scalars_gives_every_tag_by_step(tmp_path):
    for run in range(2):  # two event files, as a resumed run leaves
        writer = tf.summary.create_file_writer(str(tmp_path / "train"))
        with writer.as_default():
            for step in (1, 2) if run == 0 else (3,):
                tf.summary.scalar("loss", 10.0 - step, step=step)
                tf.summary.scalar("masked_lm_accuracy", 0.25 * step, step=step)
        writer.close()
    assert read_scalars(str(tmp_path / "train")) == {
        1: {"loss": 9.0, "masked_lm_accuracy": 0.25},
        2: {"loss": 8.0, "masked_lm_accuracy": 0.5},
        3: {"loss": 7.0, "masked_lm_accuracy": 0.75}}
    assert read_scalars(str(tmp_path / "no_such_dir")) == {}


def test_read_eval_results(tmp_path):
    path = tmp_path / "eval_results.txt"
    path.write_text("eval_accuracy = 0.8125\nglobal_step = 300\nloss = 0.53\n")
    assert read_eval_results(str(path)) == {"eval_accuracy": 0.8125, "global_step": 300.0,
                                            "loss": 0.53}
    path.write_text("eval_accuracy: 0.8\n")
    with pytest.raises(ValueError, match=r"eval_results.txt:1: expected 'key = value'"):
        read_eval_results(str(path))
