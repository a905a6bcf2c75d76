"""Benchmarks of bayesbandit (run the scripts, e.g. ``python benchmarks/bench_policies.py``)."""
