"""Static word embeddings read out of a contextual encoder, and their word-similarity evaluation.

    static_vectors    one vector per word and layer: the encoder's vectors of the word's
                      occurrences in a corpus pooled (Bommasani et al. 2020), or of the word alone
    word_similarity   Spearman correlation of cosine similarities with human scores
"""
