"""`SelfAttention`: BERT's multi-head self-attention with one fused query/key/value projection."""

import math

import keras
import tensorflow as tf
from keras import ops

from official.modeling import initializers
from official.modeling.dropout import Dropout
from official.modeling.lora import LoraDense

# The original adds -10000 to the scores of padding keys (modeling.py, attention_mask adder);
# after the float32 softmax that is exactly zero weight, as -inf would be, without inf arithmetic.
_MASK_ADDER = -10000.0


@keras.saving.register_keras_serializable(package="official")
class SelfAttention(keras.layers.Layer):
    """Multi-head scaled dot-product self-attention over one sequence.

    The query, key and value projections are one [hidden, 3 * hidden] matrix (one matmul instead of
    three); its columns are the original's query, key and value kernels side by side, each in
    head-major order, so checkpoint maps split and merge it by slicing (see official/checkpoints),
    and LoRA adds to the blocks of the matrices it adapts (official/modeling/lora.py).

    With `causal`, no query attends to a later key (the paper's left-to-right ablation): the
    later keys get the padding keys' -10000, so their weight is exactly 0 too.

    Call args:
      x: [batch, seq_len, hidden].
      input_mask: int or bool [batch, seq_len]; 1 for real tokens, 0 for padding keys to ignore.
      first_query_only: attend from the first position ([CLS]) alone, over every key (over
        itself alone when causal).
      return_attention_probs: also return the attention probabilities (for attention
        distillation and probing).
    Returns:
      [batch, seq_len, hidden] (or [batch, 1, hidden] with first_query_only), the output
      projection of the heads' concatenated contexts; with return_attention_probs, the pair
      (that, probs): probs float32 [batch, heads, query_len, key_len] (query_len 1 with
      first_query_only), each row summing to 1 and exactly 0 at padding keys. They are the
      softmax before its dropout and before the cast to the compute dtype: the distribution the
      model defines, the same in training and inference, at full precision under a mixed policy.
    """

    def __init__(self, num_heads: int, initializer_range: float = 0.02,
                 dropout_rate: float = 0.1, causal: bool = False, **kwargs):
        super().__init__(**kwargs)
        self.num_heads = num_heads
        self.initializer_range = initializer_range
        self.dropout_rate = dropout_rate
        self.causal = causal

    def build(self, x_shape, input_mask_shape=None):
        hidden = x_shape[-1]
        if hidden % self.num_heads:
            raise ValueError(f"num_heads ({self.num_heads}) does not divide hidden ({hidden})")
        self.head_size = hidden // self.num_heads
        init = initializers.truncated_normal(self.initializer_range)
        self.qkv = LoraDense(3 * hidden, kernel_initializer=init,
                                      dtype=self.dtype_policy, name="qkv")
        self.qkv.build(x_shape)
        self.output_dense = LoraDense(hidden, kernel_initializer=init, dtype=self.dtype_policy,
                                      name="output_dense")
        self.output_dense.build(x_shape)
        self.dropout = Dropout(self.dropout_rate, dtype=self.dtype_policy, name="dropout")

    def call(self, x, input_mask, training=None, first_query_only=False,
             return_attention_probs=False):
        batch, seq_len, hidden = ops.shape(x)[0], ops.shape(x)[1], x.shape[-1]
        # The projections run on [batch * seq_len, hidden] rows (see TransformerBlock.call).
        qkv = ops.reshape(self.qkv(ops.reshape(x, (-1, hidden))),
                          (batch, seq_len, 3, self.num_heads, self.head_size))
        # One transpose to [3, batch, heads, seq_len, head_size], then batched matmuls that
        # read the key transposed in place: einsums over the [batch, seq, heads, head_size]
        # layout transpose the query, key and value each, a copy of every activation that this
        # layout does not make (bench/pretraining_throughput.py and bench/serving_throughput.py
        # time whole models against keras-hub's, whose attention uses einsums). Unstacked, not
        # sliced: the gradient of three slices is three zero-filled copies of the whole tensor
        # added up, of an unstack one stack.
        query, key, value = ops.unstack(ops.transpose(qkv, (2, 0, 3, 1, 4)), 3, axis=0)
        if first_query_only:
            query = query[:, :, :1]
        # [batch, heads, query, key]; softmax in float32 whatever the compute dtype.
        scores = tf.linalg.matmul(query, key, transpose_b=True)
        scores = ops.cast(scores, "float32") * (1.0 / math.sqrt(self.head_size))
        padding = 1.0 - ops.cast(input_mask, "float32")
        scores = scores + padding[:, None, None, :] * _MASK_ADDER
        if self.causal:
            # [query, key]: 1 where the key comes after the query.
            later = 1.0 - tf.linalg.band_part(tf.ones((seq_len, seq_len)), -1, 0)
            scores = scores + later[:ops.shape(query)[2]] * _MASK_ADDER
        probs = ops.softmax(scores, axis=-1)
        dropped = self.dropout(ops.cast(probs, self.compute_dtype), training=training)
        # [batch, heads, query, head_size] -> rows of [query positions, heads * head_size].
        context = ops.transpose(tf.linalg.matmul(dropped, value), (0, 2, 1, 3))
        context = ops.reshape(context, (-1, hidden))
        output = ops.reshape(self.output_dense(context), (batch, -1, hidden))
        return (output, probs) if return_attention_probs else output

    def compute_output_shape(self, x_shape, input_mask_shape=None):
        return x_shape

    def compute_output_spec(self, x, input_mask=None, training=None, first_query_only=False,
                            return_attention_probs=False):
        batch, seq_len, hidden = x.shape
        query_len = 1 if first_query_only else seq_len
        output = keras.KerasTensor((batch, query_len, hidden), dtype=self.compute_dtype)
        if not return_attention_probs:
            return output
        probs = keras.KerasTensor((batch, self.num_heads, query_len, seq_len), dtype="float32")
        return output, probs

    def get_config(self):
        config = super().get_config()
        config.update(num_heads=self.num_heads, initializer_range=self.initializer_range,
                      dropout_rate=self.dropout_rate, causal=self.causal)
        return config
