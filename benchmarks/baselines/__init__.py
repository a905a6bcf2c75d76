"""Contender implementations for ``benchmarks/bench_contenders.py`` (importable, no JAX)."""
