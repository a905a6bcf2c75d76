"""``enable_fast_rng``: JAX's random numbers, bit for bit, from a Threefry hash compiled without a loop."""

import jax
import numpy as np
from bayesbandit.models import logistic
from jax.extend.random import threefry_2x32

import bayesbandit as bb
from bayesbandit.threefry import threefry2x32

# Random123's known-answer vectors for Threefry-2x32, 20 rounds: (key, counter) -> output.
KNOWN_ANSWERS = [
    ((0x00000000, 0x00000000), (0x00000000, 0x00000000), (0x6B200159, 0x99BA4EFE)),
    ((0xFFFFFFFF, 0xFFFFFFFF), (0xFFFFFFFF, 0xFFFFFFFF), (0x1CB996FC, 0xBB002BE7)),
    ((0x13198A2E, 0x03707344), (0x243F6A88, 0x85A308D3), (0xC4923A9C, 0x483DF7A0)),
]


def test_the_hash_gives_the_known_answers_compiled_and_in_numpy():
    bb.runtime.enable_fast_rng()  # the harness has done it; a second call changes nothing
    hash_jit = jax.jit(threefry_2x32)
    for key, counter, expected in KNOWN_ANSWERS:
        got = np.asarray(hash_jit(np.uint32(key), np.uint32(counter)))
        np.testing.assert_array_equal(got, np.uint32(expected))
        direct = threefry2x32(*(np.array([v], dtype=np.uint32) for v in (*key, *counter)))
        np.testing.assert_array_equal(np.concatenate(direct), np.uint32(expected))


def test_compiled_random_draws_have_no_loop():
    text = jax.jit(lambda k: jax.random.normal(k, (10,))).lower(jax.random.key(0)).compile().as_text()
    assert " while(" not in text


def draws() -> dict[str, np.ndarray]:
    """JAX's random functions and a policy's actions, drawn under this process's Threefry lowering."""
    key = jax.random.key(7)
    keys = jax.random.split(key, 5)
    out = {
        "split": jax.random.key_data(keys),
        "bits": jax.jit(lambda k: jax.random.bits(k, (3, 1001)))(key),
        "normal": jax.jit(jax.vmap(lambda k: jax.random.normal(k, (17,))))(keys),
        "uniform": jax.random.uniform(jax.random.PRNGKey(3), (4, 5)),
        "randint": jax.random.randint(key, (64,), 0, 1000),
        "actions": bb.simulate(
            {"tsl": bb.GLMTSL(logistic(), a=1.0)}, bb.envs.LogisticBandit(K=20, d=3), 40, runs=3, seed=1
        )["action"].values,
    }
    return {name: np.asarray(value) for name, value in out.items()}


def test_the_draws_and_a_policy_s_actions_equal_jax_s_own_lowering(fresh_process):
    """The draws here (the harness turned the fast lowering on) equal those of a 64-bit process that never did
    (``tests/_fresh.py``)."""
    fresh_process.start("jax_threefry")  # it draws while this process does
    fast = draws()
    jax_own = fresh_process.result("jax_threefry", "test_threefry.py:draws")
    assert jax_own.keys() == fast.keys()
    for name in jax_own:
        np.testing.assert_array_equal(jax_own[name], fast[name], err_msg=name)
