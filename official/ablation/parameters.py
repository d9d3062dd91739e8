"""How many parameters an encoder of a config has, counted from the config alone.

    count_parameters(config) = embeddings + blocks * block + pooler

    embeddings = (vocab_size + max_position_embeddings + type_vocab_size) * E + 2E
                 (+ E * H + H when E != H: ALBERT's projection of the E-wide embeddings to H)
    block      = 4 (H * H + H)          query, key, value and output projections
               + 2H                     the attention's LayerNorm
               + H * I + I + I * H + H  the feed-forward layer (I = intermediate_size)
               + 2H                     the feed-forward's LayerNorm
    blocks     = num_hidden_groups * inner_group_num: the weights that exist (with ALBERT's
                 all-shared layers, num_hidden_groups = 1, one block's however many layers run)
    pooler     = H * H + H

E is `config.embedding_width` (embedding_size, else H). The pretraining heads (masked LM and
next sentence) are not counted: fine-tuning drops them, and the papers count the encoder alone.
BERT-Base's config gives 109,482,240, the count Hugging Face's BertModel reports for
bert-base-uncased, and ALBERT-base's and -large's (v2) give their published 11,683,584 and
17,683,968; tests/test_ablation_report.py also checks the formula against the variables of
encoders built from BERT and ALBERT configs.

Example:
    >>> from official.configs import preset
    >>> count_parameters(preset("base"))
    109482240
"""

from __future__ import annotations

from official.configs import BertConfig


def count_parameters(config: BertConfig) -> int:
    """The encoder's parameters (embeddings, every distinct block, pooler): the formula above."""
    hidden, inner, width = config.hidden_size, config.intermediate_size, config.embedding_width
    embeddings = (config.vocab_size + config.max_position_embeddings
                  + config.type_vocab_size) * width + 2 * width
    if width != hidden:
        embeddings += width * hidden + hidden
    block = 4 * (hidden * hidden + hidden) + 2 * hidden + 2 * hidden * inner + inner + hidden \
        + 2 * hidden
    blocks = config.hidden_groups * config.inner_group_num
    return embeddings + blocks * block + hidden * hidden + hidden
