"""official/export/saving.py: versioned, atomic exports."""

import os
import time

import keras
import pytest
import tensorflow as tf

from official.export import saving


class _Doubler(tf.Module):
    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
    def __call__(self, x):
        return 2 * x


def test_versions_are_unix_times_and_increase(tmp_path):
    before = int(time.time())
    first = saving.save(_Doubler(), str(tmp_path))
    second = saving.save(_Doubler(), str(tmp_path))
    versions = sorted(int(name) for name in os.listdir(tmp_path))
    assert [os.path.basename(first), os.path.basename(second)] == [str(v) for v in versions]
    assert before <= versions[0] < versions[1]
    assert tf.saved_model.load(second)(tf.constant([1.5])).numpy().tolist() == [3.0]


def test_a_failed_save_leaves_nothing(tmp_path):
    with pytest.raises((ValueError, TypeError)):
        saving.save(_Doubler(), str(tmp_path), signatures={"serving_default": "not a function"})
    assert os.listdir(tmp_path) == []


def test_serving_module_lists_plain_variables():
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
    module = saving.ServingModule()
    module.track_variables(model)
    assert all(isinstance(v, tf.Variable) for v in module.variables)
    assert len(module.trainable_variables) == 2
