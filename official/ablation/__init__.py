"""Ablation studies: the BERT paper's (and ALBERT's) ablations rerun on one's own corpus and
budget, with seeds (run_scripts/run_ablation_study.py). No TensorFlow here: the work is done by
the entry points each stage runs as a subprocess.

    studies     the studies: rows and the flags each implies, tasks, columns, orderings
    paper       the papers' own figures
    columns     the tables' columns: what each of our numbers is
    orderings   the orderings a paper shows, checked on our means
    summary     mean and sample standard deviation over seeds
    parameters  an encoder's parameters counted from its config
    settings    what a study is asked to do, checked before any work
    task_data   the SST-2 subset, the QNLI re-split and the SQuAD split a study fine-tunes on
    results     where each number is read (Source), the numbers read back and summarised
    report      REPORT.md and results.json
"""
