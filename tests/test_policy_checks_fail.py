"""Each check of the contract suite fails when the property it tests is broken.

One deliberately broken policy (or library function) per check; the check must raise
``AssertionError`` on it. Without these, a check that can never fail would pass silently.
"""

import itertools

import jax
import jax.numpy as jnp
import numpy as np
import policy_checks as pc
import pytest

import bayesbandit as bb
from bayesbandit.policies.linear.lin_ts import LinTSInfo


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


def _case(cls):
    return pc.Case(f"broken_{cls.__name__}", lambda: cls(lam=1.0, v=0.5))


BROKEN_POLICIES = [
    (pc.check_jit_vmap, NotJittable),
    (pc.check_compiles_once, DriftingState),
    (pc.check_dtypes_stable, DriftingState),
    (pc.check_same_key_same_actions, HiddenRNG),
    (pc.check_learns, Uniform),
]


@pytest.mark.parametrize("check, cls", BROKEN_POLICIES, ids=[c.__name__ for c, _ in BROKEN_POLICIES])
def test_check_fails_on_a_broken_policy(check, cls, tmp_path):
    with pytest.raises(AssertionError):
        pc.run_check(check, _case(cls), tmp_path)


def test_bad_inputs_check_fails_when_the_agent_skips_validation(monkeypatch, tmp_path):
    """An Agent that forgets to validate rewards lets NaN into the state."""
    monkeypatch.setattr(
        "bayesbandit.agent._agent.check_feedback", lambda value, *args, **kwargs: np.asarray(value, float)
    )
    with pytest.raises(AssertionError, match="reward nan"):
        pc.run_check(pc.check_bad_inputs, pc.CASES[0], tmp_path)


def test_save_load_check_fails_when_the_checkpoint_loses_the_key(monkeypatch, tmp_path):
    """A checkpoint that stores a stale key: the reloaded agent chooses differently."""
    stale = np.asarray(jax.random.key_data(jax.random.PRNGKey(0)))
    monkeypatch.setattr("bayesbandit.agent._agent.key_data", lambda key: stale)
    with pytest.raises(AssertionError, match="after loading"):
        pc.run_check(pc.check_save_load, _case(Uniform), tmp_path)


class UniformHost(bb.SubTS):
    """Plays a uniformly random live arm: breaks learning."""

    def select(self, state, arms, key):
        ids = state.store.ids
        return int(ids[key.integers(ids.size)]), None


class GlobalStreamHost(bb.SubTS):
    """Draws its exploration from fresh OS entropy, not the generator it is given: breaks same
    seed, same actions."""

    def select(self, state, arms, key):
        return super().select(state, arms, np.random.default_rng())


class UncheckedHost(bb.SubTS):
    """Adds arms without validating them: a NaN feature gets in."""

    def add_arms(self, state, ids, features):
        state.index.add(np.asarray(ids), np.nan_to_num(np.asarray(features, float)))
        state.store.add_unchecked(np.asarray(ids, np.int64), np.asarray(features, float))
        return state


class StaleIndexHost(bb.SubTS):
    """Forgets to take removed arms out of its index and store: a removed arm is played again."""

    def remove_arms(self, state, ids):
        return state


BROKEN_HOST_POLICIES = [
    (pc.check_host_learns, UniformHost),
    (pc.check_host_same_seed_same_actions, GlobalStreamHost),
    (pc.check_host_bad_inputs, UncheckedHost),
    (pc.check_host_catalogue_changes, StaleIndexHost),
]


@pytest.mark.parametrize("check, cls", BROKEN_HOST_POLICIES, ids=[c.__name__ for c, _ in BROKEN_HOST_POLICIES])
def test_host_check_fails_on_a_broken_policy(check, cls):
    case = pc.Case(f"broken_{cls.__name__}", lambda: cls(beta=0.5, index="exact"))
    try:
        with pytest.raises(AssertionError):
            check(case)
    finally:
        pc.clear_caches()


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


def _comb_case(cls):
    return pc.Case(f"broken_{cls.__name__}", lambda: cls(oracle=pc.TopK(pc.COMB_K), lam=1.0, alpha=0.5))


BROKEN_COMB_POLICIES = [
    (pc.check_comb_runs_compiled, RepeatsAnArm),
    (pc.check_comb_same_key_same_actions, CombHiddenRNG),
    (pc.check_comb_learns, RandomSuperArm),
]


@pytest.mark.parametrize("check, cls", BROKEN_COMB_POLICIES, ids=[c.__name__ for c, _ in BROKEN_COMB_POLICIES])
def test_comb_check_fails_on_a_broken_policy(check, cls, tmp_path):
    try:
        with pytest.raises(AssertionError):
            pc.run_check(check, _comb_case(cls), tmp_path)
    finally:
        pc.clear_caches()


def test_comb_bad_inputs_check_fails_when_the_agent_skips_validation(monkeypatch, tmp_path):
    monkeypatch.setattr(
        "bayesbandit.agent._agent.check_feedback", lambda value, *args, **kwargs: np.asarray(value, float)
    )
    with pytest.raises(AssertionError, match="feedback"):
        pc.run_check(pc.check_comb_bad_inputs, pc.COMB_CASES[0], tmp_path)


def test_comb_save_load_check_fails_when_the_checkpoint_loses_the_key(monkeypatch, tmp_path):
    stale = np.asarray(jax.random.key_data(jax.random.PRNGKey(0)))
    monkeypatch.setattr("bayesbandit.agent._agent.key_data", lambda key: stale)
    with pytest.raises(AssertionError, match="after loading"):
        pc.run_check(pc.check_comb_save_load, pc.COMB_CASES[1], tmp_path)


def test_every_check_has_a_breaking_example():
    covered = {check for check, _ in BROKEN_POLICIES} | {pc.check_bad_inputs, pc.check_save_load}
    assert covered == set(pc.CHECKS)
    assert {check for check, _ in BROKEN_HOST_POLICIES} == set(pc.HOST_CHECKS)
    comb = {check for check, _ in BROKEN_COMB_POLICIES} | {pc.check_comb_bad_inputs, pc.check_comb_save_load}
    assert comb == set(pc.COMB_CHECKS)
