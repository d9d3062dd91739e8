"""The importable BERT library: configuration, tokenizer, model, checkpoints."""
