"""A checkpoint with its masked-LM head, loaded for scoring: log P(token | the rest) at positions.

    mlm = MaskedLanguageModel.load(init_checkpoint, bert_config_file=None, vocab_file=None,
                                   do_lower_case=True)
    mlm.tokenizer, mlm.config        the project's FullTokenizer, the BertConfig
    mlm.path                         the checkpoint as given (for messages)
    mlm.log_probs(input_word_ids, input_mask, positions)
        int32 [batch, seq], int32 [batch, seq], int32 [batch, predictions]
        -> float32 [batch, predictions, vocab]: the log-softmax of the head's logits at each
           position (segment ids all 0: one sentence); the caller batches
    mlm.target_log_probs(input_word_ids, input_mask, positions, targets)
        ... and int32 [batch, predictions] -> float32 [batch, predictions]: the log-probability
           of each position's target token alone (the vocabulary-wide arrays stay in the graph)
    mlm.left_to_right                whether the head predicts the next token (a run_pretraining
                                     --objective=ltr checkpoint: its config's causal_attention)

`init_checkpoint` is anything `--init_checkpoint` takes (official/checkpoints/finetuned.py's
`resolve_source`) that carries the head `cls/predictions/*`: an original TF1 release, a
run_pretraining output_dir, a TF2 checkpoint converted from one, a Hugging Face BertForPreTraining
or BertForMaskedLM folder. The config and vocab default to the files beside it, as every entry
point's do (a folder format's own config). A checkpoint without the head (an encoder alone, a
fine-tuned classifier) is refused in one line: its predictions would be those of a fresh, random
head. The model runs with dropout off (inference).

A left-to-right model (the BERT paper's "LTR & No NSP" ablation) keeps the same head: trained on
the next token at every position under causal attention, its "masked LM" output at position i
is P(token i+1 | tokens 0..i).

Used by sentence_scores.py (BLiMP's minimal pairs), CrowS-Pairs' pseudo-log-likelihood
(official/robustness/crows_pairs.py) and BAE's candidate words.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import tensorflow as tf

from official import checkpoints
from official.checkpoints import finetuned, tf1
from official.configs import BertConfig
from official.modeling.encoder import build_encoder
from official.modeling.models import BertPretrainer
from official.text import vocab
from official.text.tokenizer import FullTokenizer


class MaskedLanguageModel:
    """A `BertPretrainer` with its checkpoint's weights, its tokenizer and config; build it with
    `load`."""

    def __init__(self, pretrainer: BertPretrainer, tokenizer: FullTokenizer, config: BertConfig,
                 path: str):
        self.pretrainer, self.tokenizer, self.config, self.path = (pretrainer, tokenizer, config,
                                                                   path)
        ids = tf.TensorSpec([None, None], tf.int32)
        self._log_probs = tf.function(self._compute, input_signature=[ids, ids, ids])
        self._target_log_probs = tf.function(self._compute_targets,
                                             input_signature=[ids, ids, ids, ids])

    @property
    def left_to_right(self) -> bool:
        """Whether the head predicts each position's next token (causal attention)."""
        return self.config.causal_attention

    @classmethod
    def load(cls, init_checkpoint: str, bert_config_file: str | None = None,
             vocab_file: str | None = None, do_lower_case: bool = True) -> MaskedLanguageModel:
        """The model of the module docstring.

        Raises:
          ValueError: no checkpoint, no config or vocab beside it (and none given), a vocab that
            does not fit the config, or a checkpoint without the masked-LM head; one line each.
        """
        source = finetuned.resolve_source(init_checkpoint)
        config = (BertConfig.from_json_file(bert_config_file) if bert_config_file
                  else source.config)
        vocab_file = vocab_file or checkpoints.beside(init_checkpoint, checkpoints.VOCAB_FILE) \
            or (source.checkpoint.vocab_file if source.checkpoint else None)
        if vocab_file is None:
            raise ValueError(f"{init_checkpoint}: no {checkpoints.VOCAB_FILE} beside the "
                             "checkpoint: pass --vocab_file")
        vocab.check_fits(vocab_file, config.vocab_size, bert_config_file or source.config_file)
        weights = checkpoints.weights_for(source.weights, config)
        if not any(name.startswith(tf1.MASKED_LM_PREFIX) for name in weights):
            raise ValueError(f"{init_checkpoint}: has no masked-LM head ({tf1.MASKED_LM_PREFIX}*"
                             "): give a pretraining checkpoint (an original release, a "
                             "run_pretraining output_dir), not an encoder or a fine-tuned model")
        inference = dataclasses.replace(config, hidden_dropout_prob=0.0,
                                        attention_probs_dropout_prob=0.0)
        pretrainer = BertPretrainer(build_encoder(inference))
        tf1.assign(pretrainer, weights, source=init_checkpoint)
        return cls(pretrainer, FullTokenizer(vocab_file, do_lower_case=do_lower_case), config,
                   init_checkpoint)

    def _compute(self, input_word_ids, input_mask, positions):
        outputs = self.pretrainer({"input_word_ids": input_word_ids, "input_mask": input_mask,
                                   "input_type_ids": tf.zeros_like(input_word_ids),
                                   "masked_lm_positions": positions}, training=False)
        return tf.nn.log_softmax(outputs["masked_lm_logits"], axis=-1)

    def _compute_targets(self, input_word_ids, input_mask, positions, targets):
        log_probs = self._compute(input_word_ids, input_mask, positions)
        return tf.gather(log_probs, targets, batch_dims=2)

    def log_probs(self, input_word_ids, input_mask, positions) -> np.ndarray:
        """float32 [batch, predictions, vocab] (see the module docstring)."""
        return self._log_probs(tf.constant(input_word_ids, tf.int32),
                               tf.constant(input_mask, tf.int32),
                               tf.constant(positions, tf.int32)).numpy()

    def target_log_probs(self, input_word_ids, input_mask, positions, targets) -> np.ndarray:
        """float32 [batch, predictions]: log P(targets[b, p] at positions[b, p] | the row)."""
        return self._target_log_probs(*(tf.constant(a, tf.int32) for a in (
            input_word_ids, input_mask, positions, targets))).numpy()
