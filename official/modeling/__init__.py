"""Keras 3 building blocks of BERT: embeddings, attention, Transformer block, encoder, heads."""
