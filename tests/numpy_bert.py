"""The original BERT in float64 numpy, from weights under its TF1 names: the independent
reference of the tests that score text with a language-model head (masked or left to right).

    head_log_probs(weights, config, ids, mask=None, segments=None, causal=False)
        -> float64 [seq, vocab]: log P(. | the row) of the masked-LM head at every position of
           one unpadded row; with `causal` every position attends to itself and the real
           positions before it, as a left-to-right model (-10000 on the others' scores, as the
           original masks)

Written from the paper's and the original's equations (post-LayerNorm blocks, the tanh GELU,
the head's transform and the output layer tied to the word embeddings), never from the
project's code.
"""

import math

import numpy as np


def gelu(x):
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


def layer_norm(x, gamma, beta):
    mean = x.mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(((x - mean) ** 2).mean(-1, keepdims=True) + 1e-12) * gamma + beta


def log_softmax(logits):
    top = logits.max(-1, keepdims=True)
    return logits - top - np.log(np.exp(logits - top).sum(-1, keepdims=True))


def head_log_probs(weights, config, ids, mask=None, segments=None, causal=False):
    """[seq, vocab] log-probabilities of the masked-LM head (see the module docstring)."""
    w = {k: np.asarray(v, np.float64) for k, v in weights.items()}
    ids = np.asarray(ids)
    seq, heads, hidden = len(ids), config.num_attention_heads, config.hidden_size
    size = hidden // heads
    mask = np.ones(seq, np.int64) if mask is None else np.asarray(mask)
    segments = np.zeros(seq, np.int64) if segments is None else np.asarray(segments)
    x = (w["bert/embeddings/word_embeddings"][ids]
         + w["bert/embeddings/token_type_embeddings"][segments]
         + w["bert/embeddings/position_embeddings"][:seq])
    x = layer_norm(x, w["bert/embeddings/LayerNorm/gamma"], w["bert/embeddings/LayerNorm/beta"])
    allowed = np.broadcast_to(mask[None, :] > 0, (seq, seq))  # [query, key]
    if causal:
        allowed = allowed & np.tril(np.ones((seq, seq), bool))
    for n in range(config.num_hidden_layers):
        p = f"bert/encoder/layer_{n}/"

        def dense(h, name, p=p):
            return h @ w[p + name + "/kernel"] + w[p + name + "/bias"]

        q, k, v = (dense(x, f"attention/self/{m}").reshape(seq, heads, size).transpose(1, 0, 2)
                   for m in ("query", "key", "value"))
        scores = q @ k.transpose(0, 2, 1) / math.sqrt(size) + np.where(allowed, 0.0, -10000.0)
        probs = np.exp(scores - scores.max(-1, keepdims=True))
        probs /= probs.sum(-1, keepdims=True)
        context = (probs @ v).transpose(1, 0, 2).reshape(seq, hidden)
        x = layer_norm(x + dense(context, "attention/output/dense"),
                       w[p + "attention/output/LayerNorm/gamma"],
                       w[p + "attention/output/LayerNorm/beta"])
        h = dense(gelu(dense(x, "intermediate/dense")), "output/dense")
        x = layer_norm(x + h, w[p + "output/LayerNorm/gamma"], w[p + "output/LayerNorm/beta"])
    t = gelu(x @ w["cls/predictions/transform/dense/kernel"]
             + w["cls/predictions/transform/dense/bias"])
    t = layer_norm(t, w["cls/predictions/transform/LayerNorm/gamma"],
                   w["cls/predictions/transform/LayerNorm/beta"])
    return log_softmax(t @ w["bert/embeddings/word_embeddings"].T
                       + w["cls/predictions/output_bias"])
