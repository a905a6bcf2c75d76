"""bayesbandit against other implementations of Laplace Thompson sampling on the logistic bandit.

Same problem for every contender: d=10, K=100, arms ~ U[-1,1]^d, theta* ~ N(0, 3/d I),
Bernoulli rewards decided by shared uniforms, the same instance per run index.

Contenders:

(i)   bayesbandit GLM-TSL and GLM-FPL, the whole experiment jit-compiled (lax.scan over rounds)
      and vmapped over the runs;
(ii)  the ``bayesianbandits`` package (PyPI): LipschitzContextualAgent + shared
      BayesianGLM(link="logit") Laplace learner + ThompsonSampling (one pull + one update per
      round; slow, so fewer rounds and runs, extrapolated as throughput);
(iii) plain NumPy/SciPy GLM-TSL, Newton on the full history each round;
(iv)  plain NumPy/SciPy GLM-TSL on per-arm counts and sums;
(v)   bayesbandit GLM-TSL with ``history="online"`` (the online Laplace posterior, which is what
      bayesianbandits computes) and the same algorithm in plain NumPy.

Reports throughput (rounds x runs per second), bayesbandit's speed-up over each, JIT compile
time, memory, final cumulative regret (mean ± s.e. over runs, paired differences where the
algorithm is the same), the project's targets, and a profile of where bayesbandit's time goes.

Newton steps reported for bayesbandit: per update, the update's own solve (its
``NewtonInfo.num_steps``); per select (GLM-FPL only), the perturbed solve done in ``select``
(``info.solver.num_steps``); GLM-TSL's select does no solve.

Usage, from the repository root: ``python -m benchmarks.bench_contenders [--quick] [--profile |
--no-profile]`` or ``python benchmarks/bench_contenders.py ...`` (the profile runs by default in
full mode only; ``--out-dir DIR`` writes the report elsewhere).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import tracemalloc

import jax
import jax.numpy as jnp
import numpy as np
from bayesbandit.models import logistic

import bayesbandit as bb

bb.runtime.enable_x64()  # right after importing bayesbandit, before any array: the GLM policies' Newton solves need float64

if not __package__:  # run as a file (python benchmarks/bench_contenders.py): make the package `benchmarks` importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks._common import (  # noqa: E402
    RESULTS,
    compile_and_time,
    fmt_pm,
    interleaved_cpu,
    jax_runner,
    machine_info,
    make_instances,
    max_rss_mib,
    md_table,
    mean_se,
    run_keys,
    warm_up_jax,
    write_results,
    xla_memory_mib,
)
from benchmarks._variants import ClosedFormLogisticNewton  # noqa: E402
from benchmarks.baselines import bayesianbandits_glm, numpy_glm_tsl  # noqa: E402

K, D = 100, 10
ONLINE, NUMPY_ONLINE = "bayesbandit GLM-TSL, online Laplace (a=1)", "NumPy GLM-TSL, online Laplace"
TARGET_BBS, TARGET_NP, TARGET_COMPILE = 150.0, 20.0, 5.0  # the issue: >= 150x, >= 20x (30x the goal), <= 5 s


def run_numpy(fn, arms, theta, u, runs):
    regrets, steps = [], []
    t0 = time.perf_counter()
    for i in range(runs):
        r, s = fn(arms[i], theta[i], u[i], seed=i)
        regrets.append(r)
        steps.append(s)
    return time.perf_counter() - t0, np.stack(regrets), np.stack(steps)


def traced_peak_mib(fn) -> float:
    tracemalloc.start()
    tracemalloc.reset_peak()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 2**20


def paired(a, b) -> str:
    diff = np.asarray(a) - np.asarray(b)
    m, s = mean_se(diff)
    z = m / s if s > 0 else float("nan")
    return f"{m:+.1f} ± {s:.1f} (z = {z:+.2f})"


def per_round_scan_us(fn, args, n, runs, reps=3):
    c_s, med, _, out, _ = compile_and_time(fn, args, reps=reps)
    return med / (n * runs) * 1e6, c_s, out


def profile(policy, arms, theta, u, keys, n_prof, runs):
    """Where GLM-TSL's time goes: select vs update, the Newton solve, and what-if variants.

    Newton steps: "update only" reports each update's own solve (the update info's ``solver.num_steps``),
    "Newton solve alone" the policy's solver (``policy.solver.fit``) from a perturbed warm start.
    """
    rows = []
    arms_j, theta_j = jnp.asarray(arms), jnp.asarray(theta)
    u_j = jnp.asarray(u[:, :n_prof])
    rng = np.random.default_rng(1)
    warm_arms = jnp.asarray(rng.integers(0, K, size=(runs, 500)))
    warm_u = jnp.asarray(rng.random((runs, 500)))

    def warm_state(a, th, pulls, uu):
        mu = jax.nn.sigmoid(a @ th)
        st = policy.init(a)

        def body(s, inp):
            i, ui = inp
            return policy.update(s, a, i, (ui < mu[i]).astype(a.dtype))[0], None

        return jax.lax.scan(body, st, (pulls, uu))[0]

    states = jax.jit(jax.vmap(warm_state))(arms_j, theta_j, warm_arms, warm_u)
    sel_keys = jax.vmap(lambda k: jax.random.split(k, n_prof))(keys)
    upd_arms = jnp.asarray(rng.integers(0, K, size=(runs, n_prof)))

    def select_only(st, a, ks):
        return jax.lax.scan(lambda c, k: (c, policy.select(st, a, k)[0]), 0, ks)[1]

    def update_only(st, a, th, pulls, uu):
        mu = jax.nn.sigmoid(a @ th)

        def body(s, inp):
            i, ui = inp
            s, update_info = policy.update(s, a, i, (ui < mu[i]).astype(a.dtype))
            return s, update_info.solver.num_steps

        return jax.lax.scan(body, st, (pulls, uu))[1]

    def fit_only(st, ks):
        # the solver's Newton solve alone on a fixed (warm) history, from a perturbed start
        x_bound = policy.bound(D)

        def body(c, k):
            start = st.fit._replace(theta=st.fit.theta + 0.05 * jax.random.normal(k, st.fit.theta.shape))
            return c, policy.solver.fit(x_bound, st.history.rows(), start)[1].num_steps

        return jax.lax.scan(body, 0, ks)[1]

    sel_us, sel_c, _ = per_round_scan_us(jax.vmap(select_only), (states, arms_j, sel_keys), n_prof, runs)
    upd_us, upd_c, upd_steps = per_round_scan_us(
        jax.vmap(update_only), (states, arms_j, theta_j, upd_arms, u_j), n_prof, runs
    )
    fit_us, fit_c, fit_steps = per_round_scan_us(jax.vmap(fit_only), (states, sel_keys), n_prof, runs)
    rows.append(["select only (vmapped)", f"{sel_us:.1f}", f"{sel_c:.2f}", "-"])
    rows.append(["update only (vmapped, random arms)", f"{upd_us:.1f}", f"{upd_c:.2f}", f"{np.mean(upd_steps):.2f}"])
    rows.append(
        [
            "Newton solve alone, perturbed warm start (vmapped)",
            f"{fit_us:.1f}",
            f"{fit_c:.2f}",
            f"{np.mean(fit_steps):.2f}",
        ]
    )
    # Per-round cost of the full loop for what-if variants, vmapped and 1 run.
    variants = {
        "library GLM-TSL": policy,
        "closed-form logistic Newton (no line search)": bb.GLMTSL(
            logistic(), a=policy.a, solver=ClosedFormLogisticNewton()
        ),
    }
    var_rows = []
    u_full = jnp.asarray(u[:, :n_prof])
    for name, pol in variants.items():
        vm_us, vm_c, vm_out = per_round_scan_us(
            jax_runner(pol, True), (arms_j, theta_j, u_full, keys), n_prof, runs, reps=3
        )
        one_us, one_c, _ = per_round_scan_us(
            jax_runner(pol, False), (arms_j[0], theta_j[0], u_full[0], keys[0]), n_prof, 1, reps=3
        )
        reg = np.asarray(vm_out[0]).sum(axis=1)
        var_rows.append([name, f"{vm_us:.1f}", f"{one_us:.1f}", f"{vm_c:.2f}", f"{one_c:.2f}", fmt_pm(reg)])
        print(var_rows[-1], flush=True)
    return rows, var_rows


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer rounds and runs (< 3 minutes)")
    parser.add_argument("--no-profile", action="store_true", help="skip the profile of bayesbandit GLM-TSL")
    parser.add_argument("--profile", action="store_true", help="run the profile in --quick mode too (adds ~9 compiles)")
    parser.add_argument("--rounds", type=int, default=None)
    parser.add_argument("--runs", type=int, default=None)
    parser.add_argument("--out-dir", default=RESULTS, help="where to write the report (default: benchmarks/results)")
    args = parser.parse_args(argv)
    quick = args.quick
    n = args.rounds or (1000 if quick else 10_000)
    runs = args.runs or (4 if quick else 20)
    n_bbs, runs_bbs = (200, 1) if quick else (1000, 2)
    n_prof = 300 if quick else 1000
    n_bbs, runs_bbs, n_prof = min(n_bbs, n), min(runs_bbs, runs), min(n_prof, n)  # small --rounds / --runs
    reps_tsl, reps_fpl = (2, 1) if quick else (3, 1)

    header = machine_info()
    warm = warm_up_jax()
    arms, theta, u = make_instances(runs, K, D, n)
    keys = run_keys(runs)
    jargs = (jnp.asarray(arms), jnp.asarray(theta), jnp.asarray(u), keys)
    total = n * runs
    results = {}  # name -> dict

    # (i) bayesbandit, vmapped over runs
    for name, policy, reps in (
        ("bayesbandit GLM-TSL (a=1)", bb.GLMTSL(logistic(), a=1.0), reps_tsl),
        (ONLINE, bb.GLMTSL(logistic(), a=1.0, history="online"), reps_tsl),
        ("bayesbandit GLM-FPL (a=0.5)", bb.GLMFPL(logistic(), a=0.5), reps_fpl),
    ):
        rss0 = max_rss_mib()
        c_s, med, _, out, compiled = compile_and_time(jax_runner(policy, True), jargs, reps=reps)
        regret, sel_steps, upd_steps = (np.asarray(o) for o in out)
        results[name] = dict(
            wall=med,
            measured=f"{runs} x {n} (median of {reps})",
            tput=total / med,
            compile=f"{c_s:.2f}",
            compile_s=c_s,
            mem=f"XLA {xla_memory_mib(compiled)} MiB; max RSS {max_rss_mib():.0f} MiB (+{max_rss_mib() - rss0:.0f})",
            regret=regret,
            steps=f"{np.mean(upd_steps):.2f} / update"
            + (f", {np.mean(sel_steps):.2f} / select" if "FPL" in name else ""),
            compiled=compiled,
        )
        print(name, results[name]["wall"], results[name]["tput"], c_s, flush=True)

    # (iv) NumPy compressed and (iii) NumPy full history
    for name, fn in (
        ("NumPy GLM-TSL, per-arm counts", numpy_glm_tsl.run_compressed),
        ("NumPy GLM-TSL, full history", numpy_glm_tsl.run_full_history),
        (NUMPY_ONLINE, numpy_glm_tsl.run_online),
    ):
        wall, regret, steps = run_numpy(fn, arms, theta, u, runs)
        peak = traced_peak_mib(lambda fn=fn: fn(arms[0], theta[0], u[0], seed=0))
        results[name] = dict(
            wall=wall,
            measured=f"{runs} x {n} (1 pass)",
            tput=total / wall,
            compile="-",
            mem=f"tracemalloc peak {peak:.2f} MiB (1 run)",
            regret=regret,
            steps=f"{np.mean(steps):.2f} / update",
        )
        print(name, wall, total / wall, flush=True)

    # (ii) bayesianbandits
    ok, err = bayesianbandits_glm.available()
    bbs_name = f"bayesianbandits {bayesianbandits_glm.version()} (Laplace GLM + TS)"
    if ok:
        t0 = time.perf_counter()
        regret_bbs = np.stack(
            [bayesianbandits_glm.run(arms[i], theta[i], u[i, :n_bbs], seed=i) for i in range(runs_bbs)]
        )
        wall = time.perf_counter() - t0
        peak = traced_peak_mib(lambda: bayesianbandits_glm.run(arms[0], theta[0], u[0, : min(n_bbs, 200)], seed=0))
        results[bbs_name] = dict(
            wall=wall,
            measured=f"{runs_bbs} x {n_bbs} (1 pass; extrapolated)",
            tput=runs_bbs * n_bbs / wall,
            compile="-",
            mem=f"tracemalloc peak {peak:.2f} MiB ({min(n_bbs, 200)} rounds)",
            regret=regret_bbs,
            steps="<= 5 IRLS / update (online)",
        )
        print(bbs_name, wall, flush=True)
    else:
        results[bbs_name] = None

    # ------------------------------------------------- interleaved timing (process CPU time)
    n_np_c, n_np_f = min(n, 2_000 if quick else 10_000), min(n, 500 if quick else 2_000)
    tsl_compiled = results["bayesbandit GLM-TSL (a=1)"]["compiled"]
    online_compiled = results[ONLINE]["compiled"]
    contenders = {
        "bayesbandit GLM-TSL (a=1)": (lambda: jax.block_until_ready(tsl_compiled(*jargs)), runs * n),
        ONLINE: (lambda: jax.block_until_ready(online_compiled(*jargs)), runs * n),
        "NumPy GLM-TSL, per-arm counts": (
            lambda: numpy_glm_tsl.run_compressed(arms[0], theta[0], u[0, :n_np_c], seed=0),
            n_np_c,
        ),
        "NumPy GLM-TSL, full history": (
            lambda: numpy_glm_tsl.run_full_history(arms[0], theta[0], u[0, :n_np_f], seed=0),
            n_np_f,
        ),
        NUMPY_ONLINE: (lambda: numpy_glm_tsl.run_online(arms[0], theta[0], u[0, :n_np_c], seed=0), n_np_c),
    }
    if ok:
        contenders[bbs_name] = (
            lambda: bayesianbandits_glm.run(arms[0], theta[0], u[0, : min(n_bbs, 200)], seed=0),
            min(n_bbs, 200),
        )
    reps_cpu = 3 if quick else 5
    cpu = interleaved_cpu(contenders, reps_cpu)
    cpu_rows = [
        [
            name,
            f"{work:,}",
            f"{1e6 * cpu[name]:.1f}",
            f"{cpu[name] / cpu['bayesbandit GLM-TSL (a=1)']:.1f}x",
            f"{cpu[name] / cpu[ONLINE]:.1f}x",
        ]
        for name, (_, work) in contenders.items()
    ]
    cpu_table = md_table(
        [
            "contender",
            "rounds x runs per timing",
            "CPU us / round / run",
            "bayesbandit GLM-TSL (full history) speed-up",
            "bayesbandit GLM-TSL (online) speed-up",
        ],
        cpu_rows,
    )
    print(cpu_table, flush=True)

    # ---------------------------------------------------------------- tables
    tsl = results["bayesbandit GLM-TSL (a=1)"]
    rows = []
    for name, r in results.items():
        if r is None:
            rows.append([name, "could not be imported: " + err] + ["-"] * 9)
            continue
        partial = r["regret"].shape[1] < n
        reg_n = "-" if partial else fmt_pm(r["regret"].sum(axis=1))
        nb = r["regret"].shape[1] if partial else n_bbs
        rb = r["regret"].shape[0] if partial else runs_bbs
        reg_b = fmt_pm(r["regret"][:rb, :nb].sum(axis=1)) if rb > 1 else f"{r['regret'][:rb, :nb].sum():.1f}"
        rows.append(
            [
                name,
                r["measured"],
                f"{r['wall']:.2f}",
                f"{r['tput']:,.0f}",
                f"{1e6 / r['tput']:.1f}",
                f"{tsl['tput'] / r['tput']:.1f}x",
                r["compile"],
                r["mem"],
                r["steps"],
                reg_n,
                reg_b,
            ]
        )
    table = md_table(
        [
            "contender",
            "runs x rounds timed",
            "wall (s)",
            "rounds x runs / s",
            "us / round / run",
            "bayesbandit GLM-TSL speed-up",
            "compile (s)",
            "memory",
            "Newton steps",
            f"cum. regret at n={n} (mean ± se, {runs} runs)",
            f"cum. regret at n={n_bbs} (runs 0..{runs_bbs - 1})",
        ],
        rows,
    )

    np_c = results["NumPy GLM-TSL, per-arm counts"]
    np_f = results["NumPy GLM-TSL, full history"]
    agree = md_table(
        ["pair (same algorithm: GLM-TSL, a=1, N(0,I) prior)", f"paired difference of cum. regret at n={n}"],
        [
            ["bayesbandit - NumPy per-arm counts", paired(tsl["regret"].sum(1), np_c["regret"].sum(1))],
            ["bayesbandit - NumPy full history", paired(tsl["regret"].sum(1), np_f["regret"].sum(1))],
            ["NumPy full history - NumPy per-arm counts", paired(np_f["regret"].sum(1), np_c["regret"].sum(1))],
            [
                "bayesbandit online - NumPy online (same algorithm: online Laplace)",
                paired(results[ONLINE]["regret"].sum(1), results[NUMPY_ONLINE]["regret"].sum(1)),
            ],
        ],
    )

    targets = []
    sp_np = cpu["NumPy GLM-TSL, per-arm counts"] / cpu["bayesbandit GLM-TSL (a=1)"]
    targets.append(
        f"- GLM-TSL vs NumPy per-arm counts: {sp_np:.1f}x (target >= {TARGET_NP:.0f}x): "
        f"{'MET' if sp_np >= TARGET_NP else 'MISSED'}"
    )
    if results[bbs_name] is not None:
        sp_b = cpu[bbs_name] / cpu["bayesbandit GLM-TSL (a=1)"]
        targets.append(
            f"- GLM-TSL vs bayesianbandits: {sp_b:.1f}x (target >= {TARGET_BBS:.0f}x): "
            f"{'MET' if sp_b >= TARGET_BBS else 'MISSED'}"
        )
    else:
        targets.append(f"- GLM-TSL vs bayesianbandits: not measurable ({err})")
    sp_on = cpu[NUMPY_ONLINE] / cpu[ONLINE]
    targets.append(
        f"- GLM-TSL online vs NumPy online (same algorithm): {sp_on:.1f}x (target >= {TARGET_NP:.0f}x): "
        f"{'MET' if sp_on >= TARGET_NP else 'MISSED'}"
    )
    if results[bbs_name] is not None:
        sp_ob = cpu[bbs_name] / cpu[ONLINE]
        targets.append(
            f"- GLM-TSL online vs bayesianbandits (same algorithm: online Laplace + TS): {sp_ob:.1f}x "
            f"(target >= {TARGET_BBS:.0f}x): {'MET' if sp_ob >= TARGET_BBS else 'MISSED'}"
        )
    targets.append(
        f"- GLM-TSL compile time (vmapped scan program): {tsl['compile_s']:.2f} s (target <= {TARGET_COMPILE:.0f} s): "
        f"{'MET' if tsl['compile_s'] <= TARGET_COMPILE else 'MISSED'}"
    )
    sp_f = cpu["NumPy GLM-TSL, full history"] / cpu["bayesbandit GLM-TSL (a=1)"]
    targets.append(f"- GLM-TSL vs NumPy full history: {sp_f:.1f}x (no target)")

    sections = [
        f"# bench_contenders{' (quick)' if quick else ''}",
        header,
        f"Settings: logistic bandit, d={D}, K={K}, arms ~ U[-1,1]^d, theta* ~ N(0, 3/d I), Bernoulli rewards from "
        f"shared uniforms; n={n} rounds, {runs} runs (run i = same instance for every contender); bayesianbandits "
        f"timed on {runs_bbs} run(s) x {n_bbs} rounds and its throughput extrapolated. JAX: whole experiment in one "
        f"jitted, vmapped lax.scan; wall = median of the compiled calls; warm-up compile {warm:.2f} s not charged.",
        f"## Speed-up, interleaved and by process CPU time (median of {reps_cpu}; the targets use these)",
        cpu_table,
        "## Throughput (wall time, one contender after another), compile time, memory, regret",
        table,
        "## Do the same algorithms agree? (paired over run index; z = mean / se)",
        agree,
        "## Targets",
        "\n".join(targets),
    ]
    if not args.no_profile and (args.profile or not quick):
        prof_rows, var_rows = profile(bb.GLMTSL(logistic(), a=1.0), arms, theta, u, keys, n_prof, runs)
        sections += [
            f"## Profile of bayesbandit GLM-TSL ({runs} runs vmapped, {n_prof} rounds, from a state after 500 "
            "random pulls)",
            md_table(["piece", "us / round / run", "compile (s)", "mean Newton steps"], prof_rows),
            f"### What-if variants of the full loop ({n_prof} rounds; not library code, see benchmarks/_variants.py)",
            md_table(
                [
                    "variant",
                    f"us / round / run (vmap {runs})",
                    "us / round (1 run)",
                    "compile vmap (s)",
                    "compile 1 run (s)",
                    f"cum. regret at n={n_prof}",
                ],
                var_rows,
            ),
        ]
    sections.append(
        "Notes: memory for JAX is XLA's argument+output+temporary buffer size (`compiled.memory_analysis()`) and "
        "the process max RSS (a high-water mark: it includes compilation and everything loaded before, and cannot "
        "go down); for the NumPy paths it is the tracemalloc peak of one run (Python allocations only). "
        "bayesianbandits uses online (recursive) Laplace updates and no initial exploration, so its regret is a "
        "different algorithm's (bayesbandit's online GLM-TSL is its algorithm with the initial exploration). "
        "The machine is shared (see load average): absolute times are noisy."
    )
    text = "\n\n".join(sections)
    print("\n" + text)
    print("\nwritten:", write_results("bench_contenders", quick, text, args.out_dir))


if __name__ == "__main__":
    sys.exit(main())
