"""The optimisers against Google's original AdamWeightDecayOptimizer, a numpy LAMB and hand-computed
learning rates; and under tf.distribute and loss scaling, as the training loop uses them."""

import os
import re
import subprocess
import sys

import keras
import numpy as np
import pytest
import tensorflow as tf

from official.modeling import models
from official.modeling.encoder import build_encoder
from official.training import optimization
from tests.reference_bert import import_original

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.mark.parametrize("step, expected", [
    (0, 0.0),                     # warmup starts at 0: the first update changes only m and v
    (2, 0.1 * 2 / 4),
    (3, 0.1 * 3 / 4),             # the highest rate of this schedule
    (4, 0.1 * (1 - 4 / 10)),      # decay is counted from step 0, so it starts below 0.1
    (7, 0.1 * (1 - 7 / 10)),
    (10, 0.0),
    (15, 0.0),                    # beyond num_train_steps the rate stays 0
])
def test_schedule_with_warmup(step, expected):
    schedule = optimization.WarmupLinearDecay(0.1, num_train_steps=10, num_warmup_steps=4)
    np.testing.assert_allclose(float(schedule(step)), expected, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("step, expected", [(0, 0.1), (5, 0.05), (12, 0.0)])
def test_schedule_without_warmup(step, expected):
    schedule = optimization.WarmupLinearDecay(0.1, num_train_steps=10)
    np.testing.assert_allclose(float(schedule(step)), expected, rtol=1e-6, atol=1e-9)


def test_schedule_rejects_no_steps():
    with pytest.raises(ValueError, match="num_train_steps"):
        optimization.WarmupLinearDecay(0.1, num_train_steps=0)


# The original's create_optimizer on a few variables of one layer, named as in its checkpoints.
_SHAPES = {
    "bert/encoder/layer_0/attention/output/dense/kernel": (4, 3),
    "bert/encoder/layer_0/attention/output/dense/bias": (3,),
    "bert/encoder/layer_0/attention/output/LayerNorm/gamma": (3,),
    "bert/encoder/layer_0/attention/output/LayerNorm/beta": (3,),
}
# The gradient of sum(sin(x) * target) is cos(x) * target: these scales put its global norm on
# both sides of the clipping threshold 1.0.
_TARGET_SCALES = (0.2, 2.0, 0.1, 3.0, 0.3, 1.5, 0.5)
_INIT_LR, _TRAIN_STEPS, _WARMUP_STEPS = 0.05, 6, 2  # 7 steps: warmup, decay, and past the end


def _original_trajectory(initial, targets):
    """The variables after each step of google-research/bert's create_optimizer train_op."""
    optimization_v1 = import_original("bert.optimization")
    v1 = tf.compat.v1
    with v1.Graph().as_default(), v1.Session() as session:
        variables = {name: v1.get_variable(name, initializer=value)
                     for name, value in initial.items()}
        fed = {name: v1.placeholder(tf.float32, value.shape) for name, value in initial.items()}
        loss = tf.add_n([tf.reduce_sum(tf.sin(variables[n]) * fed[n]) for n in variables])
        train_op = optimization_v1.create_optimizer(loss, _INIT_LR, _TRAIN_STEPS, _WARMUP_STEPS,
                                                    use_tpu=False)
        session.run(v1.global_variables_initializer())
        trajectory = []
        for step_targets in targets:
            session.run(train_op, {fed[n]: step_targets[n] for n in fed})
            trajectory.append(session.run(variables))
    return trajectory


def test_adamw_matches_the_original_create_optimizer():
    rng = np.random.default_rng(0)
    initial = {n: rng.normal(size=s).astype("float32") for n, s in _SHAPES.items()}
    targets = [{n: scale * rng.normal(size=s).astype("float32") for n, s in _SHAPES.items()}
               for scale in _TARGET_SCALES]
    expected = _original_trajectory(initial, targets)

    variables = {n: keras.Variable(value, name=n.rsplit("/", 1)[-1])
                 for n, value in initial.items()}
    exempt = [v for n, v in variables.items()
              if any(re.search(p, n) for p in optimization.WEIGHT_DECAY_EXCLUSIONS)]
    assert len(exempt) == 3  # bias, gamma, beta; the kernel is decayed
    optimizer = optimization.create_optimizer("adamw", _INIT_LR, _TRAIN_STEPS, _WARMUP_STEPS,
                                              decay_exempt=exempt)
    grad_norms = []
    for step, (step_targets, original) in enumerate(zip(targets, expected)):
        with tf.GradientTape() as tape:
            loss = tf.add_n([tf.reduce_sum(tf.sin(v) * step_targets[n])
                             for n, v in variables.items()])
        grads = tape.gradient(loss, list(variables.values()))
        grad_norms.append(float(tf.linalg.global_norm(grads)))
        optimizer.apply(grads, list(variables.values()))
        for name, variable in variables.items():
            np.testing.assert_allclose(variable.numpy(), original[name], atol=1e-6,
                                       err_msg=f"{name} after step {step}")
    assert int(optimizer.iterations) == len(targets)
    assert min(grad_norms) < 1.0 < max(grad_norms)  # clipping both idle and active


def _numpy_lamb(x, grads, lr, weight_decay, exempt, beta_1=0.9, beta_2=0.999, epsilon=1e-6):
    """You et al. 2019, Algorithm 2, with the identity as phi; exempt: no decay, ratio 1."""
    x, m, v = x.astype("float64"), 0.0, 0.0
    for t, g in enumerate(grads, start=1):
        m = beta_1 * m + (1 - beta_1) * g
        v = beta_2 * v + (1 - beta_2) * g ** 2
        r = (m / (1 - beta_1 ** t)) / (np.sqrt(v / (1 - beta_2 ** t)) + epsilon)
        ratio = 1.0
        if not exempt:
            r = r + weight_decay * x
            x_norm, r_norm = np.linalg.norm(x), np.linalg.norm(r)
            ratio = x_norm / r_norm if x_norm > 0 and r_norm > 0 else 1.0
        x = x - lr * ratio * r
    return x


def test_lamb_matches_the_paper():
    rng = np.random.default_rng(1)
    initial = {"kernel": rng.normal(size=(3, 4)), "bias": rng.normal(size=(4,)),
               "zero_norm": np.zeros(5), "zero_update": np.zeros(2)}
    grads = [{"kernel": rng.normal(size=(3, 4)), "bias": rng.normal(size=(4,)),
              "zero_norm": rng.normal(size=(5,)), "zero_update": np.zeros(2)}
             for _ in range(4)]
    variables = {n: keras.Variable(value.astype("float32"), name=n)
                 for n, value in initial.items()}
    optimizer = optimization.Lamb(learning_rate=0.01, weight_decay=0.1)
    optimizer.exclude_from_weight_decay(var_list=[variables["bias"]])

    for step_grads in grads:
        optimizer.apply([step_grads[n].astype("float32") for n in variables],
                        list(variables.values()))

    for name, variable in variables.items():
        expected = _numpy_lamb(initial[name], [g[name] for g in grads], 0.01, 0.1,
                               exempt=name == "bias")
        np.testing.assert_allclose(variable.numpy(), expected, rtol=1e-5, atol=1e-6,
                                   err_msg=name)
    assert np.abs(variables["zero_norm"].numpy()).max() > 0  # ratio 1 at x = 0: it moved


def test_create_optimizer_configures_the_original():
    optimizer = optimization.create_optimizer("lamb", 1e-3, 100, 10, weight_decay_rate=0.02)
    assert isinstance(optimizer, optimization.Lamb)
    assert (optimizer.beta_1, optimizer.beta_2, optimizer.epsilon) == (0.9, 0.999, 1e-6)
    assert optimizer.weight_decay == 0.02 and optimizer.global_clipnorm == 1.0
    with pytest.raises(ValueError, match="'sgd'"):
        optimization.create_optimizer("sgd", 1e-3, 100, 10)


@pytest.mark.parametrize("name", ["adamw", "lamb"])
def test_optimizer_config_round_trip(name):
    optimizer = optimization.create_optimizer(name, 2e-5, 1000, 100)
    restored = keras.optimizers.deserialize(keras.optimizers.serialize(optimizer))
    assert type(restored) is type(optimizer)
    assert restored.get_config() == optimizer.get_config()
    assert float(restored.learning_rate) == 0.0  # the schedule came back, at step 0
    restored.iterations.assign(100)
    assert float(restored.learning_rate) == pytest.approx(2e-5 * 0.9)


def _exempt_by_keras_name(model):
    """The expected exemptions, spelled in Keras's names: LayerNorm gamma/beta and every bias."""
    return [v.path for v in model.trainable_variables
            if v.name in ("gamma", "beta", "bias", "output_bias")]


def test_decay_exempt_variables_of_a_pretrainer(tiny_config):
    model = models.BertPretrainer(build_encoder(tiny_config))
    exempt = [v.path for v in optimization.decay_exempt_variables(model)]
    assert exempt == _exempt_by_keras_name(model)
    assert "transformer_layer_0/attention/qkv/bias" in exempt  # via .../self/query/bias
    assert "masked_lm/output_bias" in exempt                   # cls/predictions/output_bias
    assert len(exempt) == 24 and len(set(exempt)) == len(exempt)


def test_decay_exempt_variables_of_a_classifier(tiny_config):
    model = models.BertClassifier(build_encoder(tiny_config), num_labels=3)
    exempt = [v.path for v in optimization.decay_exempt_variables(model)]
    assert exempt == _exempt_by_keras_name(model)
    assert "classifier/dense/bias" in exempt  # no original name: matched by its Keras path


@pytest.mark.parametrize("name", ["adamw", "lamb"])
def test_loss_scale_optimizer(name):
    rng = np.random.default_rng(2)
    initial, targets = rng.normal(size=(3, 4)), rng.normal(size=(3, 3, 4))
    plain_var, scaled_var = keras.Variable(initial), keras.Variable(initial)
    plain = optimization.create_optimizer(name, 0.1, 10, 1)
    scaled = keras.optimizers.LossScaleOptimizer(optimization.create_optimizer(name, 0.1, 10, 1),
                                                 initial_scale=2.0 ** 10)

    def grads(variable, target, optimizer=None):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.sin(variable) * target)
            if optimizer is not None:
                loss = optimizer.scale_loss(loss)
        return tape.gradient(loss, [variable])

    for target in targets:
        plain.apply(grads(plain_var, target), [plain_var])
        scaled.apply(grads(scaled_var, target, scaled), [scaled_var])
        np.testing.assert_allclose(scaled_var.numpy(), plain_var.numpy(), rtol=1e-6, atol=1e-7)

    before = scaled_var.numpy()
    scaled.apply([tf.fill((3, 4), np.inf)], [scaled_var])
    np.testing.assert_array_equal(scaled_var.numpy(), before)  # the step is skipped ...
    assert int(scaled.iterations) == 3                         # ... and not counted
    assert float(scaled.dynamic_scale) == 2.0 ** 9


# Run in a fresh interpreter: the CPU must be split into two logical devices before TensorFlow
# initialises, which in this process it already has.
_MIRRORED_SCRIPT = """
import numpy as np
import tensorflow as tf

cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)

import keras
from official.training import optimization

rng = np.random.default_rng(0)
INITIAL = [rng.normal(size=(4, 3)).astype("float32"), rng.normal(size=(3,)).astype("float32")]
# Tiny gradients: m / (sqrt(v) + epsilon) then depends on their scale (through epsilon), so
# gradients summed a second time by the optimiser would show in the result.
GRADS = [[1e-6 * rng.normal(size=w.shape).astype("float32") for w in INITIAL] for _ in range(3)]


def train(name, strategy, loss_scale=None, optimizer_class=None):
    with strategy.scope():
        variables = [keras.Variable(w) for w in INITIAL]
        optimizer = optimization.create_optimizer(name, 0.1, 10, 1, decay_exempt=variables[1:])
        if optimizer_class is not None:  # the same optimiser, with one method replaced
            optimizer.__class__ = optimizer_class
        if loss_scale is not None:
            optimizer = keras.optimizers.LossScaleOptimizer(optimizer, initial_scale=loss_scale)
        optimizer.build(variables)

    @tf.function
    def step(grads):
        # Each replica applies the same gradients: those the training loop all-reduced.
        scale = 1.0 if loss_scale is None else loss_scale
        strategy.run(lambda g: optimizer.apply([x * scale for x in g], variables), args=(grads,))

    for grads in GRADS:
        step([tf.constant(g) for g in grads])
    if loss_scale is not None:  # a non-finite step is skipped on every replica
        before = [v.numpy() for v in variables]
        step([tf.fill(w.shape, np.inf) for w in INITIAL])
        for variable, value in zip(variables, before):
            np.testing.assert_array_equal(variable.numpy(), value)
    assert optimizer.iterations.numpy() == len(GRADS)  # int() fails on a mirrored variable
    for variable in variables:
        first, *others = strategy.experimental_local_results(variable.value)
        for other in others:
            np.testing.assert_array_equal(other.numpy(), first.numpy())
    return [v.numpy() for v in variables]


mirrored = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
for name in ("adamw", "lamb"):
    one_device = train(name, tf.distribute.get_strategy())
    for got in (train(name, mirrored), train(name, mirrored, loss_scale=2.0 ** 10)):
        for a, b in zip(got, one_device):
            np.testing.assert_allclose(a, b, rtol=1e-6)

    # The check can fail: with Keras's own all-reduce restored, the result changes.
    class SummingAgain(type(optimization.create_optimizer(name, 0.1, 10, 1))):
        _all_reduce_sum_gradients = keras.optimizers.Optimizer._all_reduce_sum_gradients
    summed_twice = train(name, mirrored, optimizer_class=SummingAgain)
    assert not np.allclose(summed_twice[0], one_device[0], rtol=1e-3)
"""


def test_mirrored_strategy_applies_pre_reduced_gradients_once():
    result = subprocess.run([sys.executable, "-c", _MIRRORED_SCRIPT], cwd=REPO,
                            capture_output=True, text=True,
                            env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=REPO))
    assert result.returncode == 0, result.stderr[-3000:]
