"""Command-line entry points (`python -m run_scripts.NAME`): absl flags in, library calls out."""
