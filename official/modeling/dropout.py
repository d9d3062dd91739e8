"""`Dropout`: Keras's dropout layer with a cheaper random draw (16 random bits per element)."""

import contextlib
import contextvars

import keras
import tensorflow as tf

# A dropout decision compares 16 random bits with round(rate * 2^16): one 32-bit Philox word
# decides two elements. Keras's dropout draws a float32 uniform per element instead; drawing
# the random numbers is a large share of an XLA training step on a CPU (the masks cover
# [batch, heads, seq, seq] attention probabilities), and this halves the bits drawn.
# bench/pretraining_throughput.py times that training step (ours, with and without jit_compile).
_BITS = 16
_LEVELS = 1 << _BITS
# The stateless random algorithm of the draws. TensorFlow's own kernels have Philox only; XLA
# also compiles ThreeFry, to faster CPU code than its Philox for an attention mask and its
# gradient, so code that XLA compiles draws with it (`xla_random_bits`; the step it speeds is
# bench/pretraining_throughput.py's jit_compile one).
_ALGORITHM = contextvars.ContextVar("dropout_random_algorithm", default="philox")


@contextlib.contextmanager
def xla_random_bits():
    """Dropout layers called within draw their bits with ThreeFry. Trace only XLA-compiled
    code inside (a jit_compile tf.function): outside XLA, ThreeFry has no kernel."""
    token = _ALGORITHM.set("threefry")
    try:
        yield
    finally:
        _ALGORITHM.reset(token)


@keras.saving.register_keras_serializable(package="official")
class Dropout(keras.layers.Dropout):
    """Inverted dropout: zero each element with probability `rate`, scale the rest by 1/(1-rate).

    The same layer as `keras.layers.Dropout` (config, seed generator, and so its place in
    checkpoints), with one difference: the rate is rounded to a multiple of 2^-16 (0.1 becomes
    0.100006), and the kept elements are scaled by the inverse of that rounded keep probability,
    so the expected output is still the input. `noise_shape` is not supported (BERT never
    broadcasts its masks).

    The bits come from a stateless Philox draw, or ThreeFry within `xla_random_bits()`.

    Call args:
      inputs: a float tensor of any shape.
      training: drop only when true.
    Returns:
      a tensor of `inputs`' shape and dtype.
    """

    def __init__(self, rate: float, seed: int | None = None, **kwargs):
        if kwargs.get("noise_shape") is not None:
            raise ValueError("official.modeling.dropout.Dropout takes no noise_shape")
        super().__init__(rate, seed=seed, **kwargs)

    def call(self, inputs, training=False):
        threshold = round(self.rate * _LEVELS)
        if not training or threshold == 0:
            return inputs
        if threshold == _LEVELS:
            return tf.zeros_like(inputs)
        # The generator's int64 state as an int32 seed, as Keras's TensorFlow backend casts it.
        seed = tf.cast(tf.math.floormod(self.seed_generator.next(), tf.int32.max - 1), tf.int32)
        keep = _keep_mask(tf.shape(inputs), inputs.shape[-1], threshold, seed)
        scale = tf.cast(_LEVELS / (_LEVELS - threshold), inputs.dtype)
        return tf.where(keep, inputs * scale, tf.zeros_like(inputs))


def _keep_mask(shape: tf.Tensor, last_dim: int | None, threshold: int,
               seed: tf.Tensor) -> tf.Tensor:
    """bool `shape`: true where 16 random bits are >= threshold (probability 1 - threshold/2^16).

    With an even, static last dimension, each 32-bit word gives two elements' bits: its low
    halves fill the first half of the last axis, its high halves the second. Otherwise each
    element takes the top 16 bits of a word of its own.
    """
    limit = tf.constant(threshold, tf.uint32)
    algorithm = _ALGORITHM.get()
    if last_dim is not None and last_dim % 2 == 0:
        words = tf.random.stateless_uniform(tf.concat([shape[:-1], [last_dim // 2]], 0), seed,
                                            minval=None, maxval=None, dtype=tf.uint32,
                                            alg=algorithm)
        low = tf.bitwise.bitwise_and(words, tf.constant(_LEVELS - 1, tf.uint32))
        high = tf.bitwise.right_shift(words, tf.constant(_BITS, tf.uint32))
        return tf.concat([low >= limit, high >= limit], axis=-1)
    words = tf.random.stateless_uniform(shape, seed, minval=None, maxval=None, dtype=tf.uint32,
                                        alg=algorithm)
    return tf.bitwise.right_shift(words, tf.constant(_BITS, tf.uint32)) >= limit
