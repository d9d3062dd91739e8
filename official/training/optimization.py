"""The optimisers BERT is trained with, and the learning-rate schedule they share.

    WarmupLinearDecay        the original's schedule: linear warmup, then linear decay to 0
    AdamWeightDecay          the original's AdamWeightDecayOptimizer (pretraining, fine-tuning)
    Lamb                     LAMB (You et al. 2019) for large-batch pretraining
    decay_exempt_variables   the variables the original excludes from weight decay, by name
    create_optimizer         one of the two, configured as the original's `create_optimizer`

Both optimisers expect gradients that the training loop has already summed across replicas (see
`_PreReducedOptimizer`), clip them to a global norm as the original does, and decay weights only
of variables not exempted with `exclude_from_weight_decay(var_list=...)`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import keras
from keras import ops

from official.checkpoints import tf1
from official.modeling.insertion import SCALE_SUFFIX

# The original's `exclude_from_weight_decay`, searched (re.search) in its TF1 variable names;
# then the vectors an inserted layer multiplies by, which start at one (official/modeling/
# insertion.py's rule; none of the original's variables has such a name).
WEIGHT_DECAY_EXCLUSIONS = ("LayerNorm", "layer_norm", "bias", SCALE_SUFFIX + "$")


@keras.saving.register_keras_serializable(package="official")
class WarmupLinearDecay(keras.optimizers.schedules.LearningRateSchedule):
    """The original's learning rate: linear warmup from 0, then linear decay to 0.

    For step < num_warmup_steps the rate is initial_learning_rate * step / num_warmup_steps;
    afterwards it is initial_learning_rate * (1 - min(step, num_train_steps) / num_train_steps).
    The decay is measured from step 0, not from the end of warmup (the original's
    `polynomial_decay` runs over the whole schedule), so the first post-warmup rate is already
    below the peak. `step` is the number of updates applied so far (the optimiser's `iterations`,
    the original's `global_step` before its increment), so the first update uses rate 0.

    Example (steps 0 and 50 in warmup; step 100, where warmup ends, already 10% below the
    peak; the last step):
        >>> schedule = WarmupLinearDecay(5e-5, num_train_steps=1000, num_warmup_steps=100)
        >>> [round(float(schedule(step)), 10) for step in (0, 50, 100, 1000)]
        [0.0, 2.5e-05, 4.5e-05, 0.0]
    """

    def __init__(self, initial_learning_rate: float, num_train_steps: int,
                 num_warmup_steps: int = 0):
        if num_train_steps <= 0:
            raise ValueError(f"num_train_steps must be positive, got {num_train_steps}")
        if num_warmup_steps < 0:
            raise ValueError(f"num_warmup_steps must be >= 0, got {num_warmup_steps}")
        self.initial_learning_rate = initial_learning_rate
        self.num_train_steps = num_train_steps
        self.num_warmup_steps = num_warmup_steps

    def __call__(self, step):
        step = ops.cast(step, "float32")
        done = ops.minimum(step, self.num_train_steps) / self.num_train_steps
        decayed = self.initial_learning_rate * (1.0 - done)
        if not self.num_warmup_steps:
            return decayed
        warmup = self.initial_learning_rate * (step / self.num_warmup_steps)
        return ops.where(step < self.num_warmup_steps, warmup, decayed)

    def get_config(self) -> dict:
        return {"initial_learning_rate": self.initial_learning_rate,
                "num_train_steps": self.num_train_steps,
                "num_warmup_steps": self.num_warmup_steps}


class _PreReducedOptimizer(keras.optimizers.Optimizer):
    """An optimizer that applies the gradients it is given, without summing them across replicas.

    Keras's TF backend sums gradients over the replicas of a tf.distribute strategy inside
    `apply`, after `global_clipnorm` has clipped each replica's share separately, so a
    multi-replica run would clip differently from a one-device run of the same global batch. Our
    training loop instead sums the gradients itself before `apply` (inside `strategy.run`), so the
    clipping sees the global gradient as the original's does; summing again here would multiply
    them by the number of replicas.
    """

    def _all_reduce_sum_gradients(self, grads_and_vars):
        return grads_and_vars


class _AdamMoments(_PreReducedOptimizer):
    """The shared state of AdamWeightDecay and Lamb: beta_1, beta_2, epsilon and the m and v
    slots of every variable."""

    default_name = "adam_moments"

    def __init__(self, learning_rate=0.001, beta_1: float = 0.9, beta_2: float = 0.999,
                 epsilon: float = 1e-6, name: str | None = None, **kwargs):
        super().__init__(learning_rate=learning_rate, name=name or self.default_name, **kwargs)
        self.beta_1 = beta_1
        self.beta_2 = beta_2
        self.epsilon = epsilon

    def build(self, var_list):
        if self.built:
            return
        super().build(var_list)
        self._momentums, self._velocities = self.add_optimizer_variables(
            var_list, ["momentum", "velocity"])

    def get_config(self) -> dict:
        return {**super().get_config(), "beta_1": self.beta_1, "beta_2": self.beta_2,
                "epsilon": self.epsilon}


@keras.saving.register_keras_serializable(package="official")
class AdamWeightDecay(_AdamMoments):
    """google-research/bert's AdamWeightDecayOptimizer: Adam without bias correction, plus
    decoupled weight decay.

    For each variable x with gradient g:
        m = beta_1 m + (1 - beta_1) g
        v = beta_2 v + (1 - beta_2) g^2
        x = x - lr * (m / (sqrt(v) + epsilon) + weight_decay * x)
    where the `weight_decay * x` term is left out for variables passed to
    `exclude_from_weight_decay`. Unlike `keras.optimizers.AdamW` there is no bias correction of m
    and v (the original has none, and its checkpoints were trained so): for a steady gradient the
    step is (1 - beta_1^t) / sqrt(1 - beta_2^t) times Adam's, about 3x at t = 1 and near 1x only
    after a few thousand steps, which the warmup keeps small.

    The decay term is Keras's own `weight_decay` (applied before the Adam step, with the value of
    x before the step, which gives the same x since the Adam step does not read x).
    """

    default_name = "adam_weight_decay"

    def update_step(self, gradient, variable, learning_rate):
        lr = ops.cast(learning_rate, variable.dtype)
        gradient = ops.cast(gradient, variable.dtype)
        index = self._get_variable_index(variable)
        m, v = self._momentums[index], self._velocities[index]
        self.assign(m, self.beta_1 * m + (1.0 - self.beta_1) * gradient)
        self.assign(v, self.beta_2 * v + (1.0 - self.beta_2) * ops.square(gradient))
        self.assign_sub(variable, lr * (m / (ops.sqrt(v) + self.epsilon)))


@keras.saving.register_keras_serializable(package="official")
class Lamb(_AdamMoments):
    """LAMB (You et al. 2019, "Large Batch Optimization for Deep Learning", Algorithm 2).

    For each variable x with gradient g at step t (1-based):
        m = beta_1 m + (1 - beta_1) g,        m_hat = m / (1 - beta_1^t)
        v = beta_2 v + (1 - beta_2) g^2,      v_hat = v / (1 - beta_2^t)
        r = m_hat / (sqrt(v_hat) + epsilon) + weight_decay * x
        x = x - lr * (||x|| / ||r||) * r      (trust ratio 1 when either norm is 0)
    A variable passed to `exclude_from_weight_decay` gets neither the decay term nor the trust
    ratio (ratio 1: a bias-corrected Adam step), as in NVIDIA's and TF-Addons' LAMB for BERT,
    whose layer-adaptation exclusions default to the weight-decay ones.

    `keras.optimizers.Lamb` is not this algorithm: it applies weight decay outside the trust
    ratio (Keras's decoupled decay, before the step) and adapts every variable, exempt or not.
    """

    default_name = "lamb"

    def _apply_weight_decay(self, variables):
        # The base class would decay x before the step, outside the trust ratio; LAMB puts the
        # decay inside r instead (update_step).
        return

    def update_step(self, gradient, variable, learning_rate):
        lr = ops.cast(learning_rate, variable.dtype)
        gradient = ops.cast(gradient, variable.dtype)
        t = ops.cast(self.iterations + 1, variable.dtype)
        index = self._get_variable_index(variable)
        m, v = self._momentums[index], self._velocities[index]
        self.assign(m, self.beta_1 * m + (1.0 - self.beta_1) * gradient)
        self.assign(v, self.beta_2 * v + (1.0 - self.beta_2) * ops.square(gradient))
        m_hat = m / (1.0 - ops.power(ops.cast(self.beta_1, variable.dtype), t))
        v_hat = v / (1.0 - ops.power(ops.cast(self.beta_2, variable.dtype), t))
        update = m_hat / (ops.sqrt(v_hat) + self.epsilon)
        # The base class's exclusion list (var_list or var_names), which says nothing of the rate.
        if self._use_weight_decay(variable):
            if self.weight_decay:
                update = update + ops.cast(self.weight_decay, variable.dtype) * variable
            x_norm = ops.sqrt(ops.sum(ops.square(variable)))
            r_norm = ops.sqrt(ops.sum(ops.square(update)))
            ratio = ops.where((x_norm > 0) & (r_norm > 0), x_norm / r_norm, 1.0)
            update = ratio * update
        self.assign_sub(variable, lr * update)


# --optimizer names.
OPTIMIZERS = {"adamw": AdamWeightDecay, "lamb": Lamb}


def decay_exempt_variables(model: keras.Model) -> list[keras.Variable]:
    """The trainable variables the original exempts from weight decay (LayerNorm, biases), and
    inserted scale vectors.

    A variable is matched by its original TF1 names (`official.checkpoints.tf1`), as the
    original's patterns were written for them: `bert/encoder/layer_0/attention/self/query/bias`
    exempts our fused QKV bias. A variable outside the original's name map (a fine-tuning head,
    e.g. `classifier/dense/bias`) is matched by its Keras `path`. Returned in the model's order.
    """
    names_of: dict[int, list[str]] = {}
    for name, variable in tf1.original_names(model).items():
        names_of.setdefault(id(variable), []).append(name)

    def exempt(name: str) -> bool:
        return any(re.search(pattern, name) for pattern in WEIGHT_DECAY_EXCLUSIONS)

    # id(): a Keras variable's == is elementwise, so variables do not key dicts or sets.
    return [variable for variable in model.trainable_variables
            if any(map(exempt, names_of.get(id(variable), [variable.path])))]


def create_optimizer(name: str, learning_rate: float, num_train_steps: int,
                     num_warmup_steps: int, weight_decay_rate: float = 0.01,
                     decay_exempt: Sequence[keras.Variable] = (),
                     clip_norm: float | None = 1.0) -> keras.optimizers.Optimizer:
    """The original's `create_optimizer` as a Keras optimizer ("adamw") or its LAMB variant.

    Args:
      name: "adamw" (the original's AdamWeightDecayOptimizer) or "lamb".
      learning_rate: the rate warmup ramps towards and the linear decay starts from (step 0).
      num_train_steps, num_warmup_steps: the `WarmupLinearDecay` schedule.
      weight_decay_rate: the weight-decay rate of the variables not in `decay_exempt`.
      decay_exempt: variables without weight decay (and, for LAMB, without the trust ratio);
        usually `decay_exempt_variables(model)`.
      clip_norm: gradients are clipped to this global norm before the update (the original's
        `tf.clip_by_global_norm(grads, 1.0)`); 0 or None turns clipping off.

    Raises:
      ValueError: for an unknown `name`.
    """
    if name not in OPTIMIZERS:
        raise ValueError(f"Unknown optimizer {name!r}; expected one of {list(OPTIMIZERS)}")
    schedule = WarmupLinearDecay(learning_rate, num_train_steps, num_warmup_steps)
    optimizer = OPTIMIZERS[name](learning_rate=schedule, beta_1=0.9, beta_2=0.999, epsilon=1e-6,
                                 weight_decay=weight_decay_rate, global_clipnorm=clip_norm)
    optimizer.exclude_from_weight_decay(var_list=list(decay_exempt))
    return optimizer

