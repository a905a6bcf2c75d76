"""GLM-FPL with the theory ``a`` under Figure 1's weak prior: how far the perturbed MAP is, and
what a Newton step cap costs and changes.

GLM-FPL's perturbed rewards ``Y + Z``, ``Z ~ N(0, a^2)``, fall outside ``[0, 1]``, where the
logistic loss of an arm decreases without bound along its feature; only the prior bounds the
perturbed MAP. With Figure 1's ``N(0, 100^2 I)`` prior and the theory ``a`` (5.2 at d = 10, 6.7 at
d = 20) it lies very far out, and damped Newton needs many steps to get there. The policy needs
only the arm the perturbed MAP ranks first, ``argmax_i x_i^T theta~``.

For fixed histories (K = 100 arms uniform on ``[-1, 1]^d``, ``theta* ~ N(0, 3/d^2 I)`` as in
Figure 1, every arm pulled ``m`` times), ``M`` fresh perturbations each: the exact perturbed MAP
(Newton to a decrement of 1e-8, at most 1,000 steps, warm-started from the unperturbed MAP as
the policy does), then the iterate after a cap of 10, 20 and 50 steps: how often it picks the
exact MAP's arm, and the derivative passes it spends. Steps are counted, not timed, so the
numbers do not depend on the machine's load.

With ``--regret``: what the cap does to the policy. Theory-a GLM-FPL with the perturbed solve
capped at 20 and at 50 steps (``DenseNewton(max_steps=...)``) on Figure 1's problem, ``R``
instances of ``n`` rounds, both caps in one ``simulate`` call (common random numbers: the same
instances, reward noise and perturbations), split over one host device per core: final regret
of each, their paired difference with its standard error, capped rounds per run and run time.

Usage, from the repository root: ``python -m benchmarks.bench_fpl_perturbed_cap [--quick]``, and
``python -m benchmarks.bench_fpl_perturbed_cap --regret [--runs R --horizon n]``.
"""

from __future__ import annotations

import argparse
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np
from bayesbandit.experiments.cli import _use_host_devices
from bayesbandit.models import logistic

import bayesbandit as bb
from bayesbandit.inference import DenseNewton, newton_minimize
from bayesbandit.inference.posteriors import perturb_rewards
from bayesbandit.policies.glm.theory import fpl_theory_a

bb.runtime.enable_x64()

if not __package__:
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks._common import fmt_paired, fmt_pm, machine_info, md_table, write_results  # noqa: E402

K, HORIZON, PRIOR_SCALE, EXACT_STEPS, CAPS = 100, 50_000, 100.0, 1_000, (10, 20, 50)


def history(d: int, pulls: int, seed: int) -> tuple[jax.Array, jax.Array, jax.Array]:
    """Arms, mean rewards and pull counts of a Figure 1 instance with every arm pulled ``pulls`` times."""
    rng = np.random.default_rng([seed, d, pulls])
    arms = rng.uniform(-1.0, 1.0, (K, d))
    mu = 1.0 / (1.0 + np.exp(-arms @ rng.normal(0.0, np.sqrt(3.0 / d**2), d)))
    return jnp.asarray(arms), jnp.asarray(rng.binomial(pulls, mu) / pulls), jnp.full(K, float(pulls))


def study(d: int, pulls: int, draws: int, seed: int = 0) -> list:
    """One table row: exact-solve steps and, per cap, agreement with the exact arm and passes spent."""
    arms, y, w = history(d, pulls, seed)
    a = fpl_theory_a(d, HORIZON)
    bound = bb.bind(logistic(prior_scale=PRIOR_SCALE), arms)
    start = newton_minimize(lambda t: bound.potential(t, arms, y, w), bound.init_theta(), max_steps=100).theta

    def solve(key: jax.Array, cap: int) -> tuple[jax.Array, jax.Array, jax.Array, jax.Array]:
        perturbed = perturb_rewards(key, y, w, a)
        result = newton_minimize(lambda t: bound.potential(t, arms, perturbed, w), start, max_steps=cap, tol=1e-8)
        return jnp.argmax(arms @ result.theta), result.info.num_steps, result.info.converged, result.theta

    keys = jax.random.split(jax.random.PRNGKey(seed), draws)
    arm, steps, converged, theta = jax.jit(jax.vmap(lambda k: solve(k, EXACT_STEPS)))(keys)
    exact = np.asarray(converged)
    norms = np.linalg.norm(np.asarray(theta)[exact], axis=1)
    row = [
        d,
        f"{a:.2f}",
        pulls,
        f"{exact.mean():.1%}",
        f"{np.median(np.asarray(steps)[exact]):.0f} / {np.percentile(np.asarray(steps)[exact], 90):.0f}",
        f"{np.median(norms):.3g}",
    ]
    for cap in CAPS:
        capped_arm, capped_steps, _, _ = jax.jit(jax.vmap(lambda k, cap=cap: solve(k, cap)))(keys)
        same = np.asarray(capped_arm)[exact] == np.asarray(arm)[exact]
        row.append(f"{same.mean():.1%} ({np.asarray(capped_steps).mean():.1f})")
    return row


def regret_study(dims: tuple[int, ...], runs: int, horizon: int, seed: int = 0) -> str:
    """Theory-a GLM-FPL with the perturbed solve capped at 20 vs 50 steps, paired over instances."""
    rows = []
    for d in dims:
        a = fpl_theory_a(d, HORIZON)
        model = logistic(prior_scale=PRIOR_SCALE)
        pols = {f"cap {c}": bb.GLMFPL(model, a=a, solver=DenseNewton(max_steps=c)) for c in (20, 50)}
        env = bb.envs.LogisticBandit(K=K, d=d, theta_cov="paper")
        ds = bb.simulate(pols, env, horizon, runs=runs, seed=seed, progress=True)
        final = np.asarray(bb.sim.cumulative_regret(ds).isel(round=-1).values)  # (policy, run)
        capped = np.asarray(ds["not_converged"].mean("run").values)
        rows.append(
            [
                d,
                f"{a:.2f}",
                fmt_pm(final[0]),
                fmt_pm(final[1]),
                fmt_paired(final[0] - final[1]),
                f"{capped[0]:,.0f} / {capped[1]:,.0f}",
                f"{float(ds['run_time'][0]):.0f} / {float(ds['run_time'][1]):.0f}",
            ]
        )
        print(rows[-1], flush=True)
    headers = [
        "d",
        "theory a",
        "regret, cap 20",
        "regret, cap 50",
        "paired difference (20 - 50)",
        "capped rounds per run (20 / 50)",
        "run s (20 / 50)",
    ]
    return "\n\n".join(
        [
            f"## The cap's effect on regret: {runs} instances x {horizon:,} rounds, paired",
            f"Figure 1's problem (K = {K}, theta* ~ N(0, 3/d^2 I), prior N(0, 100^2 I)), theory a for n = {HORIZON:,}; "
            f"{jax.device_count()} host devices; regret: mean final cumulative regret ± standard error; run s: "
            "steady run time of each policy's simulate (the two run one after the other).",
            md_table(headers, rows),
        ]
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer draws and settings")
    parser.add_argument("--regret", action="store_true", help="the paired regret study of cap 20 vs 50")
    parser.add_argument("--runs", type=int, default=100, help="instances for --regret (default 100)")
    parser.add_argument("--horizon", type=int, default=5_000, help="rounds for --regret (default 5,000)")
    args = parser.parse_args(argv)
    if args.regret:
        # Before JAX starts its CPU backend: one host device per core, as the CLI runs Figure 1.
        os.environ.setdefault("PJRT_NPROC", "1")
        _use_host_devices(os.cpu_count() or 1)
        dims = (10,) if args.quick else (10, 20)
        runs, horizon = (8, 300) if args.quick else (args.runs, args.horizon)
        text = "\n\n".join(["# GLM-FPL, theory a: the perturbed solve's step cap and regret", machine_info()])
        text += "\n\n" + regret_study(dims, runs, horizon)
        print(f"wrote {write_results('bench_fpl_cap_regret', args.quick, text)}")
        return
    draws = 20 if args.quick else 200
    settings = [(10, 20)] if args.quick else [(d, m) for d in (10, 20) for m in (5, 20, 100)]
    rows = []
    for d, pulls in settings:
        rows.append(study(d, pulls, draws))
        print(rows[-1], flush=True)
    headers = [
        "d",
        "theory a",
        "pulls per arm",
        f"exact MAP reached (<= {EXACT_STEPS:,} steps)",
        "its steps, median / p90",
        "median norm of the MAP",
        *(f"cap {c}: same arm (mean passes)" for c in CAPS),
    ]
    text = "\n\n".join(
        [
            "# GLM-FPL, theory a, prior N(0, 100^2 I): the perturbed MAP and a Newton step cap",
            machine_info(),
            f"K = {K}, {draws} perturbations per row, each solve warm-started from the unperturbed MAP; "
            "`same arm`: the capped iterate ranks first the arm the exact perturbed MAP ranks first "
            "(over the draws whose exact MAP was reached); `passes`: derivative evaluations per solve.",
            md_table(headers, rows),
        ]
    )
    print(f"wrote {write_results('bench_fpl_perturbed_cap', args.quick, text)}")


if __name__ == "__main__":
    main()
