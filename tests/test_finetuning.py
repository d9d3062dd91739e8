"""official.training.finetuning.run: the order every fine-tuning task runs in, and its two hooks.

The task is the real ClassificationTask; its data is a `TaskData` written here, which keeps a log
of the calls and writes its records with tf.train.Example directly (not data_prep), so what the
run does with any data side is checked apart from the three that ship.
"""

import os

import numpy as np
import pytest
import tensorflow as tf

from official.adaptation import Adaptation
from official.checkpoints import tf1
from official.modeling.encoder import build_encoder
from official.modeling.models import BertClassifier
from official.tasks.base import Records
from official.tasks.classification import ClassificationTask
from official.training import finetuning

SEQ = 8
SPEC = {"input_ids": tf.io.FixedLenFeature([SEQ], tf.int64),
        "input_mask": tf.io.FixedLenFeature([SEQ], tf.int64),
        "segment_ids": tf.io.FixedLenFeature([SEQ], tf.int64),
        "label_ids": tf.io.FixedLenFeature([], tf.int64),
        "is_real_example": tf.io.FixedLenFeature([], tf.int64)}


class LoggedData:
    """A task's data side: 16 examples per split whose label is whether token 7 is in them."""

    def __init__(self, folder, bad_split=None, train_count=16):
        self.folder, self.bad_split, self.train_count = folder, bad_split, train_count
        self.log = []

    def source(self, split):
        return f"{split}.tsv"

    def read(self, splits):
        self.log.append(("read", tuple(splits)))
        if self.bad_split in splits:
            raise ValueError(f"{self.bad_split}.tsv: line 3 is bad")
        return self.train_count if "train" in splits else None

    def records(self, split):
        self.log.append(("records", split))
        rng = np.random.default_rng(len(split))
        path = os.path.join(self.folder, f"{split}.tf_record")
        with tf.io.TFRecordWriter(path) as writer:
            for _ in range(16):
                ids = rng.integers(5, 20, SEQ)
                ids[0] = 2
                values = {"input_ids": ids, "input_mask": np.ones(SEQ, int),
                          "segment_ids": np.zeros(SEQ, int), "label_ids": [int(7 in ids)],
                          "is_real_example": [1]}
                writer.write(tf.train.Example(features=tf.train.Features(feature={
                    name: tf.train.Feature(int64_list=tf.train.Int64List(value=list(value)))
                    for name, value in values.items()})).SerializeToString())
        return Records(path, SPEC, 16, 16, self.source(split))


def options(files, output_dir, **flags):
    defaults = dict(max_seq_length=SEQ, train_batch_size=4, eval_batch_size=8,
                    num_train_epochs=1.0, learning_rate=1e-3, steps_per_loop=2,
                    save_checkpoints_steps=2, log_steps=2)
    return finetuning.FinetuningOptions(**files, output_dir=str(output_dir),
                                        **dict(defaults, **flags))


def test_every_split_is_read_before_any_record_is_written(files, tmp_path):
    data = LoggedData(str(tmp_path))
    results = finetuning.run(options(files, tmp_path / "out", do_train=True, do_eval=True,
                                     do_predict=True),
                             ClassificationTask("tsv", ["0", "1"]), data)
    assert data.log == [("read", ("train", "dev", "test")), ("records", "train"),
                        ("records", "dev"), ("records", "test")]
    assert set(results) == {"dev"} and "eval_accuracy" in results["dev"]
    written = sorted(os.listdir(tmp_path / "out"))
    assert "test_results.tsv" in written and "best" in written


@pytest.mark.parametrize("data_problem, message", [
    ({"bad_split": "test"}, "test.tsv: line 3 is bad"),
    ({"train_count": 3}, "train.tsv: 3 training examples at train_batch_size=4 for 1.0 epochs "
                         "make no update"),
])
def test_bad_data_stops_the_run_before_any_record(files, tmp_path, data_problem, message):
    data = LoggedData(str(tmp_path), **data_problem)
    with pytest.raises(ValueError, match=message):
        finetuning.run(options(files, tmp_path / "out", do_train=True, do_predict=True),
                       ClassificationTask("tsv", ["0", "1"]), data)
    assert data.log == [("read", ("train", "test"))]
    assert not [name for name in os.listdir(tmp_path) if name.endswith(".tf_record")]


def test_adapt_sees_the_loaded_weights_and_what_it_freezes_stays(files, tiny_config, tmp_path):
    pretrained = build_encoder(tiny_config)
    tf1.write(tf1.weights_of(pretrained), str(tmp_path / "pretrained" / "bert_model.ckpt"))
    seen = {}

    class FrozenEncoder(Adaptation):
        def adapt(self, model):
            seen["scope"] = tf.distribute.has_strategy()
            seen["embeddings"] = model.encoder.embeddings.word_embeddings.numpy()
            seen["head"] = [w.numpy() for w in model.classifier.weights]
            model.encoder.trainable = False  # only the head trains

    # Under a strategy of its own (one replica), so that being in its scope shows.
    finetuning.run(options(files, tmp_path / "out", do_train=True,
                           init_checkpoint=str(tmp_path / "pretrained"),
                           distribution_strategy="mirrored"),
                   ClassificationTask("tsv", ["0", "1"]), LoggedData(str(tmp_path)),
                   [FrozenEncoder()])
    expected = pretrained.embeddings.word_embeddings.numpy()
    np.testing.assert_array_equal(seen["embeddings"], expected)
    assert seen["scope"]

    trained = BertClassifier(build_encoder(tiny_config), 2)
    tf.train.Checkpoint(encoder=trained.encoder, heads={"classifier": trained.classifier}).read(
        tf.train.latest_checkpoint(str(tmp_path / "out"))).expect_partial()
    for before, after in zip(pretrained.weights, trained.encoder.weights):
        np.testing.assert_array_equal(after.numpy(), before.numpy(), err_msg=before.path)
    assert not np.array_equal(trained.classifier.weights[0].numpy(), seen["head"][0])


def test_build_model_runs_in_the_strategys_scope(files, tmp_path):
    scopes = []

    class TaskWithTeacher(ClassificationTask):
        def build_model(self, encoder):
            scopes.append(tf.distribute.has_strategy())
            return super().build_model(encoder)

    finetuning.run(options(files, tmp_path / "out", do_train=True,
                           distribution_strategy="mirrored"),
                   TaskWithTeacher("tsv", ["0", "1"]), LoggedData(str(tmp_path)))
    assert scopes == [True]
