"""Text processing: the BERT WordPiece tokenizer and its vocabulary."""
