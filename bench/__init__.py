"""Benchmarks and real-weight checks; run by hand, never by the test suite."""
