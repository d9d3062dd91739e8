"""Featurisation rules: one implementation each, shared by the fine-tuning records (data_prep)
and the serving graphs (official/export).

    pair_truncation  a text pair cut to a token budget: the longer text loses its last tokens
    doc_windows      SQuAD's windows over a long context (doc_stride) and each token's
                     "max context" window
    word_windows     NER's windows of whole words, filled greedily

Each rule is TF ops on int32 tensors, batched: the serving graph calls it once per request,
data_prep once per chunk of examples (and reads the results back as numpy), so the records a
model is fine-tuned on and the features it is served are made by the same code.
"""
