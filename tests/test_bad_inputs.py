"""Bad input at the public boundaries of best-arm identification, the combinatorial policies and
oracles, the neural policies and ``diagnostics.compare``: a bayesbandit error, never another
exception and never silent acceptance, with the state (an agent's, the caller's arrays) unchanged.

Every check runs before anything is compiled, so each example only builds objects; the agents are
built once per module. One test runs ``compare`` to the end, on data that make a row degenerate.
"""

import math

import hypothesis.strategies as st
import jax
import numpy as np
import pytest
from _asserts import assert_unchanged, snapshot
from bayesbandit.diagnostics import Thresholds, compare, fit_gaussian, gaussian_kl, interval_coverage, marginal_w1
from bayesbandit.models import logistic, mlp
from hypothesis import HealthCheck, assume, given, settings

import bayesbandit as bb
from bayesbandit import bai
from bayesbandit.errors import BayesBanditError, InvalidInput
from bayesbandit.oracles import ExclusiveAssignment, TopK, exclusive_assignment

FAST = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

# ------------------------------------------------------------------------------ strategies
NON_FINITE = st.sampled_from([math.nan, math.inf, -math.inf])
NOT_NUMBERS = st.one_of(st.none(), st.booleans(), st.text(max_size=4), st.lists(st.integers(), max_size=2))
NOT_NUMBERS_OR_NONE = NOT_NUMBERS.filter(lambda v: v is not None)


def bad_positive(optional: bool = False) -> st.SearchStrategy:
    """Values refused where a finite float > 0 is expected (``None`` too unless ``optional``)."""
    return st.one_of(NON_FINITE, st.floats(max_value=0.0), NOT_NUMBERS_OR_NONE if optional else NOT_NUMBERS)


def bad_non_negative() -> st.SearchStrategy:
    """Values refused where a finite float >= 0 is expected."""
    return st.one_of(NON_FINITE, st.floats(max_value=-1e-300, allow_nan=False), NOT_NUMBERS)


def bad_int(low: int, optional: bool = False) -> st.SearchStrategy:
    """Values refused where an int >= ``low`` is expected: smaller ints, any float, non-numbers."""
    others = NOT_NUMBERS_OR_NONE if optional else NOT_NUMBERS
    return st.one_of(st.integers(max_value=low - 1), st.floats(allow_nan=True, allow_infinity=True), others)


def bad_choice(choices) -> st.SearchStrategy:
    return st.one_of(st.text(max_size=8).filter(lambda v: v not in choices), st.integers(), st.none(), st.floats())


def not_bool() -> st.SearchStrategy:
    return st.one_of(st.integers(), st.floats(), st.text(max_size=3), st.none())


def refused(call):
    """``call()`` raises a bayesbandit error: not another exception, and it does not return."""
    try:
        call()
    except BayesBanditError as exc:
        return exc
    except Exception as exc:  # noqa: BLE001
        pytest.fail(f"raised {type(exc).__name__} instead of a bayesbandit error: {exc}")
    pytest.fail("accepted a bad input silently")


def with_non_finite(base: np.ndarray, index: int, value: float) -> np.ndarray:
    out = np.array(base, dtype=float, copy=True)
    out.flat[index % out.size] = value
    return out


# ------------------------------------------------------------------------------- 1. bai
BAI_SETTINGS = [
    (bai.GSE, "allocation", bad_choice(("g-optimal", "wynn", "greedy", "uniform", "fw-literal"))),
    (bai.GSE, "eta", bad_int(2)),
    (bai.GSE, "leftover", bad_choice(("spread", "drop"))),
    (bai.GSE, "design_tol", bad_positive()),
    (bai.GSE, "solver", st.one_of(st.text(max_size=3), st.integers())),
    (bai.GSE, "model", st.one_of(st.text(max_size=3), st.integers(), st.floats())),
    (bai.SequentialHalving, "eta", bad_int(2)),
    (bai.SequentialHalving, "leftover", bad_choice(("spread", "drop"))),
    (bai.ODLinBAI, "design_tol", bad_positive()),
    (bai.Peace, "num_samples", bad_int(1)),
    (bai.Peace, "num_steps", bad_int(0)),
    (bai.Peace, "step_size", bad_positive()),
    (bai.Peace, "ridge", bad_positive()),
    (bai.Peace, "design_tol", bad_positive()),
    (bai.LinGapE, "greedy", not_bool()),
    (bai.LinGapE, "delta", st.one_of(NON_FINITE, st.floats(max_value=0.0), st.floats(min_value=1.0), NOT_NUMBERS)),
    (bai.LinGapE, "reg", bad_positive()),
    (bai.LinGapE, "noise_var", bad_positive(optional=True)),
    (bai.LinGapE, "norm_bound", bad_non_negative()),
    (bai.LinGapE, "confidence", bad_choice(("det", "simple"))),
    (bai.LinGapE, "l1_iters", bad_int(1)),
    (bai.BayesGap, "kernel", bad_choice(("linear", "exp", "matern"))),
    (bai.BayesGap, "length_scale", bad_positive()),
    (bai.BayesGap, "prior_var", bad_positive()),
    (bai.BayesGap, "noise_var", bad_positive(optional=True)),
    (bai.BayesGap, "epsilon", bad_non_negative()),
    (bai.AdaptiveInstance, "K", bad_int(3)),
    (
        bai.AdaptiveInstance,
        "omega",
        st.one_of(NON_FINITE, st.floats(min_value=3.2), st.floats(max_value=-3.2), NOT_NUMBERS),
    ),
    (bai.AdaptiveInstance, "noise_var", bad_positive()),
    (bai.StaticInstance, "K", bad_int(2)),
    (bai.StaticInstance, "gap", bad_positive()),
    (bai.SphereInstance, "K", bad_int(2)),
    (bai.SphereInstance, "d", bad_int(2)),
    (bai.SphereInstance, "noise_var", bad_positive()),
    (bai.GLMInstance, "family", bad_choice(("logistic", "probit", "poisson"))),
    (bai.GLMInstance, "d", bad_int(1)),
    (bai.GLMInstance, "theta_var", bad_positive(optional=True)),
    (bai.CornerInstance, "K", bad_int(3)),
    (bai.CornerInstance, "noise_var", bad_positive()),
]


@FAST
@given(data=st.data(), case=st.sampled_from(BAI_SETTINGS))
def test_bai_constructors_refuse_bad_settings(data, case):
    cls, field, values = case
    value = data.draw(values, label=field)
    exc = refused(lambda: cls(**{field: value}))
    assert isinstance(exc, InvalidInput) and field in str(exc)


@FAST
@given(value=st.one_of(st.none(), st.integers(), st.text(max_size=3), st.just(bb.LinUCB)))
def test_most_pulled_refuses_what_is_not_a_policy(value):
    refused(lambda: bai.MostPulled(value))


ENV = bai.AdaptiveInstance(K=4)
INSTANCE = ENV.reset(jax.random.key(0))
KEY = jax.random.key(1)
ALGORITHMS = [
    bai.GSE(),
    bai.SequentialHalving(),
    bai.ODLinBAI(),
    bai.Peace(num_steps=2, num_samples=8),
    bai.LinGapE(),
    bai.BayesGap(),
    bai.MostPulled(bb.LinUCB()),
]
BAD_BUDGETS = st.one_of(
    st.integers(max_value=ENV.K - 1),  # negative, zero, or fewer pulls than arms
    st.floats(allow_nan=True, allow_infinity=True),  # any float, even 40.0: a budget fixes shapes
    st.just(np.float64(40.0)),
    NOT_NUMBERS,
    st.lists(st.integers(4, 50), min_size=1, max_size=2),
)


@FAST
@given(algorithm=st.sampled_from(ALGORITHMS), budget=BAD_BUDGETS)
def test_identify_refuses_bad_budgets(algorithm, budget):
    exc = refused(lambda: algorithm.identify(ENV, INSTANCE, budget, KEY))
    assert "budget" in str(exc) and "Fix:" in str(exc) or "parameter of ODLinBAI" in str(exc)


def test_bayes_gap_needs_more_than_one_pull_per_arm():
    refused(lambda: bai.BayesGap().identify(ENV, INSTANCE, ENV.K, KEY))


@FAST
@given(
    algorithm=st.sampled_from(ALGORITHMS),
    which=st.sampled_from(["env", "instance", "key"]),
    value=st.one_of(st.none(), st.integers(), st.text(max_size=3), st.just(np.zeros(3))),
)
def test_identify_refuses_what_is_not_an_env_an_instance_or_a_key(algorithm, which, value):
    args = {"env": ENV, "instance": INSTANCE, "key": KEY, which: value}
    exc = refused(lambda: algorithm.identify(args["env"], args["instance"], 40, args["key"]))
    assert which in str(exc)


@FAST
@given(algorithm=st.sampled_from(ALGORITHMS), row=st.integers(0, 3), value=NON_FINITE)
def test_identify_refuses_non_finite_arms(algorithm, row, value):
    instance = INSTANCE._replace(arms=INSTANCE.arms.at[row, 0].set(value))
    refused(lambda: algorithm.identify(ENV, instance, 40, KEY))


EVALUATE_ARGUMENTS = [
    ("budget", BAD_BUDGETS),
    ("replications", bad_int(2)),
    ("batch_size", bad_int(1)),
    ("seed", st.one_of(bad_int(0), st.integers(min_value=2**32))),
    ("progress", not_bool()),
]


@FAST
@given(data=st.data(), case=st.sampled_from(EVALUATE_ARGUMENTS))
def test_evaluate_refuses_bad_arguments(data, case):
    name, values = case
    kwargs = {"budget": 40, "replications": 4, name: data.draw(values, label=name)}
    exc = refused(lambda: bai.replicate({"GSE": ALGORITHMS[0]}, ENV, **kwargs))
    assert name in str(exc)


@pytest.mark.parametrize(
    "algorithms", [{}, [bai.GSE()], {"GSE": bai.GSE}, {"GSE": 5}, None], ids=["empty", "list", "class", "int", "none"]
)
def test_evaluate_refuses_what_is_not_a_mapping_of_algorithms(algorithms):
    refused(lambda: bai.replicate(algorithms, ENV, 40, replications=4))


def test_evaluate_refuses_what_is_not_an_environment():
    refused(lambda: bai.replicate({"GSE": bai.GSE()}, object(), 40, replications=4))


# ----------------------------------------------------------------- 2. comb policies, oracles
RIDGE = [bb.C2UCB, bb.PC2UCB, bb.RoundTS, bb.ArmTS, bb.CombGreedy]
KALMAN = [bb.CombLinUCB, bb.CombLinTS]
COMB_SETTINGS = (
    [(cls, "lam", bad_positive()) for cls in RIDGE]
    + [(cls, "blocks", bad_int(1)) for cls in RIDGE + KALMAN]
    + [(cls, name, bad_positive()) for cls in KALMAN for name in ("prior_var", "noise_var")]
    + [
        (bb.C2UCB, "alpha", bad_non_negative()),
        (bb.PC2UCB, "alpha", bad_non_negative()),
        (bb.PC2UCB, "c", bad_non_negative()),
        (bb.RoundTS, "v", bad_non_negative()),
        (bb.ArmTS, "v", bad_non_negative()),
        (bb.ArmTS, "literal", not_bool()),
        (bb.CombLinUCB, "c", bad_non_negative()),
    ]
)


@FAST
@given(data=st.data(), case=st.sampled_from(COMB_SETTINGS))
def test_comb_policies_refuse_bad_settings(data, case):
    cls, field, values = case
    value = data.draw(values, label=field)
    exc = refused(lambda: cls(oracle=TopK(k=2), **{field: value}))
    assert field in str(exc)


@FAST
@given(
    cls=st.sampled_from(RIDGE + KALMAN),
    oracle=st.one_of(st.none(), st.integers(), st.text(max_size=3), st.sampled_from([TopK, ExclusiveAssignment])),
)
def test_comb_policies_refuse_what_is_not_an_oracle(cls, oracle):
    exc = refused(lambda: cls(oracle=oracle))
    assert "oracle" in str(exc) and "Fix:" in str(exc)


ORACLE_SETTINGS = [
    ("k", bad_int(1)),
    ("tie_break", bad_choice(("index", "random"))),
    ("tol", bad_non_negative()),
]


@FAST
@given(data=st.data(), cls=st.sampled_from([TopK, ExclusiveAssignment]), case=st.sampled_from(ORACLE_SETTINGS))
def test_oracles_refuse_bad_settings(data, cls, case):
    field, values = case
    kwargs = {"k": 2, field: data.draw(values, label=field)}
    exc = refused(lambda: cls(**kwargs))
    assert field in str(exc)


@FAST
@given(cls=st.sampled_from([TopK, ExclusiveAssignment]), shape=st.sampled_from([(5,), (1, 2, 5), (0, 5), (2, 0), ()]))
def test_oracles_refuse_scores_that_are_not_a_matrix(cls, shape):
    exc = refused(lambda: cls(k=1)(np.ones(shape), jax.random.PRNGKey(0)))
    assert "shape (M, N)" in str(exc)


@FAST
@given(
    index=st.integers(0, 5), value=NON_FINITE, order=st.sampled_from([[0, 0, 1], [0, 1], [0, 1, 3], [2.0, 1.0, 0.0]])
)
def test_exclusive_assignment_refuses_non_finite_scores_and_orders_that_are_not_permutations(index, value, order):
    scores = np.arange(6.0).reshape(2, 3)
    refused(lambda: exclusive_assignment(with_non_finite(scores, index, value), 1))
    refused(lambda: exclusive_assignment(scores, 1, order=np.asarray(order)))


ARMS = np.random.default_rng(0).normal(size=(5, 3))
COMB_AGENTS: dict = {}


def comb_agent(cls):
    if cls not in COMB_AGENTS:
        COMB_AGENTS[cls] = bb.Agent(cls(oracle=TopK(k=2)), d=3, compile_ahead=False)
    return COMB_AGENTS[cls]


def rejects(agent, call):
    """``call(agent)`` raises a bayesbandit error and leaves the state and the draw count as they were."""
    before, draws, updates = snapshot(agent.state), agent.num_decisions, agent.num_updates
    exc = refused(lambda: call(agent))
    assert_unchanged(before, agent.state)
    assert agent.num_decisions == draws and agent.num_updates == updates
    return exc


BAD_ARM_SETS = st.one_of(
    st.builds(with_non_finite, st.just(ARMS), st.integers(0, ARMS.size - 1), NON_FINITE),
    st.sampled_from([np.ones((5, 4)), np.ones(3), np.ones((2, 5, 3)), np.ones((0, 3)), np.ones((1, 3))]),
    st.sampled_from(["arms", None, [[1.0, "a", 2.0]]]),
)


@FAST
@given(cls=st.sampled_from(RIDGE + KALMAN), arms=BAD_ARM_SETS)
def test_comb_agents_refuse_bad_arm_sets(cls, arms):
    agent = comb_agent(cls)
    if arms is None:  # a contextual agent without arms
        rejects(agent, lambda a: a.select())
    else:
        rejects(agent, lambda a: a.select(arms))
        rejects(agent, lambda a: a.update(np.array([0, 1]), [1.0, 1.0], arms=arms))


BAD_SUPER_ARMS = st.one_of(
    st.integers(),  # a single index where k = 2 are expected
    st.lists(st.integers(0, 4), min_size=2, max_size=2).filter(lambda a: a[0] == a[1]),  # a repeat
    st.lists(st.integers(), min_size=2, max_size=2).filter(lambda a: min(a) < 0 or max(a) >= 5),  # out of range
    st.lists(st.integers(0, 4), min_size=3, max_size=4, unique=True),  # the wrong size
    st.lists(st.floats(0.1, 3.9).filter(lambda v: v != int(v)), min_size=2, max_size=2, unique=True),
).map(np.asarray)
BAD_SEMI_FEEDBACK = st.one_of(
    st.floats(allow_nan=False),  # a scalar where one reward per chosen arm is expected
    st.lists(st.floats(-1, 1), min_size=3, max_size=3),
    st.builds(lambda i, v: with_non_finite(np.ones(2), i, v), st.integers(0, 1), NON_FINITE),
    st.just("good"),
)


@FAST
@given(cls=st.sampled_from(RIDGE + KALMAN), action=BAD_SUPER_ARMS)
def test_comb_agents_refuse_bad_super_arms(cls, action):
    exc = rejects(comb_agent(cls), lambda a: a.update(action, [1.0, 1.0], arms=ARMS))
    assert "action" in str(exc)


@FAST
@given(cls=st.sampled_from(RIDGE + KALMAN), feedback=BAD_SEMI_FEEDBACK)
def test_comb_agents_refuse_bad_semi_bandit_feedback(cls, feedback):
    exc = rejects(comb_agent(cls), lambda a: a.update(np.array([0, 1]), feedback, arms=ARMS))
    assert "reward" in str(exc)


@FAST
@given(cls=st.sampled_from(RIDGE + KALMAN), k=st.integers(3, 8), blocks=st.integers(1, 3))
def test_comb_policies_refuse_arm_sets_too_small_for_the_oracle(cls, k, blocks):
    policy = cls(oracle=ExclusiveAssignment(k=k), blocks=blocks)
    refused(lambda: policy.init(np.ones((k * blocks - 1, 2)) + np.arange(k * blocks - 1)[:, None]))
    refused(lambda: bb.Agent(policy, arms=ARMS[: min(k * blocks - 1, 5)], compile_ahead=False))


# --------------------------------------------------------------------------- 3. neural
NET = mlp(hidden=4)
OPTIMIZERS = ("adam", "adamw", "amsgrad", "yogi", "sgd", "rmsprop", "adagrad")
NEURAL = [bb.DeepFPL, bb.DeepFL, bb.RepGLMFPL, bb.LastLayerLaplaceTS]
NEURAL_LINEAR = [bb.RepGLMFPL, bb.LastLayerLaplaceTS]
NEURAL_SETTINGS = (
    [(cls, "learning_rate", bad_positive()) for cls in NEURAL]
    + [(cls, "optimizer", bad_choice(OPTIMIZERS)) for cls in NEURAL]
    + [(cls, "batch", bad_int(1)) for cls in NEURAL]
    + [(cls, "dtype", st.one_of(bad_choice(("float32", "float64")), st.just(np.float32))) for cls in NEURAL]
    + [(cls, "obs_site", st.one_of(st.just(""), st.integers(), st.none())) for cls in NEURAL]
    + [(cls, "explore_rounds", bad_int(0)) for cls in NEURAL_LINEAR]
    + [(cls, "head_model", st.one_of(st.integers(), st.text(max_size=3))) for cls in NEURAL_LINEAR]
    + [(cls, "embedding_site", st.one_of(st.just(""), st.integers(), st.none())) for cls in NEURAL_LINEAR]
    + [(cls, "a", bad_non_negative()) for cls in (bb.DeepFPL, bb.RepGLMFPL, bb.LastLayerLaplaceTS)]
    + [
        (bb.DeepFL, "a", st.one_of(st.floats(min_value=1e-9), bad_non_negative())),
        (bb.DeepFPL, "num_explore", bad_int(0, optional=True)),
    ]
)


@FAST
@given(data=st.data(), case=st.sampled_from(NEURAL_SETTINGS))
def test_neural_policies_refuse_bad_settings(data, case):
    cls, field, values = case
    value = data.draw(values, label=field)
    exc = refused(lambda: cls(NET, **{field: value}))
    assert field in str(exc)


@FAST
@given(cls=st.sampled_from(NEURAL), model=st.one_of(st.none(), st.integers(), st.text(max_size=3), st.floats()))
def test_neural_policies_refuse_what_is_not_a_program(cls, model):
    exc = refused(lambda: cls(model))
    assert "model" in str(exc) and "Fix:" in str(exc)


@FAST
@given(hidden=st.one_of(bad_int(1), st.lists(st.integers(-2, 50), max_size=3), st.tuples(st.integers(1, 50))))
def test_mlp_refuses_bad_hidden_layer_sizes(hidden):
    exc = refused(lambda: mlp(hidden=hidden))
    assert "hidden" in str(exc)


@FAST
@given(cls=st.sampled_from(NEURAL), d=bad_int(1, optional=True))
def test_neural_init_refuses_bad_dimensions(cls, d):
    policy = cls(NET, explore_rounds=3) if cls in NEURAL_LINEAR else cls(NET)
    refused(lambda: policy.init(d=d, key=jax.random.PRNGKey(0)))


NEURAL_AGENTS: dict = {}


def neural_agent(cls):
    if cls not in NEURAL_AGENTS:
        policy = cls(NET, explore_rounds=3) if cls in NEURAL_LINEAR else cls(NET)
        NEURAL_AGENTS[cls] = bb.Agent(policy, d=3, compile_ahead=False)
    return NEURAL_AGENTS[cls]


@FAST
@given(
    cls=st.sampled_from(NEURAL),
    arms=BAD_ARM_SETS.filter(lambda a: not (isinstance(a, np.ndarray) and a.shape == (1, 3))),
)
def test_neural_agents_refuse_bad_arm_sets(cls, arms):
    agent = neural_agent(cls)
    if arms is None:
        rejects(agent, lambda a: a.select())
    else:
        rejects(agent, lambda a: a.select(arms))
        rejects(agent, lambda a: a.update(0, 1.0, arms=arms))


BAD_ACTIONS = st.one_of(
    st.integers().filter(lambda i: not 0 <= i < 5),
    st.floats().filter(lambda v: v != int(v) if math.isfinite(v) else True),
    st.lists(st.integers(0, 4), min_size=1, max_size=3).map(np.asarray),
    st.text(max_size=3).filter(lambda s: s != ""),
)
BAD_BERNOULLI_REWARDS = st.one_of(
    NON_FINITE,
    st.floats(allow_nan=False, allow_infinity=False).filter(lambda v: v not in (0.0, 1.0)),
    st.lists(st.sampled_from([0.0, 1.0]), min_size=2, max_size=3),
    st.just("good"),
)


@FAST
@given(cls=st.sampled_from(NEURAL), action=BAD_ACTIONS)
def test_neural_agents_refuse_bad_actions(cls, action):
    rejects(neural_agent(cls), lambda a: a.update(action, 1.0, arms=ARMS))


@FAST
@given(cls=st.sampled_from(NEURAL), reward=BAD_BERNOULLI_REWARDS)
def test_neural_agents_refuse_bad_rewards(cls, reward):
    exc = rejects(neural_agent(cls), lambda a: a.update(1, reward, arms=ARMS))
    assert "reward" in str(exc)


# ------------------------------------------------------------------------- 4. diagnostics
RNG = np.random.default_rng(0)
X = RNG.normal(size=(12, 2))
Y = (RNG.random(12) < 0.5).astype(float)
W = np.ones(12)


def compare_rejects(x, y, w=None, **kwargs):
    """``compare`` refuses, and leaves the caller's arrays as they were."""
    copies = [None if a is None else np.array(a, copy=True) for a in (x, y, w)]
    exc = refused(lambda: compare(logistic(), x, y, w, **kwargs))
    for given_, copy in zip((x, y, w), copies, strict=True):
        if copy is not None:
            np.testing.assert_array_equal(np.asarray(given_), copy)
    return exc


@FAST
@given(which=st.sampled_from(["x", "y", "w"]), index=st.integers(0, 23), value=NON_FINITE)
def test_compare_refuses_non_finite_data(which, index, value):
    data = {"x": X, "y": Y, "w": W}
    data[which] = with_non_finite(data[which], index, value)
    exc = compare_rejects(data["x"], data["y"], data["w"])
    assert f"'{which}' must be finite" in str(exc) and "rows" in str(exc)


@FAST
@given(
    which=st.sampled_from(["x", "y", "w"]),
    shape=st.lists(st.integers(0, 13), min_size=0, max_size=3).map(tuple),
)
def test_compare_refuses_data_of_the_wrong_shape(which, shape):
    valid = shape == (12,) if which != "x" else len(shape) >= 2 and shape[0] == 12 and 0 not in shape
    assume(not valid)
    data = {"x": X, "y": Y, "w": W, which: np.zeros(shape)}
    compare_rejects(data["x"], data["y"], data["w"])


@FAST
@given(
    rows=st.lists(st.integers(0, 11), min_size=1, max_size=12, unique=True),
    value=st.floats(max_value=-1e-9, allow_infinity=False),
)
def test_compare_refuses_negative_weights(rows, value):
    w = W.copy()
    w[rows] = value
    exc = compare_rejects(X, Y, w)
    assert "non-negative" in str(exc)
    assert ("all 12 rows" if len(rows) == 12 else f"rows [{min(rows)}") in str(exc)


COMPARE_SETTINGS = [
    ("num_draws", bad_int(2)),
    ("num_chains", bad_int(1)),
    ("num_warmup", bad_int(0)),
    ("fpl_a", bad_non_negative()),
    ("seed", st.one_of(bad_int(0), st.integers(min_value=2**32))),
    ("chain_method", bad_choice(("sequential", "vectorized", "parallel"))),
    (
        "methods",
        st.one_of(
            st.text(max_size=5),
            st.integers(),
            st.lists(st.sampled_from(["laplace", "nuts", "mcmc"]), max_size=3).filter(
                lambda m: "mcmc" in m or len(set(m)) != len(m) or not m
            ),
        ),
    ),
    ("thresholds", st.one_of(st.text(max_size=3), st.integers(), st.floats())),
]


@FAST
@given(data=st.data(), case=st.sampled_from(COMPARE_SETTINGS))
def test_compare_refuses_bad_settings(data, case):
    name, values = case
    exc = compare_rejects(X, Y, W, **{name: data.draw(values, label=name)})
    assert name in str(exc)


THRESHOLDS = [
    ("kl_max", bad_non_negative()),
    ("coverage_tol", st.one_of(bad_non_negative(), st.floats(min_value=0.91))),
    ("rhat_max", st.one_of(NON_FINITE, st.floats(max_value=0.999), NOT_NUMBERS)),
    ("ess_per_chain", bad_non_negative()),
    ("max_divergences", bad_int(0)),
]


@FAST
@given(data=st.data(), case=st.sampled_from(THRESHOLDS))
def test_thresholds_refuse_bad_values(data, case):
    name, values = case
    exc = refused(lambda: Thresholds(**{name: data.draw(values, label=name)}))
    assert name in str(exc)


DRAWS = RNG.normal(size=(50, 2))


@FAST
@given(
    index=st.integers(0, 99),
    value=NON_FINITE,
    prob=st.one_of(NON_FINITE, st.floats(max_value=0.0), st.floats(min_value=1.0)),
)
def test_metrics_refuse_bad_draws_and_probabilities(index, value, prob):
    bad = with_non_finite(DRAWS, index, value)
    refused(lambda: fit_gaussian(bad))
    refused(lambda: fit_gaussian(DRAWS[:1]))
    refused(lambda: marginal_w1(bad, DRAWS))
    refused(lambda: marginal_w1(DRAWS, DRAWS[:, :1]))
    refused(lambda: interval_coverage(DRAWS, bad))
    refused(lambda: interval_coverage(DRAWS, DRAWS, prob=prob))
    refused(lambda: gaussian_kl(bad[index // 2], np.eye(2), np.zeros(2), np.eye(2)))
    refused(lambda: gaussian_kl(np.zeros(2), np.eye(2), np.zeros(3), np.eye(3)))


@FAST
@given(zero_weight=st.lists(st.booleans(), min_size=12, max_size=12))
def test_compare_refuses_data_that_inform_no_parameter_and_names_the_rows(zero_weight):
    """Every row has zero weight or all-zero features: the perturbed-MAP ensemble could not spread at all."""
    zero_weight = np.asarray(zero_weight)
    x = np.where(zero_weight[:, None], X, 0.0)
    w = np.where(zero_weight, 0.0, 1.0)
    exc = compare_rejects(x, Y, w)
    message = str(exc)
    assert "no row informs the parameters" in message and "Fix:" in message
    if zero_weight.all():
        assert "all 12 rows have zero weight" in message
    elif not zero_weight.any():
        assert "all 12 rows have all-zero features" in message
    else:
        assert f"rows [{np.flatnonzero(zero_weight)[0]}" in message and "have zero weight" in message
        assert f"rows [{np.flatnonzero(~zero_weight)[0]}" in message and "have all-zero features" in message


def test_compare_marks_a_degenerate_row_and_names_the_data_behind_it():
    """A feature that is zero in every weighted row: GLM-FPL with the paper's noise (the prior as
    written) does not spread along its parameter, so its KL is infinite; the row is marked
    degenerate and a flag names the rows and the column. No other entry of the table is
    non-finite. The default noise anchors the prior at a prior draw, so it spreads there as the
    prior does."""
    rng = np.random.default_rng(1)
    x = np.c_[rng.normal(size=(30, 1)), np.zeros(30)]
    x[4] = 0.0
    y = (rng.random(30) < 0.5).astype(float)
    w = np.ones(30)
    w[[2, 9]] = 0.0
    settings = dict(num_draws=100, num_warmup=100, num_chains=2)
    c = compare(logistic(), x, y, w, fpl_noise="paper", fpl_a=0.5, **settings)
    assert bool(c.table.loc["fpl", "degenerate"]) and not bool(c.table.loc["laplace", "degenerate"])
    assert not bool(compare(logistic(), x, y, w, methods=("fpl", "nuts"), **settings).table.loc["fpl", "degenerate"])
    assert c.table.loc["fpl", "kl"] == math.inf and bool(c.table.loc["fpl", "poor"])
    numbers = c.table.drop(columns=["poor", "degenerate"]).to_numpy(dtype=float)
    assert np.all(np.isfinite(numbers[~c.table["degenerate"].to_numpy(dtype=bool)]))
    [flag] = [f for f in c.flags if f.startswith("fpl: degenerate")]
    assert "theta[1]" in flag and "rows [2, 9]" in flag and "rows [4]" in flag and "feature columns [1]" in flag
    assert "Fix:" in flag
