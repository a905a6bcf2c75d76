"""Every check of the contract suite (:mod:`bayesbandit.testing`) on every policy: one line a policy."""

from bayesbandit.models import logistic, mlp

import bayesbandit as bb
from bayesbandit import drift
from bayesbandit.oracles import ExclusiveAssignment, TopK
from bayesbandit.testing import parametrize_with_checks

POLICIES = [
    bb.GLMTSL(logistic(), a=1.0),
    bb.GLMTSL(logistic(), a=1.0, history="online"),
    bb.GLMTSL(logistic(), a=1.0, proposals=8),
    bb.GLMFPL(logistic(), a=0.5),
    bb.GLMFPL(logistic(), a=0.5, noise="paper"),
    bb.GLMUCB(logistic(), rho=0.5),
    bb.UCBGLM(logistic(), alpha=0.5),
    bb.EpsilonGreedy(logistic(), epsilon=0.05),
    bb.LinTS(lam=1.0, v=0.5),
    bb.LinUCB(lam=1.0, alpha=1.0),
    drift.ChangePoint(bb.GLMTSL(logistic(), a=1.0), test=drift.GLR(delta=0.01)),
    drift.ChangePoint(bb.LinTS(lam=1.0, v=0.5), test=drift.CUSUM(epsilon=0.05, h=8.0)),
    bb.DeepFPL(mlp(hidden=16), a=0.5, learning_rate=1e-2, batch=128),
    bb.DeepFL(mlp(hidden=16), learning_rate=1e-2, batch=128),
    bb.RepGLMFPL(mlp(hidden=8), explore_rounds=100, a=0.5),
    bb.LastLayerLaplaceTS(mlp(hidden=8), explore_rounds=100),
    # combinatorial
    bb.C2UCB(oracle=TopK(k=3), lam=1.0, alpha=0.5),
    bb.PC2UCB(oracle=TopK(k=3), lam=1.0, alpha=0.5, c=1.0),
    bb.RoundTS(oracle=TopK(k=3), lam=1.0, v=0.3),
    bb.ArmTS(oracle=TopK(k=3), lam=1.0, v=0.3),
    bb.ArmTS(oracle=TopK(k=3), lam=1.0, v=0.3, literal=True),
    bb.CombGreedy(oracle=TopK(k=3), lam=1.0),
    bb.CombLinUCB(oracle=TopK(k=3), prior_var=1.0, noise_var=0.25, c=1.0),
    bb.CombLinTS(oracle=TopK(k=3), prior_var=1.0, noise_var=0.09),
    bb.C2UCB(oracle=ExclusiveAssignment(k=2), blocks=2, lam=1.0, alpha=0.5),
    drift.ChangePoint(bb.ArmTS(oracle=TopK(k=3), lam=1.0, v=0.3), test=drift.GLR(delta=0.01, family="gaussian")),
    # forgetting wrappers (bayesbandit.drift)
    drift.Discounted(bb.GLMTSL(logistic(), a=1.0), gamma=0.99),
    drift.Discounted(bb.GLMTSL(logistic(), a=1.0, history="online"), gamma=0.995),
    drift.Discounted(bb.LinTS(lam=1.0, v=0.5), gamma=0.99),
    drift.Discounted(bb.CombLinTS(oracle=TopK(k=3), prior_var=1.0, noise_var=0.09), gamma=0.99),
    drift.SlidingWindow(bb.GLMTSL(logistic(), a=1.0), window=500),
    drift.SlidingWindow(bb.LinUCB(lam=1.0, alpha=1.0), window=500),
    drift.SlidingWindow(bb.C2UCB(oracle=TopK(k=3), lam=1.0, alpha=0.5), window=100),
    # host, over each index kind
    bb.SubTS(beta=0.5, shortlist=20),
    bb.SubTS(beta=0.5, index="exact"),
    bb.SubTS(beta=0.5, shortlist=20, index="hnsw"),
    bb.SubElim(beta=0.2, eta=0.01, shortlist=20),
    bb.SubElim(beta=0.2, eta=0.01, index="exact"),
    bb.SubElim(beta=0.2, eta=0.01, shortlist=20, index="hnsw"),
]


@parametrize_with_checks(POLICIES)
def test_policy_contract(policy, check):
    check(policy)
