"""The precision an export computes in: `export_saved_model --serving_dtype`.

    in_serving_dtype(model, dtype, converted)   a loaded model made to compute in `dtype`, in
                                                place, before its serving module is made

float32 changes nothing. bfloat16 makes every layer's policy "bfloat16" and stores every float
weight in bfloat16, so each matrix product (the projections, the feed-forward, attention's two
batched products, the heads) runs on bfloat16 operands with float32 accumulation (oneDNN's
kernels, on AVX512_BF16 or AMX units where the CPU has them). The weights are cast once, here,
not at each call as under Keras' "mixed_bfloat16" policy (float32 weights cast per call, about
a third of a batch-1 call's time on MiniLM: bench/serving_precision.py), and the SavedModel is
half the size. The values are those of the mixed policy: it rounds each weight to bfloat16 at
each call too.

What needs float32 stays float32 by the layers' own rules, whatever the policy: attention's
scores, mask and softmax (official/modeling/attention.py), LayerNorms (Keras computes their
statistics in float32 and never autocasts their gamma and beta, which stay float32 weights),
the heads' logits (DenseLogits), sentence and window pooling; the
serving modules return float32 (official/export/encoder.py casts the encoder's outputs). The
residual stream between layers is bfloat16, as in mixed-precision training.

A bfloat16 export serves; its variables are bfloat16, so fine-tuning it (hub.KerasLayer with
trainable=True) would update bfloat16 weights: fine-tune from a float32 export.
"""

from __future__ import annotations

import keras
import tensorflow as tf


def in_serving_dtype(model: keras.Model, dtype: str, converted: dict | None = None) -> None:
    """Makes `model` (weights loaded, adaptations folded) compute and store its weights in
    `dtype` ("float32": unchanged; "bfloat16"). Call it before the serving module that lists
    the model's variables is made.

    Args:
      converted: {id of a float32 tf.Variable: (it, its `dtype` copy)}, shared by the models of
        one export, so weights that several models share (multitask's frozen base) stay one
        variable.
    """
    if dtype == "float32":
        return
    converted = {} if converted is None else converted
    for layer in model._flatten_layers(include_self=True, recursive=True):  # noqa: SLF001
        layer.dtype_policy = dtype
    for variable in model.variables:
        # A variable that is never autocast is read in its own dtype on purpose (the masked-LM
        # output bias, added to float32 logits).
        if variable.dtype.startswith("float") and variable._autocast:  # noqa: SLF001
            _store_as(variable, dtype, converted)


def _store_as(variable: keras.Variable, dtype: str, converted: dict) -> None:
    """Points the Keras variable at a `dtype` copy of the tf.Variable it wraps (made once per
    wrapped variable), which the serving graph then reads and the SavedModel saves."""
    wrapped = variable._value  # noqa: SLF001 (the tf.Variable a Keras variable wraps on TensorFlow)
    if wrapped.dtype == dtype:  # shared with a model converted before (multitask)
        converted[id(wrapped)] = (wrapped, wrapped)
    if id(wrapped) not in converted:
        with tf.init_scope():
            copy = tf.Variable(tf.cast(wrapped, dtype), trainable=wrapped.trainable,
                               name=wrapped.name.removesuffix(":0"))
        # The original is kept with its copy: an id is unique only while its object lives.
        converted[id(wrapped)] = (wrapped, copy)
    variable._value = converted[id(wrapped)][1]  # noqa: SLF001
    variable._dtype = dtype  # noqa: SLF001
