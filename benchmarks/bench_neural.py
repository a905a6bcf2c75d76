"""DeepFPL per round per instance: one compiled ``vmap`` over instances against a plain Optax loop, in one process.

The problem is the deep contextual bandit of Kveton et al. (2020, Section 5.2): each round
``K = 10`` MNIST images (784 pixels; scikit-learn's 8x8 digits where ``$BAYESBANDIT_DATA/mnist``
is absent), a 50-unit ReLU network, one Adam step (lr 1e-3) on the 32 most recent rows with
rewards perturbed by N(0, 1) noise.

Three ways to run the same rounds, timed side by side (compile time apart, median of 3):

* **bayesbandit**: ``bb.DeepFPL(mlp(hidden=50))`` on the NumPyro program, ``lax.scan`` over rounds
  under ``vmap`` over ``R`` instances, one compiled call;
* **Optax loop** (the baseline the issue names): the same network written by hand as a params
  dict, one jitted round (forward on the K images, reward, ring buffer, Adam step) called from a
  Python loop over instances and rounds: what a practitioner writes without this library;
* **hand-written vmap**: that hand-written round under the same ``vmap``/``scan``, the floor for
  the program-first path (its ratio to bayesbandit is the cost of going through the NumPyro
  program: potential, constrain, the likelihood's ``log_prob``).

Usage, from the repository root: ``python -m benchmarks.bench_neural [--quick] [--out-dir DIR]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np
import optax

if not __package__:
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bayesbandit.models import mlp  # noqa: E402

import bayesbandit as bb  # noqa: E402
from bayesbandit.datasets.images import ImageData, load_digits, load_mnist  # noqa: E402
from bayesbandit.envs import ImageClassBandit  # noqa: E402
from benchmarks._common import RESULTS, compile_and_time, machine_info, md_table, write_results  # noqa: E402

HIDDEN, BATCH, LR, A = 50, 32, 1e-3, 1.0


def _data() -> ImageData:
    try:
        return load_mnist()
    except bb.errors.InvalidInput:
        return load_digits()


# ----------------------------------------------------------------------------- bayesbandit
def bayesbandit_experiment(env: ImageClassBandit, rounds: int):
    policy = bb.DeepFPL(mlp(hidden=HIDDEN), a=A, learning_rate=LR, batch=BATCH)

    def one_run(key):
        k_env, k_init, k_rounds = jax.random.split(key, 3)
        instance = env.reset(k_env)
        state = policy.init(d=env.d, key=k_init)

        def step(state, inputs):
            t, k = inputs
            k_select, k_reward = jax.random.split(k)
            arms = env.arms(instance, t)
            action, _ = policy.select(state, arms, k_select)
            reward, outcome = env.pull(instance, action, k_reward, t)
            state, _ = policy.update(state, arms, action, reward)
            return state, outcome.expected_reward

        _, means = jax.lax.scan(step, state, (jnp.arange(rounds), jax.random.split(k_rounds, rounds)))
        return means.mean()

    return jax.vmap(one_run)


# ----------------------------------------------------------------------------- hand-written
def _init(key, d: int):
    k1, k2 = jax.random.split(key)
    params = {
        "w_hidden": jax.random.normal(k1, (d, HIDDEN), jnp.float32) / np.sqrt(d),
        "b_hidden": jnp.zeros(HIDDEN, jnp.float32),
        "w_out": jax.random.normal(k2, (HIDDEN,), jnp.float32) / np.sqrt(HIDDEN),
        "b_out": jnp.zeros((), jnp.float32),
    }
    return params, optax.adam(LR).init(params)


def _logits(params, x):
    return jax.nn.relu(x @ params["w_hidden"] + params["b_hidden"]) @ params["w_out"] + params["b_out"]


def hand_round(env: ImageClassBandit):
    """One round of hand-written DeepFPL: greedy on the network, then one Adam step on the perturbed batch."""
    optimizer = optax.adam(LR)

    def round_(carry, instance, t, key):
        params, opt_state, xs, ys, count = carry
        k_explore, k_reward, k_noise = jax.random.split(key, 3)
        arms = env.arms(instance, t).astype(jnp.float32)
        greedy = jnp.argmax(_logits(params, arms))
        action = jnp.where(t < BATCH, jax.random.randint(k_explore, (), 0, arms.shape[0]), greedy)
        reward, outcome = env.pull(instance, action, k_reward, t)
        slot = count % BATCH
        xs, ys = xs.at[slot].set(arms[action]), ys.at[slot].set(reward.astype(jnp.float32))
        filled = (jnp.arange(BATCH) < count + 1).astype(jnp.float32)
        y_tilde = ys + A * jax.random.normal(k_noise, ys.shape, jnp.float32)

        def loss(p):
            eta = _logits(p, xs)
            return jnp.sum(filled * (jax.nn.softplus(eta) - y_tilde * eta)) / jnp.sum(filled)

        updates, opt_state = optimizer.update(jax.grad(loss)(params), opt_state, params)
        return (optax.apply_updates(params, updates), opt_state, xs, ys, count + 1), outcome.expected_reward

    return round_


def hand_vmapped(env: ImageClassBandit, rounds: int):
    round_ = hand_round(env)

    def one_run(key):
        k_env, k_init, k_rounds = jax.random.split(key, 3)
        instance = env.reset(k_env)
        params, opt_state = _init(k_init, env.d)
        carry = (params, opt_state, jnp.zeros((BATCH, env.d), jnp.float32), jnp.zeros(BATCH, jnp.float32), 0)

        def step(carry, inputs):
            return round_(carry, instance, *inputs)

        _, means = jax.lax.scan(step, carry, (jnp.arange(rounds), jax.random.split(k_rounds, rounds)))
        return means.mean()

    return jax.vmap(one_run)


def optax_loop_seconds(env: ImageClassBandit, keys, rounds: int) -> tuple[float, float, float]:
    """(compile seconds, seconds per round per instance, mean reward): a jitted round in a Python loop."""
    round_ = jax.jit(hand_round(env))
    total, rewards, compile_s = 0.0, [], 0.0
    for i, key in enumerate(keys):
        k_env, k_init, k_rounds = jax.random.split(key, 3)
        instance = env.reset(k_env)
        params, opt_state = _init(k_init, env.d)
        carry = (params, opt_state, jnp.zeros((BATCH, env.d), jnp.float32), jnp.zeros(BATCH, jnp.float32), 0)
        round_keys = jax.random.split(k_rounds, rounds)
        if i == 0:
            start = time.perf_counter()
            jax.block_until_ready(round_(carry, instance, jnp.asarray(0), round_keys[0]))
            compile_s = time.perf_counter() - start
        start = time.perf_counter()
        for t in range(rounds):
            carry, mean = round_(carry, instance, jnp.asarray(t), round_keys[t])
            rewards.append(mean)
        jax.block_until_ready(carry)
        total += time.perf_counter() - start
    return compile_s, total / (len(keys) * rounds), float(np.mean(rewards))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer instances and rounds")
    parser.add_argument("--instances", type=int, default=None, help="vmapped instances (default 500; quick 50)")
    parser.add_argument("--rounds", type=int, default=None, help="rounds (default 200; quick 50)")
    parser.add_argument("--out-dir", default=RESULTS)
    args = parser.parse_args(argv)
    bb.runtime.enable_x64()
    instances = args.instances or (50 if args.quick else 500)
    rounds = args.rounds or (50 if args.quick else 200)
    loop_instances = max(2, instances // 50)
    env = ImageClassBandit(data=_data())
    keys = jax.random.split(jax.random.PRNGKey(0), instances)

    rows = []
    for name, fn in (
        ("bayesbandit DeepFPL (NumPyro program)", bayesbandit_experiment(env, rounds)),
        ("hand-written round, same vmap", hand_vmapped(env, rounds)),
    ):
        compile_s, run_s, _, means, _ = compile_and_time(fn, (keys,), reps=3)
        rows.append([name, f"vmap over {instances}", run_s / (instances * rounds), compile_s, float(np.mean(means))])
        print(rows[-1], flush=True)
    compile_s, per, reward = optax_loop_seconds(env, keys[:loop_instances], rounds)
    rows.append(["plain Optax loop (jitted round)", f"loop over {loop_instances}", per, compile_s, reward])
    print(rows[-1], flush=True)
    baseline = rows[-1][2]
    table = [
        [name, how, f"{1e6 * per:.0f} µs", f"×{baseline / per:.1f}", f"{compile_s:.1f} s", f"{reward:.3f}"]
        for name, how, per, compile_s, reward in rows
    ]
    text = "\n".join(
        [
            "# DeepFPL: time per round per instance",
            "",
            machine_info(),
            "",
            f"{env.data.describe()}; K = {env.K}, a {HIDDEN}-unit ReLU network, Adam (lr {LR}) on the {BATCH} "
            f"most recent rows, a = {A}; {rounds} rounds. Per round and instance (select + update + the "
            "environment), compile time apart; speed-up against the plain Optax loop. The last column is the "
            "mean expected reward over those rounds (a check that all three play the same game).",
            "",
            md_table(["implementation", "instances", "per round per instance", "speed-up", "compile", "reward"], table),
        ]
    )
    print(write_results("bench_neural", args.quick, text, args.out_dir))
    return 0


if __name__ == "__main__":
    sys.exit(main())
