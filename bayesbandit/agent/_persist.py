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
import hashlib
import json
import os
import warnings
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from bayesbandit.agent._decisions import Decision
from bayesbandit.checkpoint import array_fingerprint, read_checkpoint, write_checkpoint
from bayesbandit.contract import HostState, ModelBased
from bayesbandit.errors import CheckpointError, InvalidInput
from bayesbandit.inference.fingerprint import program_fingerprint
from bayesbandit.validation import check_arms

__all__ = [
    "KIND",
    "policy_description",
    "program_of",
    "fingerprint",
    "key_data",
    "state_arrays",
    "state_from_arrays",
    "check_policy",
    "snapshot",
    "write",
    "read",
    "restore",
    "logged_decision",
    "logged_reward",
]

KIND = "bayesbandit-agent-3"  # 2: draw counter and pending decisions; 3: initial-exploration design, log path


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


def fingerprint(policy: Any, d: int) -> str:
    """What the decision log records as the policy: its class and a hash of its hyper-parameters and program."""
    description = policy_description(policy)
    program = program_of(policy, d)
    digest = hashlib.sha256(json.dumps([description, program], sort_keys=True).encode()).hexdigest()[:16]
    return f"{description['class']}:{digest}"


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


# ---------------------------------------------------------------------------------------------- an agent's checkpoint
def snapshot(agent: Any) -> tuple[dict[str, Any], list[np.ndarray]]:
    """An agent's checkpoint: header and arrays (taken under the agent's lock; host state copied, JAX arrays
    are immutable). The arrays: key, fixed arms, last arms, exploration design, the pending decisions', state."""
    layout, state = state_arrays(agent.policy, agent._kind, agent._state)
    if agent._kind == "host":
        state = [np.array(a, copy=True) for a in state]
    has_last_arms = agent._last_arms is not None and agent._arms is None
    book, book_arrays = agent._decisions.parts()
    log = agent._log
    header = {
        "kind": KIND,
        "policy": policy_description(agent.policy),
        "program": program_of(agent.policy, agent.d),
        "arms": None if agent._arms is None else array_fingerprint(agent._arms),
        "d": agent.d,
        "capacity": agent.policy.capacity(agent._state) if agent._buffered else None,
        "num_updates": agent.num_updates,
        "failed_updates": agent._failed_updates,
        "draws": agent._draws,
        "log_seq": None if log is None else log.last_seq,
        "log_path": None if log is None else os.fspath(log.path),
        "has_last_arms": has_last_arms,
        "decisions": {**book, "max_pending": agent._decisions.max_pending, "max_age": agent._decisions.max_age},
        "state": layout,
    }
    arrays = [key_data(agent._key)]
    if agent._arms is not None:
        arrays.append(agent._arms)
    if has_last_arms:
        arrays.append(np.asarray(agent._last_arms))
    return header, [*arrays, np.asarray(agent._design), *book_arrays, *state]


def write(path: str | os.PathLike, header: dict[str, Any], arrays: list[np.ndarray], log: Any) -> None:
    """Write the checkpoint atomically, its log's rows committed first; then tell the log what it holds."""
    if log is not None:  # the log holds every reward the checkpoint does
        log.flush(header["log_seq"])
    write_checkpoint(path, header, arrays)
    if log is not None:
        try:
            log.checkpointed(header["log_seq"])
        except OSError as exc:  # the checkpoint is written and no row is lost: compaction retries at the next save
            warnings.warn(f"the decision log could not be compacted after the checkpoint: {exc}", RuntimeWarning, 3)


def read(path: str | os.PathLike, policy: Any, arms: Any, log_given: bool) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(header, named arrays)`` of an agent's checkpoint for ``policy``, checked (:func:`check_policy`; the arm
    set if given; a checkpoint saved with a log needs ``log_given``)."""
    name = os.fspath(path)
    meta, arrays = read_checkpoint(path)
    check_policy(path, meta, policy)
    if meta["log_seq"] is not None and not log_given:
        raise CheckpointError(
            f"{name!r} was saved by an agent with a decision log, {meta['log_path']!r}: loading it without the log "
            "would drop every reward and decision logged after the checkpoint, and stop logging. Fix: "
            f"Agent.load({name!r}, policy, log={meta['log_path']!r}), or log=None to accept losing them."
        )
    arrays = list(arrays)
    named: dict[str, Any] = {"key": jnp.asarray(arrays.pop(0))}
    named["arms"] = arrays.pop(0) if meta["arms"] is not None else None
    named["last_arms"] = arrays.pop(0) if meta["has_last_arms"] else None
    named["design"] = arrays.pop(0)
    named["book"] = [arrays.pop(0), arrays.pop(0)]
    named["state"] = arrays
    if arms is not None:
        given = check_arms(arms, unchanged=None)
        if named["arms"] is None or array_fingerprint(given) != meta["arms"]:
            raise CheckpointError(
                f"{name!r} was written for another arm set than the one given. Fix: load without arms=, "
                "or pass the arm set it was saved with."
            )
    return meta, named


def restore(agent: Any, name: str, meta: dict[str, Any], arrays: dict[str, Any]) -> None:
    """Put what :func:`read` gave into a fresh agent of the checkpoint's policy."""
    agent._state = state_from_arrays(name, agent.policy, agent._kind, agent._state, meta["state"], arrays["state"])
    agent._decisions.restore(meta["decisions"], arrays["book"])
    agent._draws = int(meta["draws"])
    agent._key = arrays["key"]
    agent._last_arms = arrays["last_arms"]
    agent._design = arrays["design"]
    agent.num_updates = int(meta["num_updates"])
    agent._failed_updates = int(meta["failed_updates"])


def logged_decision(row: tuple) -> Decision:
    """The :class:`Decision` a decision-log row records."""
    action = np.asarray(json.loads(row[5]))
    return Decision(
        row[1], int(action) if action.ndim == 0 else action, row[2], propensity=row[8], propensity_se=row[9]
    )


def logged_reward(row: tuple) -> Any:
    """The reward a reward-log row records."""
    return np.asarray(json.loads(row[3]))
