"""A stateful agent over a pure policy: validation, key management, checkpoints.

``Agent`` is the convenience level over the pure policy API (the policy stays the expert
level). Every input is validated before any state changes; a bad input raises
:class:`bayesbandit.errors.InvalidInput` and leaves the agent as it was.

Checkpoints are single files written atomically (a temporary file in the same folder, flushed
and ``fsync``-ed, then renamed over the target), so an interrupted save leaves the previous file
intact. They hold a format version, the policy (pickled: zoo models and module-level programs
pickle; for a closure pass ``policy=`` to :meth:`Agent.load`), the state as NumPy arrays and the
PRNG key, so a reloaded agent continues bit-for-bit.
"""

from __future__ import annotations

import functools
import os
import pickle
import tempfile
import warnings
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from bayesbandit._typing import ArrayLike
from bayesbandit._validation import check_arm, check_features, check_reward
from bayesbandit.errors import CheckpointError, InvalidInput, NotConverged
from bayesbandit.history import RowHistory
from bayesbandit.policies._base import Policy, PolicyInfo, model_of

__all__ = ["Agent"]

FORMAT_VERSION = 1
_MAGIC = "bayesbandit-agent"


def _select_and_split(policy: Policy, state: Any, arms: Any, key: Any) -> tuple[Any, Any, PolicyInfo]:
    """One jitted call: advance the agent's key and select with a fresh subkey."""
    key, sub = jax.random.split(key)
    arm, info = policy.select(state, arms, sub)
    return key, arm, info


class Agent:
    """Interactive bandit agent.

    Parameters
    ----------
    policy : Policy
        A pure policy, e.g. ``bb.GLMTSL(logistic(), a=1.0)``.
    arms : array, shape (K, d), optional
        A fixed arm set; then ``select()`` takes no argument.
    d : int, optional
        Feature dimension for contextual use; then ``select(arms)`` takes each round's arms.
    seed : int
        Seed of the agent's PRNG key (same seed, same choices).
    capacity : int, optional
        Initial row-buffer capacity when a row buffer is used (it doubles when full).

    Examples
    --------
    >>> import numpy as np
    >>> import bayesbandit as bb
    >>> from bayesbandit.models import logistic
    >>> arms = np.random.default_rng(0).uniform(-1, 1, (10, 3))
    >>> agent = bb.Agent(bb.GLMTSL(logistic()), arms=arms, seed=0)
    >>> arm = agent.select()
    >>> agent.update(arm, 1.0)
    >>> agent.num_updates
    1
    """

    def __init__(
        self,
        policy: Policy,
        arms: ArrayLike | None = None,
        *,
        d: int | None = None,
        seed: int = 0,
        capacity: int | None = None,
        _state: Any = None,
        _key: Any = None,
    ) -> None:
        if arms is None and d is None:
            raise InvalidInput("Agent needs a fixed arm set (arms=, shape (K, d)) or a feature dimension (d=).")
        self.policy = policy
        self._arms = None if arms is None else check_features(arms, "arms", ndim=2)
        self.d = int(self._arms.shape[1]) if self._arms is not None else int(d)  # type: ignore[arg-type]
        if self._arms is not None and d is not None and d != self.d:
            raise InvalidInput(f"d={d} does not match the arm set's feature dimension {self.d}.")
        model = model_of(policy)
        self._bound = None if model is None else policy.bound(self.d)  # type: ignore[attr-defined]
        self._key = jax.random.PRNGKey(seed) if _key is None else _key
        self.state = policy.init(self._arms, d=self.d, capacity=capacity) if _state is None else _state
        self._select = jax.jit(functools.partial(_select_and_split, policy))
        self._update = jax.jit(policy.update)
        self._arms_device = None if self._arms is None else jnp.asarray(self._arms)
        self._last_arms: np.ndarray | None = None
        self.last_info: PolicyInfo | None = None

    # ------------------------------------------------------------------------------ acting
    @property
    def num_updates(self) -> int:
        """Number of observations recorded."""
        return int(self.state.t)

    def select(self, arms: ArrayLike | None = None) -> int:
        """Choose an arm: an index into the fixed arm set, or into ``arms`` (K, d) if given."""
        if arms is None:
            if self._arms is None:
                raise InvalidInput("this agent has no fixed arm set: pass this round's arms, select(arms).")
            arms_np, arms_device = self._arms, self._arms_device
        else:
            arms_np = check_features(arms, "arms", ndim=2, dim=self.d)
            arms_device = jnp.asarray(arms_np)
        key, arm, info = self._select(self.state, arms_device, self._key)
        self._key = key
        self._last_arms = arms_np
        self.last_info = info
        return int(arm)

    def update(self, arm: int, reward: float) -> None:
        """Record ``reward`` for ``arm`` (an index into the fixed set, or into the last ``select`` arms)."""
        arms = self._arms if self._arms is not None else self._last_arms
        if arms is None:
            raise InvalidInput("update(arm, reward) needs a previous select(arms) on a contextual agent.")
        index = check_arm(arm, arms.shape[0])
        if self._bound is None:
            value = check_reward(reward, None, "", "y", arm=index)
        else:
            b = self._bound
            value = check_reward(reward, b.support, b.support_name, b.obs_site, arm=index)
        state = self.state
        history = getattr(state, "history", None)
        if isinstance(history, RowHistory) and int(history.size) >= history.capacity:
            state = state._replace(history=history.grow(2 * history.capacity))
        target = jnp.asarray(index) if self._arms is not None else jnp.asarray(arms[index])
        new_state = self._update(state, target, jnp.asarray(value))
        fit = getattr(new_state, "fit", None)
        if fit is not None and not bool(fit.info.converged):
            if not np.all(np.isfinite(np.asarray(fit.theta))):
                raise NotConverged(
                    f"the MAP became non-finite after reward {value:g} for arm {index}; the agent state was not changed."
                )
            warnings.warn(
                f"Newton's method did not converge within max_newton={getattr(self.policy, 'max_newton', '?')} "
                f"steps (decrement {float(fit.info.decrement):.3g}); the next update continues from here.",
                RuntimeWarning,
                stacklevel=2,
            )
        self.state = new_state

    # ------------------------------------------------------------------------------ saving
    def save(self, path: str | os.PathLike) -> None:
        """Write a checkpoint atomically: the previous file survives an interrupted save."""
        path = os.fspath(path)
        try:
            pickle.dumps(self.policy)
            policy = self.policy
        except Exception:  # a closure or lambda program: the caller passes it back on load
            policy = None
        payload = {
            "magic": _MAGIC,
            "version": FORMAT_VERSION,
            "policy": policy,
            "arms": self._arms,
            "d": self.d,
            "state": jax.tree.map(np.asarray, self.state),
            "key": np.asarray(
                jax.random.key_data(self._key) if jnp.issubdtype(self._key.dtype, jax.dtypes.prng_key) else self._key
            ),
        }
        folder = os.path.dirname(os.path.abspath(path))
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".bbagent", dir=folder)
        try:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)  # mkstemp creates 0600; give the file the usual mode
            with os.fdopen(fd, "wb") as f:
                pickle.dump(payload, f, protocol=pickle.HIGHEST_PROTOCOL)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise

    @classmethod
    def load(cls, path: str | os.PathLike, policy: Policy | None = None) -> Agent:
        """Read a checkpoint written by :meth:`save`.

        Parameters
        ----------
        path : path-like
        policy : Policy, optional
            Needed when the saved policy could not be pickled (a closure program).
        """
        try:
            with open(path, "rb") as f:
                payload = pickle.load(f)
        except FileNotFoundError as exc:
            raise CheckpointError(f"no checkpoint at {os.fspath(path)!r}.") from exc
        except Exception as exc:
            raise CheckpointError(f"{os.fspath(path)!r} is not a readable bayesbandit checkpoint: {exc}") from exc
        if not isinstance(payload, dict) or payload.get("magic") != _MAGIC:
            raise CheckpointError(f"{os.fspath(path)!r} is not a bayesbandit checkpoint.")
        if payload.get("version") != FORMAT_VERSION:
            raise CheckpointError(
                f"checkpoint format version {payload.get('version')} is not supported (this is version {FORMAT_VERSION})."
            )
        policy = policy if policy is not None else payload["policy"]
        if policy is None:
            raise CheckpointError(
                "the saved policy could not be pickled (a closure program?): pass it, load(path, policy=...)."
            )
        state = jax.tree.map(jnp.asarray, payload["state"])
        return cls(policy, payload["arms"], d=payload["d"], _state=state, _key=jnp.asarray(payload["key"]))
