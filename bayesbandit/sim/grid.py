"""``sweep``: one compiled experiment over a grid of hyper-parameters, ``vmap`` over configurations and runs.

Policies that differ only in numbers (the pytree leaves of a registered policy: ``lam``,
``alpha``, ``v``, ...) stack into one policy whose leaves have a leading configuration axis; the
experiment is ``vmap`` over that axis of ``vmap`` over runs of ``lax.scan`` over rounds, compiled
once for the whole grid. Every configuration plays the same instances, feedback streams and
policy streams (common random numbers, :mod:`bayesbandit.sim.round`), so differences between
configurations are paired.

Configurations go through in batches of ``batch`` (one executable, called once per batch) to
bound the memory of the batched states.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import xarray as xr

from bayesbandit._compile import options_key
from bayesbandit.contract import Combinatorial, ModelBased, policy_kind
from bayesbandit.errors import InvalidInput
from bayesbandit.sim.round import init_run, key_streams, play_round
from bayesbandit.validation import check_compiler_options, check_int

__all__ = ["sweep", "stack_policies"]


def stack_policies(policies: Sequence[Any]) -> tuple[list[jax.Array], Any]:
    """The numeric leaves of ``policies`` stacked along a leading axis, and their common tree structure.

    Rebuild one policy per configuration with ``jax.tree.unflatten(treedef, leaves)`` under
    ``jit`` / ``vmap`` (hyper-parameter checks let tracers through).
    """
    structures = {jax.tree.structure(p) for p in policies}
    if len(structures) != 1:
        raise InvalidInput(
            f"sweep: the policies must differ only in their numeric hyper-parameters (one pytree structure); got "
            f"{len(structures)} structures. Fix: sweep one class with the same static settings, e.g. one oracle."
        )
    columns = zip(*(jax.tree.leaves(p) for p in policies), strict=True)
    return [jnp.stack([jnp.asarray(x) for x in column]) for column in columns], structures.pop()


def _one_run(
    structure: tuple[type, Any],
    env: Any,
    horizon: int,
    leaves: Any,
    env_key: jax.Array,
    pull_key: jax.Array,
    policy_key: jax.Array,
) -> tuple[jax.Array, jax.Array]:
    """Per-round total reward and regret of one configuration on one run."""
    policy = jax.tree.unflatten(structure[1], leaves)
    env_state, state = init_run(env_key, policy_key, policy, env, horizon)

    def body(state: Any, t: jax.Array) -> tuple[Any, tuple[jax.Array, jax.Array]]:
        state, rnd = play_round(pull_key, policy_key, policy, env, env_state, state, t)
        return state, (jnp.sum(rnd.feedback), rnd.outcome.regret)

    _, (reward, regret) = jax.lax.scan(body, state, jnp.arange(horizon, dtype=jnp.int32))
    return reward, regret


def _grid_runs(
    structure: tuple[type, Any],
    env: Any,
    horizon: int,
    leaves: Any,
    env_keys: jax.Array,
    pull_keys: jax.Array,
    policy_keys: jax.Array,
) -> tuple[jax.Array, jax.Array]:
    """``vmap`` over configurations (leading axis of ``leaves``) of ``vmap`` over runs; compiled per structure.

    The instances depend on the runs only, so ``vmap`` draws each once for all configurations.

    ``structure`` is ``(policy class, tree structure)``: the class is part of the cache key because
    an executable compiled for one policy must never run another, and JAX's own ``register_dataclass``
    (which a user's policy may use) gives classes with the same fields equal tree structures
    (``contract.register_dataclass_node``, which the library's policies use, does not).
    """
    over_runs = jax.vmap(functools.partial(_one_run, structure, env, horizon), in_axes=(None, 0, 0, 0))
    return jax.vmap(over_runs, in_axes=(0, None, None, None))(leaves, env_keys, pull_keys, policy_keys)


@functools.lru_cache(maxsize=8)
def _compiled_grid(options: tuple[tuple[str, Any], ...]) -> Any:
    """:func:`_grid_runs` jitted with these XLA options (one cache of executables per set of options)."""
    return jax.jit(_grid_runs, static_argnums=(0, 1, 2), compiler_options=dict(options) or None)


def sweep(
    policies: Sequence[Any],
    env: Any,
    horizon: int,
    runs: int,
    *,
    seed: int = 0,
    batch: int = 25,
    labels: Sequence[str] | None = None,
    first_run: int = 0,
    compiler_options: dict[str, Any] | None = None,
) -> xr.Dataset:
    """Play every configuration in ``policies`` on the same ``runs`` instances, compiled once.

    Parameters
    ----------
    policies : sequence of policies
        ``kind = "jax"`` registered policies of one class and static settings.
    env : environment
    horizon, runs, seed : int
        Rounds, instances and the seed of the key streams (the same for every configuration).
    batch : int
        Configurations per call of the compiled experiment.
    labels : sequence of str, optional
        A name per configuration (default: ``repr``).
    first_run : int
        The global index of the first run (as in :func:`~bayesbandit.sim.simulate`): runs
        ``first_run, ..., first_run + runs - 1`` are played, the ``run`` coordinate.
    compiler_options : dict, optional
        XLA options for the compiled experiment, as in :func:`~bayesbandit.sim.simulate`
        (``{"xla_backend_optimization_level": 0}`` compiles faster and runs slower).

    Returns
    -------
    xarray.Dataset
        dims ``(config, run, round)``: ``reward`` (the round's total realised reward) and
        ``regret`` (its expected regret from the environment's oracle).

    Examples
    --------
    >>> import bayesbandit as bb
    >>> from bayesbandit.envs import LinearBandit
    >>> ds = sweep([bb.LinTS(v=v) for v in (0.1, 1.0)], LinearBandit(K=5, d=2), horizon=20, runs=3)
    >>> dict(ds.sizes)
    {'config': 2, 'run': 3, 'round': 20}
    """
    if not policies:
        raise InvalidInput("sweep: 'policies' is empty. Fix: pass at least one configuration.")
    for policy in policies:
        if policy_kind(policy) != "jax":
            raise InvalidInput(f"sweep: {type(policy).__name__} is a host policy. Fix: sweep jittable policies.")
        if isinstance(policy, ModelBased):
            policy.check_program(env.d)
        if isinstance(policy, Combinatorial):
            policy.check_arms(env.K)
    horizon = check_int("sweep", "horizon", horizon, low=1)
    runs = check_int("sweep", "runs", runs, low=1)
    batch = check_int("sweep", "batch", batch, low=1)
    first_run = check_int("sweep", "first_run", first_run, low=0, high=2**32 - runs)
    grid_runs = _compiled_grid(options_key(check_compiler_options("sweep", compiler_options)))
    stacked, treedef = stack_policies(policies)
    structure = (type(policies[0]), treedef)
    keys = key_streams(seed, runs, first_run=first_run)
    rewards, regrets = [], []
    size = min(batch, len(policies))
    for start in range(0, len(policies), size):
        stop = min(start + size, len(policies))
        rows = np.minimum(np.arange(start, start + size), len(policies) - 1)  # the last batch padded: one executable
        part = [x[rows] for x in stacked]
        reward, regret = grid_runs(structure, env, horizon, part, keys.env, keys.pull, keys.policy)
        rewards.append(np.asarray(reward)[: stop - start])
        regrets.append(np.asarray(regret)[: stop - start])
    names = list(labels) if labels is not None else [repr(p) for p in policies]
    return xr.Dataset(
        {
            "reward": (("config", "run", "round"), np.concatenate(rewards)),
            "regret": (("config", "run", "round"), np.concatenate(regrets)),
        },
        coords={"config": names, "run": np.arange(first_run, first_run + runs), "round": np.arange(horizon)},
        attrs={"horizon": horizon, "runs": runs, "first_run": first_run, "seed": seed},
    )
