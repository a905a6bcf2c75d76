"""Azizi et al. (2022), sec. 8.4, Fig. 4: the logistic bandit, K = 8, d in {5, 7, 10, 12}.

Arms uniform on ``[-0.5, 0.5]^d``, ``theta* ~ N(0, (3/d) I)`` (a covariance, as printed; the
authors' code uses ``3/d`` as the standard deviation), Bernoulli rewards; ``B/K in {10, 20, 50}``.
GSE-Log fits the MAP of a logistic reward program with a ``N(0, 10^2 I)`` prior each stage; the
linear GSE is run too (misspecified), with UCB-GLM. For ``d >= 8`` the first stage is
rank-deficient and GSE works in the arms' span.

For ``d >= K`` every stage is saturated (as many directions as arms), so GSE-Lin's least-squares
scores are the arms' sample means, which tie often with Bernoulli rewards; GSE-Lin breaks those
ties at random, GSE-Log orders the same arms by their MAP logits, which the prior's shrinkage sets
apart. :func:`where_they_part` finds, for paired replications, the stage where the two first keep
different arms and whether GSE-Lin's scores tie there.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from bayesbandit.experiments.bai_algorithms import gse_logistic
from bayesbandit.experiments.bai_grid import Cell, Experiment

from bayesbandit.bai import GLMInstance, is_correct
from bayesbandit.bai.evaluation import replication_keys

DESCRIPTION = "Fixed-budget BAI on logistic bandits (Azizi et al. 2022, Fig. 4): GSE-Log vs GSE-Lin, UCB-GLM."


def cells(quick: bool) -> list[Cell]:
    dims, ratios = ([5], [20]) if quick else ([5, 7, 10, 12], [10, 20, 50])
    return [Cell(f"B/K = {r}", d, GLMInstance(K=8, d=d), 8 * r) for r in ratios for d in dims]


def algorithms(cell: Cell, quick: bool) -> dict:
    algs = gse_logistic()
    return {k: algs[k] for k in ("GSE-Log-FW", "GSE-Lin-FW")} if quick else algs


EXPERIMENT = Experiment("Logistic bandit (K = 8)", "d", "GSE-Log-FW", cells, algorithms)
run = EXPERIMENT.run


def where_they_part(d: int, ratio: int, replications: int = 1000, seed: int = 0) -> dict[str, float]:
    """GSE-Log-FW against GSE-Lin-FW on the same replications of ``GLMInstance(K=8, d=d)``, ``B = 8 ratio``.

    Returns both accuracies, the replications whose survivors first differ at some stage (``part``)
    and, of those, how many part at a stage where GSE-Lin's scores tie at the elimination boundary
    (``at_a_tie``: the keep-th largest score shared by two arms or more, to ``1e-9`` relative).
    """
    env = GLMInstance(K=8, d=d)
    algorithms = gse_logistic()
    instance_keys, run_keys = replication_keys(seed, replications)
    instances = jax.jit(jax.vmap(env.reset))(instance_keys)
    runs = {}
    for name in ("GSE-Log-FW", "GSE-Lin-FW"):
        algorithm = algorithms[name]
        identify = jax.jit(jax.vmap(lambda inst, key, a=algorithm: a.identify(env, inst, 8 * ratio, key)))
        arm, info = identify(instances, run_keys)
        kept = np.concatenate([np.asarray(info.survivors), np.eye(8, dtype=bool)[np.asarray(arm)][:, None]], axis=1)
        runs[name] = (np.asarray(arm), kept, np.asarray(info.theta))
    arms = np.asarray(instances.arms)
    (_, kept_log, _), (_, kept_lin, theta_lin) = runs["GSE-Log-FW"], runs["GSE-Lin-FW"]
    part = at_a_tie = 0
    for r in range(replications):
        stages = [t for t in range(kept_lin.shape[1] - 1) if not np.array_equal(kept_lin[r, t + 1], kept_log[r, t + 1])]
        if not stages:
            continue
        t = stages[0]
        part += 1
        scores = arms[r][kept_lin[r, t]] @ theta_lin[r, t]
        boundary = np.sort(scores)[::-1][int(kept_lin[r, t + 1].sum()) - 1]
        at_a_tie += int(np.sum(np.abs(scores - boundary) <= 1e-9 * (1.0 + abs(boundary))) > 1)
    return {
        "accuracy_log": float(np.mean(jax.vmap(is_correct)(instances, jnp.asarray(runs["GSE-Log-FW"][0])))),
        "accuracy_lin": float(np.mean(jax.vmap(is_correct)(instances, jnp.asarray(runs["GSE-Lin-FW"][0])))),
        "part": part,
        "at_a_tie": at_a_tie,
    }
