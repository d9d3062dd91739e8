"""Per-task logic (inputs, features, outputs) that the run_scripts entry points call."""
