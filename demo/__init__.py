"""The `make demo` job: the BERT pipeline on data the repository ships."""
