"""Where a fine-tuned BERT breaks: behavioural tests, word-substitution attacks, bias measures.

    classifier     a classifier export loaded for testing: raw texts -> probabilities, batched
    suite          a behavioural test suite in plain JSON lines (data_prep/checklist_suite.py
                   converts CheckList's released pickles to it without running them)
    behavioral     CheckList's expectations (MFT, INV, DIR) and the failure tables
    text_words     a text as the words an attack may replace, and a word replaced or deleted
    candidates     words that may replace a word: synonym lists, static vectors' neighbours,
                   a masked-LM head's predictions; stop words
    attack         TextFooler's and BAE's greedy word-substitution attack and its summary
    seat           May et al.'s sentence encoder association tests: effect size and p-value
    crows_pairs    Nangia et al.'s CrowS-Pairs: pseudo-log-likelihood preferences
    eec            Kiritchenko & Mohammad's Equity Evaluation Corpus: a classifier's score
                   differences by gender and race, paired t-tests (paired_t_test)
    name_probe     gender and race in names' vectors: linear probes within and across groups

The masked language model that CrowS-Pairs and BAE read is official/lm_scoring/masked_lm.py.

The entry points are run_scripts/behavioral_test.py, attack_classifier.py and bias_report.py.
Nothing here reaches the internet: synonyms, vectors, encoders and suites are files.
"""
