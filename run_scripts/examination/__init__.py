"""examine_checkpoint's orchestration, beside the entry points it starts: which examinations
apply to a checkpoint and their commands (`plan`), which run_scripts/stages.py runs, and the one
report gathered from the files they write (`report`, rendered to HTML by `markdown_html`).

The report lives here rather than in official/: it reads the files each entry point writes under
the names that entry point gives them, for an orchestrator of entry points (which DESIGN.md puts
beside them); no library caller examines a checkpoint this way.
"""
