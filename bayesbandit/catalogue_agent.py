"""``CatalogueAgent``: an interactive agent over an index-backed policy and a catalogue that changes.

::

    agent = bb.CatalogueAgent(bb.SubTS(), bb.Catalogue(ids, features), seed=0)
    item = agent.select()                  # an item id
    agent.update(item, reward)
    agent.add_arms(new_ids, new_features)  # items arriving
    agent.remove_arms(gone_ids)            # items leaving (Sub-TS; Sub-Elim handles additions only)
    agent.save("agent/"); agent = bb.CatalogueAgent.load("agent/", bb.SubTS())

Every call is validated before anything changes (unknown or duplicate ids, NaN, wrong dimension,
non-finite rewards, an update for an item the last ``select`` did not return): a rejected call
raises a :mod:`bayesbandit.errors` exception and leaves the agent as it was.

A save is a folder: the policy's arrays and hyper-parameters and the generator's state in a
checkpoint (:mod:`bayesbandit.checkpoint`: JSON and raw arrays, no pickle, a checksum), each index
in its own sub-folder (an Annoy forest is memory-mapped on load), and a manifest naming the
current generation, replaced atomically last: a crash mid-save leaves the previous save loadable.
"""

from __future__ import annotations

import math
import os
import secrets
import shutil
from pathlib import Path
from typing import Any

import numpy as np

from bayesbandit._base import policy_kind
from bayesbandit.agent import policy_description
from bayesbandit.checkpoint import read_checkpoint, write_checkpoint
from bayesbandit.errors import CheckpointError, InvalidInput, UnknownArm
from bayesbandit.policies.index._catalogue import index_class
from bayesbandit.validation import check_int

__all__ = ["CatalogueAgent"]

_KIND = "bayesbandit.CatalogueAgent"
_MANIFEST = "MANIFEST"


class CatalogueAgent:
    """Interactive agent over ``SubTS`` / ``SubElim`` (see the module docstring).

    Parameters
    ----------
    policy : SubTS or SubElim
    arms : Catalogue or (K, d) array
        The initial catalogue (building its index is the agent's preprocessing).
    seed : int
        Seed of the agent's generator (same seed, same choices).

    Examples
    --------
    >>> import numpy as np
    >>> import bayesbandit as bb
    >>> rng = np.random.default_rng(0)
    >>> agent = bb.CatalogueAgent(bb.SubTS(index="exact"), bb.Catalogue(np.arange(100, 150), rng.normal(size=(50, 4))))
    >>> item = agent.select()
    >>> agent.update(item, 1.0)
    >>> agent.add_arms(np.array([7]), np.ones((1, 4)))
    >>> agent.remove_arms(np.array([100]))
    >>> len(agent), agent.num_updates
    (50, 1)
    """

    def __init__(self, policy: Any, arms: Any, *, seed: int = 0) -> None:
        if policy_kind(policy) != "host" or not callable(getattr(policy, "add_arms", None)):
            raise InvalidInput(
                f"CatalogueAgent needs an index-backed policy (SubTS or SubElim); got {type(policy).__name__}. "
                "Fix: use bayesbandit.Agent for the other policies."
            )
        self.policy = policy
        self.seed = check_int("CatalogueAgent", "seed", seed, low=0, high=2**63 - 1)
        self._rng = np.random.default_rng(self.seed)
        self.state = policy.init(arms)
        self.num_updates = 0
        self._last: int | None = None

    def __len__(self) -> int:
        return len(self.state.store) if hasattr(self.state, "store") else len(self.state)

    # ------------------------------------------------------------------------------ acting
    def select(self) -> int:
        """The item to show now (an id of the catalogue)."""
        item, self.last_select_info = self.policy.select(self.state, None, self._rng)
        self._last = int(item)
        return self._last

    def update(self, item: Any, reward: Any) -> None:
        """Record ``reward`` for ``item`` (the id the last :meth:`select` returned)."""
        if isinstance(item, bool) or not isinstance(item, int | np.integer):
            raise InvalidInput(f"CatalogueAgent.update: 'item' must be an int id. Got {item!r}.")
        if self._last is None or int(item) != self._last:
            raise UnknownArm(
                f"CatalogueAgent.update: item {item!r} is not the one the last select() returned ({self._last}). "
                "Fix: update the item you showed; the agent was not changed."
            )
        try:
            value = float(reward)
        except (TypeError, ValueError):
            raise InvalidInput(f"CatalogueAgent.update: 'reward' must be a real number. Got {reward!r}.") from None
        if not math.isfinite(value):
            raise InvalidInput(
                f"CatalogueAgent.update: 'reward' must be finite. Got {reward!r}; the agent was not changed."
            )
        self.state, self.last_update_info = self.policy.update(self.state, None, int(item), value)
        self.num_updates += 1

    def add_arms(self, ids: Any, features: Any) -> None:
        """Items arriving: validated first (new ids, finite features of the catalogue's dimension)."""
        self.state = self.policy.add_arms(self.state, ids, features)

    def remove_arms(self, ids: Any) -> None:
        """Items leaving: validated first (held ids)."""
        self.state = self.policy.remove_arms(self.state, ids)
        if self._last in np.asarray(ids).ravel().tolist():
            self._last = None  # a removed item can no longer be credited

    # ------------------------------------------------------------------------------ files
    def save(self, path: str | os.PathLike[str]) -> None:
        """Save to the folder ``path`` (atomically: see the module docstring)."""
        folder = Path(path)
        folder.mkdir(parents=True, exist_ok=True)
        generation = secrets.token_hex(8)
        meta, arrays, indexes = self.policy.state_parts(self.state)
        for name, index in indexes.items():
            index.save(folder / f"{name}-{generation}")
        header = {
            "kind": _KIND,
            "policy": policy_description(self.policy),
            "state": meta,
            "indexes": sorted(indexes),
            "rng": self._rng.bit_generator.state,
            "num_updates": self.num_updates,
            "last": self._last,
            "seed": self.seed,
        }
        write_checkpoint(folder / f"agent-{generation}.bbck", header, arrays)
        write_checkpoint(folder / _MANIFEST, {"kind": _KIND, "generation": generation}, [])
        for old in folder.iterdir():
            if generation not in old.name and old.name != _MANIFEST:
                shutil.rmtree(old) if old.is_dir() else old.unlink()

    @classmethod
    def load(cls, path: str | os.PathLike[str], policy: Any) -> CatalogueAgent:
        """Load a folder written by :meth:`save` for ``policy`` (same class and hyper-parameters)."""
        folder = Path(path)
        manifest, _ = read_checkpoint(folder / _MANIFEST)
        generation = manifest.get("generation")
        if manifest.get("kind") != _KIND or not isinstance(generation, str) or not generation.isalnum():
            raise CheckpointError(f"{os.fspath(path)!r} holds no saved CatalogueAgent.")
        header, arrays = read_checkpoint(folder / f"agent-{generation}.bbck")
        if header.get("policy") != policy_description(policy):
            raise CheckpointError(
                f"{os.fspath(path)!r} was saved for {header.get('policy')}, not {policy_description(policy)}. "
                "Fix: pass the policy it was saved with."
            )
        engine = index_class(policy.index)
        indexes = {name: engine.load(folder / f"{name}-{generation}") for name in header["indexes"]}
        agent = cls.__new__(cls)
        agent.policy = policy
        agent.seed = int(header["seed"])
        agent.state = policy.state_from_parts(header["state"], arrays, indexes)
        agent._rng = np.random.default_rng()
        agent._rng.bit_generator.state = header["rng"]
        agent.num_updates = int(header["num_updates"])
        agent._last = header["last"]
        return agent
