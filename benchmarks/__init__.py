"""Benchmarks of bayesbandit (from the repository root: ``python -m benchmarks.bench_policies`` or
``python benchmarks/bench_policies.py``; see ``benchmarks/README.md``)."""
