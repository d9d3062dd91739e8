"""Stands in for keras_hub in the processes tests/test_startup.py starts (this folder
first on their PYTHONPATH): an entry point must answer its checks before it imports it."""

raise ImportError("keras_hub is not importable here "
                  "(imported before the entry point's checks ended)")
