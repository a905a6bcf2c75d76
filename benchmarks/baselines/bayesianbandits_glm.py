"""The ``bayesianbandits`` package (PyPI) on the fixed-arm logistic bandit.

Its Laplace/GLM Thompson-sampling agent for a shared parameter over featurised arms is
``LipschitzContextualAgent`` with one shared ``BayesianGLM(alpha=1.0, link="logit")`` learner
(default ``LaplaceApproximator``: up to 5 IRLS steps per ``partial_fit``), a
``FunctionArmFeaturizer`` that maps an arm token to its feature vector, and ``ThompsonSampling()``.
``alpha=1.0`` is the prior precision, i.e. the same ``N(0, I)`` prior as bayesbandit's logistic model.

Note the algorithmic difference: ``BayesianGLM.partial_fit`` is *online* (recursive) Laplace,
the previous Gaussian posterior is the prior of the new observation, while bayesbandit and the
NumPy baselines refit the MAP on the whole history each round. There is no initial exploration
phase. One ``pull`` plus one ``update`` per round.
"""

from __future__ import annotations

import warnings

import numpy as np

__all__ = ["available", "version", "make_agent", "run"]

try:  # pragma: no cover - optional dependency
    import bayesianbandits as _bbs
    from bayesianbandits import Arm, BayesianGLM, FunctionArmFeaturizer, LipschitzContextualAgent, ThompsonSampling

    _IMPORT_ERROR: str | None = None
except Exception as exc:  # noqa: BLE001
    _bbs = None
    _IMPORT_ERROR = f"{type(exc).__name__}: {exc}"


def available() -> tuple[bool, str]:
    """Whether the package imports, and the error message if not."""
    return _bbs is not None, _IMPORT_ERROR or ""


def version() -> str:
    if _bbs is None:
        return "not installed"
    from importlib.metadata import version as _v

    return _v("bayesianbandits")


def make_agent(arms: np.ndarray, seed: int):
    """A Thompson-sampling agent with a shared Laplace logistic GLM over the arm features."""
    arms = np.asarray(arms, dtype=np.float64)
    d = arms.shape[1]

    def featurize(x, tokens):
        feats = arms[np.asarray(tokens)].T[None]  # (1, d, n_tokens)
        return np.broadcast_to(feats, (len(x), d, len(tokens))).copy()

    return LipschitzContextualAgent(
        arms=[Arm(i, learner=None) for i in range(arms.shape[0])],
        policy=ThompsonSampling(),
        arm_featurizer=FunctionArmFeaturizer(featurize),
        learner=BayesianGLM(alpha=1.0, link="logit", random_state=seed),
        random_seed=seed,
    )


def run(arms, theta_star, u, seed):
    """Play ``len(u)`` rounds; returns the per-round expected regret, shape (n,)."""
    arms = np.asarray(arms, dtype=np.float64)
    mu = 1.0 / (1.0 + np.exp(-(arms @ theta_star)))
    best = mu.max()
    agent = make_agent(arms, seed)
    context = np.zeros((1, 1))
    regret = np.empty(len(u))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for t in range(len(u)):
            arm = int(agent.pull(context)[0])
            agent.update(context, np.array([float(u[t] < mu[arm])]))
            regret[t] = best - mu[arm]
    return regret
