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


def test_a_served_models_weights_are_saved_once(tmp_path):
    """Through `variables` alone: the Keras model is held, not tracked (a tracked Keras model
    would save every weight a second time)."""
    model = keras.Sequential([keras.Input((64,)), keras.layers.Dense(256)])
    module = saving.ServingModule()
    module.hold(model=model)
    module.track_variables(model, model)  # listed twice: still one copy
    module.serve = tf.function(lambda x: model(x),
                               input_signature=[tf.TensorSpec([None, 64], tf.float32)])
    path = saving.save(module, str(tmp_path))
    weights = 4 * (64 * 256 + 256)
    stored = sum(os.path.getsize(os.path.join(path, "variables", name))
                 for name in os.listdir(os.path.join(path, "variables")))
    assert weights <= stored < 1.1 * weights
    x = tf.ones([1, 64])
    assert tf.reduce_all(tf.saved_model.load(path).serve(x) == model(x))
