"""Semantic search over a text corpus with a sentence-encoder export (run_scripts/semantic_search).

    encoder   the export (`export_saved_model --export_type=sentence_encoder`) loaded: its newest
              version found, its signature checked, texts -> float32 vectors
    index     a corpus (one text per line) embedded once, kept on disk as a .npy matrix beside a
              JSON record, reused while the corpus and the export are the same
    search    exact cosine top-k by matrix product, ties broken by the lower corpus row
    ann       an approximate index beside it (FAISS IVF-flat, --index=ann), under the same rules
"""
