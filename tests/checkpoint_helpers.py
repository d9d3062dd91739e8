"""Weights under the original google-research/bert names, with shapes written out by hand.

Tests build these independently of official/checkpoints, so a wrong name or shape in the
project's maps shows up as a failed load rather than being mirrored.
"""

import numpy as np

from official.configs import BertConfig


def original_weights(config: BertConfig, heads: bool = True, seed: int = 0) -> dict:
    """Random weights of an original BERT checkpoint (encoder, and MLM + NSP heads)."""
    rng = np.random.default_rng(seed)
    h, i = config.hidden_size, config.intermediate_size
    shapes = {
        "bert/embeddings/word_embeddings": (config.vocab_size, h),
        "bert/embeddings/position_embeddings": (config.max_position_embeddings, h),
        "bert/embeddings/token_type_embeddings": (config.type_vocab_size, h),
        "bert/embeddings/LayerNorm/gamma": (h,), "bert/embeddings/LayerNorm/beta": (h,),
        "bert/pooler/dense/kernel": (h, h), "bert/pooler/dense/bias": (h,),
    }
    for n in range(config.num_hidden_layers):
        p = f"bert/encoder/layer_{n}"
        for part in ("query", "key", "value"):
            shapes[f"{p}/attention/self/{part}/kernel"] = (h, h)
            shapes[f"{p}/attention/self/{part}/bias"] = (h,)
        shapes.update({
            f"{p}/attention/output/dense/kernel": (h, h), f"{p}/attention/output/dense/bias": (h,),
            f"{p}/attention/output/LayerNorm/gamma": (h,),
            f"{p}/attention/output/LayerNorm/beta": (h,),
            f"{p}/intermediate/dense/kernel": (h, i), f"{p}/intermediate/dense/bias": (i,),
            f"{p}/output/dense/kernel": (i, h), f"{p}/output/dense/bias": (h,),
            f"{p}/output/LayerNorm/gamma": (h,), f"{p}/output/LayerNorm/beta": (h,),
        })
    if heads:
        shapes.update({
            "cls/predictions/transform/dense/kernel": (h, h),
            "cls/predictions/transform/dense/bias": (h,),
            "cls/predictions/transform/LayerNorm/gamma": (h,),
            "cls/predictions/transform/LayerNorm/beta": (h,),
            "cls/predictions/output_bias": (config.vocab_size,),
            "cls/seq_relationship/output_weights": (2, h),
            "cls/seq_relationship/output_bias": (2,),
        })
    return {name: rng.normal(0, 0.2, shape).astype("float32") for name, shape in shapes.items()}


def set_directly(pretrainer, weights: dict) -> None:
    """Puts original weights into our pretrainer by hand, attribute by attribute."""
    enc = pretrainer.encoder
    enc.embeddings.word_embeddings.assign(weights["bert/embeddings/word_embeddings"])
    enc.embeddings.position_embeddings.assign(weights["bert/embeddings/position_embeddings"])
    enc.embeddings.token_type_embeddings.assign(weights["bert/embeddings/token_type_embeddings"])
    enc.embeddings.layer_norm.set_weights([weights["bert/embeddings/LayerNorm/gamma"],
                                           weights["bert/embeddings/LayerNorm/beta"]])
    for n, block in enumerate(enc.transformer_layers):
        p = f"bert/encoder/layer_{n}"

        def pair(name, p=p):
            return [weights[f"{p}/{name}/kernel"], weights[f"{p}/{name}/bias"]]

        def norm(name, p=p):
            return [weights[f"{p}/{name}/gamma"], weights[f"{p}/{name}/beta"]]

        q, k, v = (pair(f"attention/self/{part}") for part in ("query", "key", "value"))
        block.attention.qkv.set_weights([np.concatenate([q[0], k[0], v[0]], axis=1),
                                         np.concatenate([q[1], k[1], v[1]])])
        block.attention.output_dense.set_weights(pair("attention/output/dense"))
        block.attention_layer_norm.set_weights(norm("attention/output/LayerNorm"))
        block.intermediate_dense.set_weights(pair("intermediate/dense"))
        block.output_dense.set_weights(pair("output/dense"))
        block.output_layer_norm.set_weights(norm("output/LayerNorm"))
    enc.pooler.set_weights([weights["bert/pooler/dense/kernel"], weights["bert/pooler/dense/bias"]])
    mlm = pretrainer.masked_lm
    mlm.transform_dense.set_weights([weights["cls/predictions/transform/dense/kernel"],
                                     weights["cls/predictions/transform/dense/bias"]])
    mlm.transform_layer_norm.set_weights([weights["cls/predictions/transform/LayerNorm/gamma"],
                                          weights["cls/predictions/transform/LayerNorm/beta"]])
    mlm.output_bias.assign(weights["cls/predictions/output_bias"])
    pretrainer.next_sentence.dense.set_weights([weights["cls/seq_relationship/output_weights"].T,
                                                weights["cls/seq_relationship/output_bias"]])
