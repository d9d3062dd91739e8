"""What each layer knows: probing studies over a BERT checkpoint's layers.

    settings      the tasks and a study's settings, checked without TensorFlow
    word_vectors  every layer's vector of every word, computed once and cached
    probes        linear / MLP label probes, Hewitt & Manning's structural probes, training
    control       Hewitt & Liang's control task
    trees         dependency trees' distances and depths, UUAS, root accuracy, Spearman
    study         the per-layer probes, the scalar mix, the cumulative mixes, selectivity
    report        probe_results.json, the table, probe_curves.png, probes/ (the weights)

run_scripts/probe_layers.py is the entry point; data_prep/conllu.py reads UD treebanks.
"""
