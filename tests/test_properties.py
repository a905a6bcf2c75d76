"""Property-based: whatever a user throws at an agent, nothing silent and nothing foreign escapes.

Hypothesis generates calls to ``Agent.select`` and ``Agent.update`` (and to the inference
functions) with good, extreme and malformed inputs: rewards inside and outside the support,
NaN, inf, 1e300 and 1e-300, wrong shapes, strings, out-of-range and non-integer actions, arm sets
empty, of the wrong dimension, other than the agent's, or scaled far out of range. For every
call, one of two things must hold:

* it raises a ``bayesbandit.errors`` exception, and the agent's state and key are unchanged bit
  for bit; or
* it is absorbed, and every float in the state is finite.

No other exception may escape. The pool of agents covers every policy, the zoo models and user
programs (a constrained noise scale, a Student-t reward: non-affine), fixed and contextual arms.

CI runs ``BAYESBANDIT_PROPERTY_CASES`` cases (default 1,000); the full profile (10,000 and more)
runs outside CI: ``BAYESBANDIT_PROPERTY_CASES=12000 BAYESBANDIT_PROPERTY_REPORT=path python -m
pytest tests/test_properties.py`` writes the counts to ``path``.
"""

import json
import math
import os
from collections import Counter

import hypothesis.strategies as st
import numpy as np
import numpyro
import numpyro.distributions as dist
import pytest
from _asserts import all_finite, snapshot
from bayesbandit.models import linear_gaussian, logistic, poisson, probit
from hypothesis import HealthCheck, given, settings

import bayesbandit as bb
from bayesbandit.errors import BayesBanditError

CASES = int(os.environ.get("BAYESBANDIT_PROPERTY_CASES", "1000"))
D = 3
K = 5
ARMS = np.random.default_rng(0).uniform(-1, 1, (K, D))


def noise_model(x, y=None):
    theta = numpyro.sample("theta", dist.Normal(0.0, 1.0).expand([x.shape[-1]]).to_event(1))
    sigma = numpyro.sample("sigma", dist.HalfNormal(1.0))
    with numpyro.plate("data", x.shape[0]):
        numpyro.sample("y", dist.Normal(x @ theta, sigma), obs=y)


def student_t_model(x, y=None):
    theta = numpyro.sample("theta", dist.Normal(0.0, 1.0).expand([x.shape[-1]]).to_event(1))
    with numpyro.plate("data", x.shape[0]):
        numpyro.sample("y", dist.StudentT(4.0, x @ theta, 0.5), obs=y)


# name -> (policy factory, contextual?, a valid reward strategy)
BERNOULLI = st.sampled_from([0.0, 1.0])
COUNT = st.integers(0, 20).map(float)
REAL = st.floats(-5, 5)
POOL = {
    "glm_tsl_logistic": (lambda: bb.GLMTSL(logistic(), a=1.0), False, BERNOULLI),
    "glm_fpl_poisson": (lambda: bb.GLMFPL(poisson(), a=0.5), False, COUNT),
    "glm_ucb_probit_contextual": (lambda: bb.GLMUCB(probit(), rho=0.5), True, BERNOULLI),
    "ucb_glm_gaussian": (lambda: bb.UCBGLM(linear_gaussian(), alpha=0.5), False, REAL),
    "eps_greedy_noise_model": (lambda: bb.EpsilonGreedy(noise_model, epsilon=0.1), False, REAL),
    "glm_tsl_student_t_contextual": (lambda: bb.GLMTSL(student_t_model, a=1.0), True, REAL),
    "glm_tsl_online_contextual": (lambda: bb.GLMTSL(logistic(), a=1.0, history="online"), True, BERNOULLI),
    "lin_ts": (lambda: bb.LinTS(v=0.5), False, REAL),
    "lin_ucb_contextual": (lambda: bb.LinUCB(alpha=1.0), True, REAL),
}


@pytest.fixture(scope="module")
def agents():
    out = {}
    for name, (make, contextual, _) in POOL.items():
        kwargs = dict(d=D, capacity=4096) if contextual else dict(arms=ARMS)
        out[name] = bb.Agent(make(), seed=0, **kwargs)
    return out


EXTREME = st.sampled_from([math.nan, math.inf, -math.inf, 1e300, -1e300, 1e-300, 1e13, -1e13, 1e11, -1e11, 0.0, -0.0])
GARBAGE = st.sampled_from(["1", None, [0.0, 1.0], [[1.0]], {"a": 1}, np.zeros(2), np.zeros((1, 1)), b"x"])
REWARDS = st.one_of(st.floats(allow_nan=True, allow_infinity=True), EXTREME, GARBAGE, st.integers(-(2**70), 2**70))
ACTIONS = st.one_of(
    st.integers(-3, K + 3),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    GARBAGE,
    st.just(np.int64(1)),
    st.just(np.array([0, 1])),
)


def _arms(data):
    kind = data.draw(st.sampled_from(["good", "scaled", "extreme_entry", "shape", "empty", "garbage"]))
    if kind == "good":
        return np.random.default_rng(data.draw(st.integers(0, 10**6))).uniform(-1, 1, (data.draw(st.integers(1, 6)), D))
    if kind == "scaled":
        return ARMS[:4] * data.draw(st.sampled_from([1e-300, 1e3, 1e11, 1e13, 1e300]))
    if kind == "extreme_entry":
        arms = ARMS[:4].copy()
        arms[data.draw(st.integers(0, 3)), data.draw(st.integers(0, D - 1))] = data.draw(EXTREME)
        return arms
    if kind == "shape":
        return np.zeros(data.draw(st.sampled_from([(D,), (2, D + 1), (2, D, 1), ()])))
    if kind == "empty":
        return np.zeros((0, D))
    return data.draw(GARBAGE)


def _leaves(agent):
    return snapshot(agent.state) + [np.array(agent.num_decisions)]


def _call(agent, fn, label):
    """Run one generated call and check the property; returns the outcome's kind."""
    before = _leaves(agent)
    try:
        fn()
    except BayesBanditError:
        after = _leaves(agent)
        assert len(before) == len(after) and all(
            np.array_equal(x, y, equal_nan=True) for x, y in zip(before, after, strict=True)
        ), f"{label}: raised, but changed the state"
        return "refused"
    except Exception as exc:  # anything else escaping is a failure of the property
        raise AssertionError(f"{label}: {type(exc).__name__} escaped: {exc}") from exc
    assert all_finite(agent.state), f"{label}: absorbed, but left a non-finite state"
    return "absorbed"


SETTINGS = settings(
    max_examples=max(1, CASES // len(POOL)),
    deadline=None,
    derandomize=True,
    suppress_health_check=list(HealthCheck),
)


def _record(outcomes: Counter, examples: int) -> None:
    """Check that Hypothesis ran the cases it was asked for, and add them to the report file if one is named."""
    assert examples >= 0.9 * SETTINGS.max_examples, f"only {examples} cases ran, {SETTINGS.max_examples} asked"
    report = os.environ.get("BAYESBANDIT_PROPERTY_REPORT")
    if report:  # the module's tests run one after another in one process (--dist loadfile)
        totals: Counter = Counter()
        if os.path.exists(report):
            with open(report) as f:
                totals.update(json.load(f))
        totals.update({"cases": examples, **outcomes})
        with open(report, "w") as f:
            json.dump(totals, f, indent=1)
    print(f"\nproperty cases: {examples} ({dict(outcomes)})")


@pytest.mark.parametrize("name", list(POOL))
def test_agent_calls_are_refused_cleanly_or_absorbed_finitely(agents, name):
    _, contextual, good_reward = POOL[name]
    agent = agents[name]
    outcomes: Counter = Counter()
    examples = 0

    @SETTINGS
    @given(data=st.data())
    def call(data):
        nonlocal examples
        examples += 1
        op = data.draw(st.sampled_from(["select", "select_then_update", "update"]))
        if op != "update":
            arms = _arms(data) if (contextual or data.draw(st.booleans())) else None
            select = (lambda: agent.select(arms)) if arms is not None else agent.select
            outcomes[_call(agent, select, f"{name} select")] += 1
        if op != "select":
            action = data.draw(st.one_of(st.integers(0, K - 1), ACTIONS))
            reward = data.draw(st.one_of(good_reward, REWARDS))
            outcomes[_call(agent, lambda: agent.update(action, reward), f"{name} update({action!r}, {reward!r})")] += 1

    call()
    _record(outcomes, examples)


def test_inference_functions_refuse_bad_data_with_a_library_error():
    outcomes: Counter = Counter()
    examples = 0

    @SETTINGS
    @given(
        x=st.sampled_from(["good", "nan", "shape", "empty"]),
        y=st.one_of(st.floats(allow_nan=True, allow_infinity=True), EXTREME),
        w=st.sampled_from([None, "negative", "nan", "shape"]),
    )
    def call(x, y, w):
        nonlocal examples
        examples += 1
        xs = {"good": ARMS, "nan": np.where(ARMS > 0.9, np.nan, ARMS), "shape": ARMS[0], "empty": np.zeros((0, D))}[x]
        ys = np.full(xs.shape[:1] if np.ndim(xs) == 2 else (K,), y)
        ws = {None: None, "negative": -np.ones(len(ys)), "nan": np.full(len(ys), np.nan), "shape": np.ones(len(ys) + 1)}
        try:
            fit = bb.map_estimate(logistic(), xs, ys, ws[w])
        except BayesBanditError:
            outcomes["refused"] += 1
            return
        except Exception as exc:
            raise AssertionError(f"map_estimate: {type(exc).__name__} escaped: {exc}") from exc
        outcomes["absorbed"] += 1
        assert np.all(np.isfinite(np.asarray(fit.theta))), (x, y, w)

    call()
    _record(outcomes, examples)
