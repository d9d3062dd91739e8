"""A language model's view of a sentence: how likely a checkpoint with a language-model head finds
it, and the minimal-pair benchmarks that compare two sentences that way.

    masked_lm         a checkpoint with its masked-LM head (or a left-to-right model's next-token
                      head): log-probabilities at chosen positions
    sentence_scores   a sentence's log-likelihood: pseudo-log-likelihood for a masked LM
                      (Salazar et al. 2020), the chain rule's sum for a left-to-right one
    minimal_pairs     BLiMP-format minimal pairs (sentence_good / sentence_bad) read and checked,
                      and the published figures beside them (no TensorFlow)
    pair_report       accuracy per paradigm, linguistic phenomenon, field and overall, with the
                      published models' figures and human agreement beside ours

The entry point is run_scripts/score_minimal_pairs.py; CrowS-Pairs and BAE
(official/robustness/) read the masked LM too.
"""
