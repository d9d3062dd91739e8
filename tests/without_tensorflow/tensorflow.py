"""Stands in for tensorflow in the processes tests/test_startup.py starts (this folder
first on their PYTHONPATH): an entry point must answer its checks before it imports it."""

raise ImportError("tensorflow is not importable here "
                  "(imported before the entry point's checks ended)")
