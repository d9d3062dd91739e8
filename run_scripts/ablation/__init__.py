"""run_ablation_study's orchestration, beside the entry points it starts: a study's work as
their commands (`plan`), which run_scripts/stages.py runs. The numbers, tables and verdicts are
the library's (official/ablation/)."""
