"""What an :class:`~bayesbandit.Agent` checkpoint holds, and the checks a load makes.

A checkpoint (:mod:`bayesbandit.checkpoint`: JSON header and raw arrays, no pickle, a checksum,
written atomically) holds the agent's PRNG key, its arm sets and its policy state behind a header
naming the policy's class and hyper-parameters, a fingerprint of the reward program's behaviour,
a fingerprint of the fixed arm set, and the state's layout. A JAX policy's state is its pytree's
leaves; a host policy's is what its :class:`~bayesbandit.contract.HostState` capability gives (an index
included), in the same file. A load takes the policy from the caller and refuses
(:class:`~bayesbandit.errors.CheckpointError`) a file written for another policy, program, arm set
or state layout.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from bayesbandit.contract import HostState, ModelBased
from bayesbandit.errors import CheckpointError, InvalidInput
from bayesbandit.inference.fingerprint import program_fingerprint

__all__ = ["KIND", "policy_description", "program_of", "key_data", "state_arrays", "state_from_arrays", "check_policy"]

KIND = "bayesbandit-agent-2"  # 2: draw counter and pending decisions


def _describe(value: Any) -> Any:
    """A JSON description of a hyper-parameter (stable across processes: no addresses)."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float | np.floating):
        return float(value)
    if isinstance(value, np.ndarray | jax.Array) and np.asarray(value).ndim == 0:
        return float(np.asarray(value))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {f.name: _describe(getattr(value, f.name)) for f in dataclasses.fields(value)}
        return {"type": type(value).__name__, **fields}
    return {"type": type(value).__name__}


def policy_description(policy: Any) -> dict[str, Any]:
    """The policy's class and hyper-parameters, as a checkpoint records them (the program apart)."""
    cls = type(policy)
    params = {f.name: _describe(getattr(policy, f.name)) for f in dataclasses.fields(policy) if f.name != "model"}
    return {"class": f"{cls.__module__}.{cls.__qualname__}", "hyper_parameters": params}


def program_of(policy: Any, d: int) -> str | None:
    """The fingerprint of the reward program a model-based policy acts on at dimension ``d`` (else None)."""
    return program_fingerprint(policy.bound(d)) if isinstance(policy, ModelBased) else None


def key_data(key: Any) -> np.ndarray:
    """The raw data of a PRNG key (typed or legacy uint32)."""
    return np.asarray(jax.random.key_data(key) if jnp.issubdtype(key.dtype, jax.dtypes.prng_key) else key)


def _layout(state: Any) -> dict[str, Any]:
    leaves, treedef = jax.tree.flatten(state)
    return {"treedef": str(treedef), "leaves": [[list(np.shape(x)), np.dtype(x.dtype).str] for x in leaves]}


def state_arrays(policy: Any, kind: str, state: Any) -> tuple[dict[str, Any], list[np.ndarray]]:
    """``(layout meta, arrays)`` of a policy state, for the checkpoint.

    Raises
    ------
    InvalidInput
        A host policy without the :class:`~bayesbandit.contract.HostState` capability.
    """
    if kind == "jax":
        return _layout(state), [np.asarray(x) for x in jax.tree.leaves(state)]
    if not isinstance(policy, HostState):
        raise InvalidInput(
            f"{type(policy).__name__} keeps a host state but has no state_parts / state_from_parts, so an Agent "
            "cannot save it. Fix: implement the HostState capability (docs/contract.md)."
        )
    meta, arrays = policy.state_parts(state)
    return {"host": meta}, [np.asarray(a) for a in arrays]


def state_from_arrays(
    name: str, policy: Any, kind: str, template: Any, meta: dict[str, Any], arrays: list[np.ndarray]
) -> Any:
    """The policy state a checkpoint holds (``template``: a fresh state of the policy, for its layout)."""
    expected = policy_description(policy)["class"]
    wrong_layout = CheckpointError(
        f"{name!r} holds a state of another layout than {expected} builds here. Fix: pass the policy it was saved with."
    )
    if kind == "host":
        if "host" not in meta:
            raise wrong_layout
        try:
            return policy.state_from_parts(meta["host"], arrays)
        except (KeyError, IndexError, TypeError, ValueError) as exc:
            raise wrong_layout from exc
    layout = _layout(template)
    if layout["treedef"] != meta.get("treedef") or layout["leaves"] != [
        [list(np.shape(a)), a.dtype.str] for a in arrays
    ]:
        raise wrong_layout
    return jax.tree.unflatten(jax.tree.structure(template), [jnp.asarray(a) for a in arrays])


def check_policy(path: str | os.PathLike, meta: dict[str, Any], policy: Any) -> None:
    """Raise :class:`CheckpointError` unless ``meta`` was written by an Agent of ``policy``."""
    name = os.fspath(path)
    if meta.get("kind") != KIND:
        if str(meta.get("kind", "")).startswith("bayesbandit-agent"):
            raise CheckpointError(
                f"{name!r} is an Agent checkpoint of another layout ({meta['kind']!r}; this bayesbandit reads "
                f"{KIND!r}). Fix: load it with the bayesbandit that wrote it and keep serving, or start a new agent."
            )
        raise CheckpointError(f"{name!r} is a bayesbandit checkpoint but not of an Agent.")
    expected = policy_description(policy)
    if meta["policy"]["class"] != expected["class"]:
        raise CheckpointError(
            f"{name!r} was written for policy {meta['policy']['class']}, not {expected['class']}. "
            "Fix: pass the policy it was saved with."
        )
    saved_params, params = meta["policy"]["hyper_parameters"], expected["hyper_parameters"]
    if saved_params != params:
        diff = sorted(k for k in set(saved_params) | set(params) if saved_params.get(k) != params.get(k))
        raise CheckpointError(
            f"{name!r} was written for {expected['class']} with other hyper-parameters: "
            + ", ".join(f"{k}={saved_params.get(k)!r} (given {params.get(k)!r})" for k in diff)
            + ". Fix: pass the policy it was saved with."
        )
    if meta["program"] != program_of(policy, int(meta["d"])):
        raise CheckpointError(
            f"{name!r} was written for another reward program (its fingerprint differs from this policy's "
            "model). Fix: pass the policy with the program it was saved with."
        )
