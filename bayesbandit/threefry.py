"""JAX's random bits on CPU, compiled without a loop: the same numbers, bit for bit, sooner.

Every ``jax.random`` call hashes counters with Threefry-2x32 (20 rounds; Salmon et al. 2011,
"Parallel random numbers: as easy as 1, 2, 3"). On GPU, JAX compiles the hash as straight-line
code; on CPU, to keep programs small, as a loop of five 4-round steps that carries the key
schedule and the rotation constants and rotates them every step: 28 instructions a step, 13 of
them copies, and XLA:CPU runs each as its own small kernel, one step after the other. A bandit
round draws a few short random vectors (a key split, a posterior sample, a tie-breaking draw), so
these loops are more than half of a GLM-TSL ``select``: 97 of its 158 us on a 2-core CPU.

:func:`bayesbandit.runtime.enable_fast_rng` registers the straight-line hash as JAX's CPU lowering of its Threefry
primitive. The bits are identical (the function is the same; ``tests/test_threefry.py`` checks the
Random123 known-answer vectors and that a policy's actions do not change). Vectorised runs compile
faster and run faster, and an agent's ``select`` runs faster but compiles longer: the straight-line
hash is more code than the loop (GLM-TSL's ``select``: 0.48 s of XLA compilation against 0.31 s,
``benchmarks/results/bench_fast_rng.md``), which a new process's first decision pays
once (``benchmarks/results/bench_first_decision.md`` measures it with and without). Like
:func:`bayesbandit.runtime.enable_x64`, it changes a global JAX setting and is never done on import:
the ``bayesbandit`` command calls it for its own process; scripts and notebooks call it once.
It applies to programs compiled after the call.
"""

from __future__ import annotations

import numpy as np

from bayesbandit._typing import Array

__all__ = ["threefry2x32"]

_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_PARITY = np.uint32(0x1BD11BDA)


def _rotate_left(x: Array, bits: int) -> Array:
    return (x << np.uint32(bits)) | (x >> np.uint32(32 - bits))


def threefry2x32(key1: Array, key2: Array, x1: Array, x2: Array) -> tuple[Array, Array]:
    """Threefry-2x32 with 20 rounds of the counters ``(x1, x2)`` under the key ``(key1, key2)``.

    The key is added to the counters, then five groups ``i = 0..4`` of four mix rounds
    (``x1 += x2; x2 = rotl(x2, r) ^ x1``, rotations 13, 15, 26, 6 for even ``i``, 17, 29, 16, 24
    for odd), each followed by the key injection
    ``x1 += k[(i + 1) % 3]; x2 += k[(i + 2) % 3] + (i + 1)`` with ``k = (key1, key2,
    key1 ^ key2 ^ 0x1BD11BDA)``. All arithmetic on ``uint32``, wrapping.
    """
    keys = (key1, key2, key1 ^ key2 ^ _PARITY)
    x1, x2 = x1 + keys[0], x2 + keys[1]
    for group in range(5):
        for bits in _ROTATIONS[group % 2]:
            x1 = x1 + x2
            x2 = _rotate_left(x2, bits) ^ x1
        x1 = x1 + keys[(group + 1) % 3]
        x2 = x2 + keys[(group + 2) % 3] + np.uint32(group + 1)
    return x1, x2
