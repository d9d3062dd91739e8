"""SavedModels for serving raw text (TF Serving) and TF Hub encoder + preprocessor pairs.

    packing        token ids -> encoder inputs: the original's [CLS] a [SEP] b [SEP], pairs cut
                   by official.features.pair_truncation, as TF ops
    preprocessing  Hub's BERT preprocessor (strings -> encoder inputs; .tokenize,
                   .bert_pack_inputs; the vocab as an asset)
    encoder        Hub's BERT encoder (pooled, sequence and per-layer outputs; .mlm)
    words          raw text -> words with character offsets (NER's and SQuAD's word splits)
    classifier     text (pairs) -> probabilities and label, or a regression score
    ner            sentences -> entities (text, type, character offsets)
    squad          question + context -> the original's best answer, its score and offsets
    task_kind      what a fine-tuning task kind is to the export: its flags, options, spec,
                   task and serving module (`TaskKind`)
    kinds          their table (`KINDS`); classifier_kind, ner_kind, squad_kind its rows
    restoring      the model to export from a config and a checkpoint (fine-tuned heads)
    precision      what the model computes in (--serving_dtype: float32, bfloat16)
    cpu_units      whether this CPU has bfloat16 matrix units (without TensorFlow)
    saving         `export_dir/<version>/`, written atomically; the variables TF1 loaders need
    jobs           run_scripts/export_saved_model's library half

Every export runs its tokenisation inside the graph with the project's exact tokenizer, takes
any batch size, and loads with `import tensorflow; import tensorflow_text` alone.
"""
