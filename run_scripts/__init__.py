"""Command-line entry points (`python -m run_scripts.NAME`): absl flags in, library calls out.

Each checks its flags, files and settings before it loads TensorFlow, then loads it quietly and
works (official/command_line.py): a mistake is answered in well under a second.
"""
