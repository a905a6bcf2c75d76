"""Each check of the contract suite (:mod:`bayesbandit.testing`) fails when the property it tests is broken.

One deliberately broken policy (or library function) per check; the check must raise
``AssertionError`` on it. Without these, a check that can never fail would pass silently.
"""

import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from bayesbandit.models import logistic

import bayesbandit as bb
from bayesbandit.oracles import TopK
from bayesbandit.policies.linear.lin_ts import LinTSInfo
from bayesbandit.testing import check_policy, clear_caches
from bayesbandit.testing import comb as cc
from bayesbandit.testing import host as hc
from bayesbandit.testing import policy as pc


@bb.contract.register_policy(data_fields=["lam", "v"])
class NotJittable(bb.LinTS):
    """Branches in Python on a traced value: breaks jit."""

    def select(self, state, arms, key):
        if int(state.t) < 0:
            raise RuntimeError
        return super().select(state, arms, key)


@bb.contract.register_policy(data_fields=["lam", "v"])
class DriftingState(bb.LinTS):
    """Its round counter turns from int32 into int64 after the first update: breaks stable dtypes
    (and so compile-once: the next select sees a new type)."""

    def update(self, state, arms, action, feedback):
        state, info = super().update(state, arms, action, feedback)
        return state._replace(t=state.t.astype(jnp.int64)), info


_TRACES = itertools.count()


@bb.contract.register_policy(data_fields=["lam", "v"])
class HiddenRNG(bb.LinTS):
    """Draws from a key made when it is traced (a hidden global stream) instead of the key it is
    given: breaks same seed, same actions."""

    def select(self, state, arms, key):
        return super().select(state, arms, jax.random.PRNGKey(next(_TRACES)))


@bb.contract.register_policy(data_fields=["lam", "v"])
class Uniform(bb.LinTS):
    """Ignores what it learned: breaks learning."""

    def scores(self, chol, theta_hat, arms, key):
        scores = jax.random.uniform(key, arms.shape[:1], dtype=arms.dtype)
        return scores, LinTSInfo(jnp.asarray(True), scores, theta_hat, jnp.asarray(False))


BROKEN_POLICIES = [
    (pc.check_jit_vmap, NotJittable),
    (pc.check_compiles_once, DriftingState),
    (pc.check_dtypes_stable, DriftingState),
    (pc.check_same_key_same_actions, HiddenRNG),
    (pc.check_learns, Uniform),
]


@pytest.mark.parametrize("check, cls", BROKEN_POLICIES, ids=[c.__name__ for c, _ in BROKEN_POLICIES])
def test_check_fails_on_a_broken_policy(check, cls):
    with pytest.raises(AssertionError):
        check(cls(lam=1.0, v=0.5))


def test_check_policy_raises_on_the_first_broken_property():
    with pytest.raises(AssertionError, match="select chose two actions from one state and key"):
        check_policy(HiddenRNG(lam=1.0, v=0.5), learns=False)


def test_bad_inputs_check_fails_when_the_agent_skips_validation(monkeypatch):
    """An Agent that forgets to validate rewards lets NaN into the state."""
    monkeypatch.setattr(
        "bayesbandit.agent._agent.check_feedback", lambda value, *args, **kwargs: np.asarray(value, float)
    )
    with pytest.raises(AssertionError, match="reward nan"):
        pc.check_bad_inputs(bb.GLMTSL(logistic(), a=1.0))


def test_save_load_check_fails_when_the_checkpoint_loses_the_key(monkeypatch):
    """A checkpoint that stores a stale key: the reloaded agent chooses differently."""
    stale = np.asarray(jax.random.key_data(jax.random.PRNGKey(0)))
    monkeypatch.setattr("bayesbandit.agent._persist.key_data", lambda key: stale)
    with pytest.raises(AssertionError, match="after loading"):
        pc.check_save_load(Uniform(lam=1.0, v=0.5))


class UniformHost(bb.SubTS):
    """Plays a uniformly random live arm: breaks learning."""

    def select(self, state, arms, key):
        ids = state.index.ids
        return int(ids[key.integers(ids.size)]), None


class GlobalStreamHost(bb.SubTS):
    """Draws its exploration from fresh OS entropy, not the generator it is given: breaks same
    seed, same actions."""

    def select(self, state, arms, key):
        return super().select(state, arms, np.random.default_rng())


class UncheckedHost(bb.SubTS):
    """Adds arms to its (exact) index without validating them: a NaN feature gets in."""

    def add_arms(self, state, ids, features):
        state.index._add_unchecked(np.atleast_1d(np.asarray(ids, np.int64)), np.asarray(features, float))
        return state


class StaleIndexHost(bb.SubTS):
    """Forgets to take removed arms out of its index: a removed arm is played again."""

    def remove_arms(self, state, ids):
        return state


BROKEN_HOST_POLICIES = [
    (hc.check_host_learns, UniformHost),
    (hc.check_host_same_seed_same_actions, GlobalStreamHost),
    (hc.check_host_bad_inputs, UncheckedHost),
    (hc.check_host_catalogue_changes, StaleIndexHost),
]


@pytest.mark.parametrize("check, cls", BROKEN_HOST_POLICIES, ids=[c.__name__ for c, _ in BROKEN_HOST_POLICIES])
def test_host_check_fails_on_a_broken_policy(check, cls):
    try:
        with pytest.raises(AssertionError):
            check(cls(beta=0.5, index="exact"))
    finally:
        clear_caches()


@bb.contract.register_policy(data_fields=["lam", "alpha"])
class RepeatsAnArm(bb.C2UCB):
    """Puts its best arm in the super arm twice: breaks the super arm's shape."""

    def select(self, state, arms, key):
        action, info = super().select(state, arms, key)
        return action.at[-1].set(action[0]), info


@bb.contract.register_policy(data_fields=["lam", "alpha"])
class CombHiddenRNG(bb.PC2UCB):
    """Perturbs with a key made at trace time, not the one it is given: breaks same seed, same actions."""

    def select(self, state, arms, key):
        return super().select(state, arms, jax.random.PRNGKey(next(_TRACES)))


@bb.contract.register_policy(data_fields=["lam", "alpha"])
class RandomSuperArm(bb.C2UCB):
    """Scores every arm at random: breaks learning."""

    def scores_from(self, chol, theta_hat, arms, key, t):
        return jax.random.uniform(key, (self.blocks, arms.shape[0]), dtype=arms.dtype)


BROKEN_COMB_POLICIES = [
    (cc.check_comb_runs_compiled, RepeatsAnArm),
    (cc.check_comb_same_key_same_actions, CombHiddenRNG),
    (cc.check_comb_learns, RandomSuperArm),
]


@pytest.mark.parametrize("check, cls", BROKEN_COMB_POLICIES, ids=[c.__name__ for c, _ in BROKEN_COMB_POLICIES])
def test_comb_check_fails_on_a_broken_policy(check, cls):
    try:
        with pytest.raises(AssertionError):
            check(cls(oracle=TopK(k=3), lam=1.0, alpha=0.5))
    finally:
        clear_caches()


def test_comb_bad_inputs_check_fails_when_the_agent_skips_validation(monkeypatch):
    monkeypatch.setattr(
        "bayesbandit.agent._agent.check_feedback", lambda value, *args, **kwargs: np.asarray(value, float)
    )
    with pytest.raises(AssertionError, match="feedback"):
        cc.check_comb_bad_inputs(bb.C2UCB(oracle=TopK(k=3), lam=1.0, alpha=0.5))


def test_comb_save_load_check_fails_when_the_checkpoint_loses_the_key(monkeypatch):
    stale = np.asarray(jax.random.key_data(jax.random.PRNGKey(0)))
    monkeypatch.setattr("bayesbandit.agent._persist.key_data", lambda key: stale)
    with pytest.raises(AssertionError, match="after loading"):
        cc.check_comb_save_load(bb.PC2UCB(oracle=TopK(k=3), lam=1.0, alpha=0.5, c=1.0))


def test_every_check_has_a_breaking_example():
    covered = {check for check, _ in BROKEN_POLICIES} | {pc.check_bad_inputs, pc.check_save_load}
    assert covered == set(pc.POLICY_CHECKS)
    host = {check for check, _ in BROKEN_HOST_POLICIES} | {hc.check_host_save_load}  # the Agent's save, as above
    assert host == set(hc.HOST_CHECKS)
    comb = {check for check, _ in BROKEN_COMB_POLICIES} | {cc.check_comb_bad_inputs, cc.check_comb_save_load}
    assert comb == set(cc.COMB_CHECKS)
