"""The likelihood matrix: every reward program of :mod:`bayesbandit.models.likelihoods` through the GLM policies.

For each program and policy, on a bandit of the program's own family
(:class:`bayesbandit.envs.ProgramBandit`: ``K`` arms, parameters drawn from the program's prior,
one instance per run, common random numbers across policies), either the policy is refused when
the simulation starts (a :mod:`bayesbandit.errors` exception, whose message is kept) or it runs
and the table reports:

* ``regret / uniform``: total regret over the horizon divided by uniform play's (the mean over
  arms of ``max mean - mean``, per round), averaged over runs;
* ``late / uniform``: the same ratio over the last quarter of the rounds; the policy **learns**
  when it is below ``LEARNS_BELOW``;
* ``converged``: the share of rounds whose selection and update converged;
* ``first decision (s)``: ``Agent(...)`` + ``select`` + ``update`` in a fresh process, cold
  compilation cache (full run only; :func:`first_decision_seconds`).

A second table compares the GLM-FPL ensemble with NUTS per program on one data set drawn from
the program (:func:`bayesbandit.diagnostics.compare`): the range of the per-parameter standard
deviation ratios FPL / NUTS and Laplace / NUTS.

Writes ``likelihoods.md`` (both tables), ``likelihoods.nc`` (the matrix as an ``xarray.Dataset``)
and ``likelihoods.png`` (late regret / uniform per program and policy).
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import xarray as xr  # noqa: E402
from bayesbandit.models.likelihoods import LIKELIHOODS  # noqa: E402

import bayesbandit as bb  # noqa: E402
from bayesbandit.errors import BayesBanditError  # noqa: E402
from bayesbandit.inference.posteriors import resolve_perturbation  # noqa: E402
from bayesbandit.sim import key_streams  # noqa: E402

DESCRIPTION = "Every likelihood a practitioner writes through GLM-TSL, GLM-FPL, GLM-UCB and UCB-GLM: learns or refused."

# The quick run: a program of each kind the matrix tells apart (affine, reward off the real line,
# heavy tails, ordinal, zero-inflated, an indicator summed out), and programs GLM-FPL perturbs by weights for NUTS.
QUICK = ("bernoulli_logit", "gamma", "student_t", "ordered_logistic", "zero_inflated", "mixture")
QUICK_NUTS = ("gamma", "student_t", "ordered_logistic")

LEARNS_BELOW = 0.5  # late regret per round / uniform play's: below this the policy learns

POLICIES: dict[str, Callable[[Any], Any]] = {
    "GLM-TSL": lambda model: bb.GLMTSL(model),
    "GLM-TSL (online)": lambda model: bb.GLMTSL(model, history="online"),
    "GLM-FPL": lambda model: bb.GLMFPL(model),
    "GLM-UCB": lambda model: bb.GLMUCB(model),
    "UCB-GLM": lambda model: bb.UCBGLM(model),
}


def play(
    name: str, policy_name: str, *, horizon: int, runs: int, seed: int, num_arms: int = 20, d: int = 3
) -> dict[str, Any]:
    """One cell of the matrix: program ``name`` under policy ``policy_name`` (module docstring).

    Returns a dict with ``refused`` (the exception's message, or ``""``) and, when it ran,
    ``regret_ratio``, ``late_ratio``, ``converged`` (shares) and ``learns``.
    """
    model = LIKELIHOODS[name]
    env = bb.envs.ProgramBandit(model=model, K=num_arms, d=d)
    try:
        policy = POLICIES[policy_name](model)
        ds = bb.simulate(policy, env, horizon=horizon, runs=runs, seed=seed)
    except BayesBanditError as exc:
        return {"refused": f"{type(exc).__name__}: {exc}"}
    regret = ds.regret.isel(policy=0).values  # (run, round)
    uniform = uniform_regret(env, runs, seed)  # (run,)
    regret_ratio = float(np.mean(regret.mean(axis=1) / uniform))
    late_ratio = float(np.mean(late_ratios(regret, uniform)))
    converged = 1.0 - float(ds.not_converged.isel(policy=0).sum()) / (runs * horizon)
    return {
        "refused": "",
        "regret_ratio": regret_ratio,
        "late_ratio": late_ratio,
        "converged": converged,
        "learns": late_ratio < LEARNS_BELOW,
    }


def late_ratios(regret: np.ndarray, uniform: np.ndarray) -> np.ndarray:
    """Each run's regret per round over the last quarter of its rounds over uniform play's, shape ``(run,)``.

    ``regret``: ``(run, round)``; ``uniform``: uniform play's regret per round in each run's instance, ``(run,)``.
    """
    late = slice(-(regret.shape[1] // 4), None)
    return regret[:, late].mean(axis=1) / uniform


def uniform_regret(env: bb.envs.ProgramBandit, runs: int, seed: int) -> np.ndarray:
    """Uniform play's regret per round in each run's instance (the instances ``simulate`` draws for ``seed``)."""
    instances = [env.reset(key) for key in key_streams(seed, runs).env]
    return np.array([float(inst.best_mean - np.mean(inst.means)) for inst in instances])


# The start of a timed child process: the clock from before its imports, and the seconds JAX spends
# tracing, lowering and compiling while ``listening`` (JAX's monitoring events).
_TIMED_CHILD = textwrap.dedent(
    """
    import collections, json, sys, time
    start = time.perf_counter()
    import jax, numpy as np
    import jax.monitoring
    spent = collections.Counter()
    stages = {"jaxpr_trace_duration": "trace_s", "jaxpr_to_mlir_module_duration": "lower_s",
              "backend_compile_duration": "xla_s"}

    def listen(event, seconds, **kwargs):
        stage = stages.get(event.rsplit("/", 1)[-1])
        if stage and listening:
            spent[stage] += seconds
            spent["compilations"] += stage == "xla_s"

    listening = False
    jax.monitoring.register_event_duration_secs_listener(listen)
    """
)

FIRST_DECISION = _TIMED_CHILD + textwrap.dedent(
    """
    import importlib
    import bayesbandit as bb
    module, registry = sys.argv[7].split(":")
    programs = getattr(importlib.import_module(module), registry)
    bb.runtime.enable_x64()
    if sys.argv[6] == "fast":
        bb.runtime.enable_fast_rng()
    if sys.argv[3]:
        bb.runtime.enable_compilation_cache(sys.argv[3])
    imported = time.perf_counter()
    model = programs[sys.argv[1]]
    arms, reward = np.asarray(json.loads(sys.argv[4])), float(sys.argv[5])
    policy = {"GLM-TSL": bb.GLMTSL, "GLM-FPL": bb.GLMFPL}[sys.argv[2]](model)
    ready = time.perf_counter()
    listening = True
    agent = bb.Agent(policy, arms=arms, seed=0)
    built = time.perf_counter()
    arm = agent.select()
    selected = time.perf_counter()
    agent.update(arm, reward)
    done = time.perf_counter()
    print(json.dumps({"import_s": imported - start, "agent_s": built - ready, "select_s": selected - built,
                      "update_s": done - selected, "first_decision_s": done - ready, **spent}))
    """
)


def first_decision_seconds(
    name: str,
    policy_name: str = "GLM-TSL",
    cache_dir: str = "",
    *,
    fast_rng: bool = True,
    programs: str = "bayesbandit.models.likelihoods:LIKELIHOODS",
    env: bb.envs.ProgramBandit | None = None,
) -> dict[str, float]:
    """``Agent(...)`` + first ``select`` + ``update`` for program ``name`` in a fresh Python process.

    ``cache_dir``: a persistent compilation cache to use (empty: none); ``fast_rng``: whether the
    process calls :func:`bayesbandit.runtime.enable_fast_rng` (the ``bayesbandit`` command does);
    ``programs``: ``"module:dict"``, where the new process finds the program by ``name`` (imported
    before the clock starts); ``env``: the bandit of the program whose first instance gives the arms
    (default: 20 uniform arms in 3 dimensions, :class:`~bayesbandit.envs.ProgramBandit`). The arms and one reward
    are drawn from the program here and handed to the new process, which binds the program only
    when the clock runs (as a user's first ``Agent`` does). Returns the seconds of each step and their sum
    (``first_decision_s``), the import time apart, and where the first decision's time went:
    tracing (``trace_s``), lowering to MLIR (``lower_s``) and XLA's compilation (``xla_s``, over
    ``compilations`` programs).
    """
    env = bb.envs.ProgramBandit(model=LIKELIHOODS[name], K=20, d=3) if env is None else env
    instance = env.reset(jax.random.PRNGKey(0))
    reward = float(env.pull(instance, jnp.asarray(0), jax.random.PRNGKey(1))[0])
    arms = json.dumps(np.asarray(instance.arms).tolist())
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            FIRST_DECISION,
            name,
            policy_name,
            cache_dir,
            arms,
            repr(reward),
            "fast" if fast_rng else "jax",
            programs,
        ],
        env=_child_env(),
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def _child_env() -> dict[str, str]:
    """This process's environment for a child, less ``JAX_COMPILATION_CACHE_DIR``: the child's cache is the one it is
    handed, not one the environment points JAX at."""
    return {k: v for k, v in os.environ.items() if k != "JAX_COMPILATION_CACHE_DIR"}


# The restart: the rounds played before and after the checkpoint, and how many rewards of the last ones are
# still pending when the agent stops (rewards arrive that many decisions late after the checkpoint).
RESTART_ROUNDS = (100, 100)
RESTART_PENDING = 10

RESTART_SETUP = textwrap.dedent(
    """
    import os, sys
    import numpy as np
    import bayesbandit as bb
    from bayesbandit.models.likelihoods import LIKELIHOODS
    bb.runtime.enable_x64()
    bb.runtime.enable_fast_rng()
    folder, before, after, lag = sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
    arms, rewards = np.load(os.path.join(folder, "arms.npy")), np.load(os.path.join(folder, "rewards.npy"))
    policy = {"GLM-TSL": bb.GLMTSL, "GLM-FPL": bb.GLMFPL}[sys.argv[2]](LIKELIHOODS[sys.argv[1]])
    agent = bb.Agent(policy, arms=arms, seed=0, log=os.path.join(folder, "decisions.sqlite"))
    for t in range(before):
        decision = agent.decide()
        agent.update(decision, rewards[t, decision.action])
    agent.save(os.path.join(folder, "agent.ckpt"))
    waiting = []
    for t in range(before, before + after):
        waiting.append((t, agent.decide()))
        if len(waiting) > lag:
            s, decision = waiting.pop(0)
            agent.update(decision, rewards[s, decision.action])
    agent.close()
    """
)

RESTART = _TIMED_CHILD + textwrap.dedent(
    """
    import os
    import bayesbandit as bb
    from bayesbandit.models.likelihoods import LIKELIHOODS
    bb.runtime.enable_x64()
    bb.runtime.enable_fast_rng()
    if sys.argv[3]:
        bb.runtime.enable_compilation_cache(sys.argv[3])
    imported = time.perf_counter()
    folder = sys.argv[4]
    policy = {"GLM-TSL": bb.GLMTSL, "GLM-FPL": bb.GLMFPL}[sys.argv[2]](LIKELIHOODS[sys.argv[1]])
    ready = time.perf_counter()
    listening = True
    agent = bb.Agent.load(os.path.join(folder, "agent.ckpt"), policy, log=os.path.join(folder, "decisions.sqlite"))
    loaded = time.perf_counter()
    counts = {"updates": agent.num_updates, "pending": agent.pending_decisions, "decisions": agent.num_decisions}
    deciding = time.perf_counter()
    agent.decide()
    done = time.perf_counter()
    listening = False
    agent.close()
    load_s, decide_s = loaded - ready, done - deciding
    print(json.dumps({"import_s": imported - start, "load_s": load_s, "decide_s": decide_s,
                      "restart_s": load_s + decide_s, **spent, **counts}))
    """
)


def restart_seconds(name: str, policy_name: str = "GLM-TSL", cache_dir: str = "") -> dict[str, float]:
    """``Agent.load`` from a checkpoint and its decision log + the first ``decide`` for program ``name``, in a fresh
    Python process.

    A first fresh process makes the agent on the arm set :func:`first_decision_seconds` uses (K = 20, d = 3)
    with a decision log, plays ``RESTART_ROUNDS[0]`` decisions, each rewarded at once, saves a
    checkpoint, plays ``RESTART_ROUNDS[1]`` more whose rewards arrive ``RESTART_PENDING`` decisions
    late (so that many are pending at the end), and closes the agent; every reward is drawn from
    the program here beforehand, for each round and arm. A second fresh process, timed, loads the
    checkpoint with the log, which replays the rows logged after it, and makes the first decision.

    ``cache_dir``: the persistent compilation cache of the restarted process (empty: none; the first
    process uses none), so a second call with the same folder restarts with the programs the first
    one stored. Both processes call :func:`bayesbandit.runtime.enable_fast_rng`. Returns the seconds
    of the load with its replay (``load_s``) and of the first decision (``decide_s``) and their sum
    (``restart_s``), the import time apart, where the time went (``trace_s``, ``lower_s``,
    ``xla_s`` over ``compilations`` programs, as :func:`first_decision_seconds`), and what the
    restarted agent holds before its first decision: ``updates``, ``pending`` decisions and
    ``decisions`` made.
    """
    env = bb.envs.ProgramBandit(model=LIKELIHOODS[name], K=20, d=3)
    instance = env.reset(jax.random.PRNGKey(0))
    everyone = jnp.arange(env.K)
    keys = jax.random.split(jax.random.PRNGKey(1), sum(RESTART_ROUNDS))
    rewards = jax.vmap(lambda key: env.pull(instance, everyone, key)[0])(keys)  # (round, arm)
    with tempfile.TemporaryDirectory() as folder:
        np.save(os.path.join(folder, "arms.npy"), np.asarray(instance.arms))
        np.save(os.path.join(folder, "rewards.npy"), np.asarray(rewards, dtype=np.float64))
        played = [str(n) for n in (*RESTART_ROUNDS, RESTART_PENDING)]
        setup = [sys.executable, "-c", RESTART_SETUP, name, policy_name, folder, *played]
        subprocess.run(setup, env=_child_env(), capture_output=True, text=True, timeout=600, check=True)
        restart = [sys.executable, "-c", RESTART, name, policy_name, cache_dir, folder]
        out = subprocess.run(restart, env=_child_env(), capture_output=True, text=True, timeout=600, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def nuts_comparison(name: str, *, n: int = 200, seed: int = 0, quick: bool = False) -> dict[str, Any]:
    """FPL and Laplace against NUTS on ``n`` rows drawn from program ``name`` at a prior draw
    (:func:`posterior_quality`), or ``refused``."""
    model = LIKELIHOODS[name]
    env = bb.envs.ProgramBandit(model=model, K=n, d=3)
    try:
        instance = env.reset(jax.random.PRNGKey(seed))
        x = np.asarray(instance.arms)
        y = np.asarray(env.bound.sample_rewards(instance.theta, x, jax.random.PRNGKey(seed + 1)), dtype=float)
        return posterior_quality(model, x, y, seed=seed, quick=quick)
    except BayesBanditError as exc:
        return {"refused": f"{type(exc).__name__}: {exc}"}


def posterior_quality(
    model: Any, x: np.ndarray, y: np.ndarray, *, seed: int = 0, quick: bool = False
) -> dict[str, Any]:
    """How close GLM-FPL's ensemble and the Laplace fit are to NUTS on the rows ``(x, y)``, and the k-hat check.

    Returns the range over parameters of the standard-deviation ratios (method / NUTS), the Laplace
    fit's KL from NUTS and the NUTS mass its 90% intervals hold (:func:`bayesbandit.diagnostics.compare`),
    its Pareto ``k_hat`` (:func:`bayesbandit.inference.laplace_psis`, no NUTS needed), the perturbation
    GLM-FPL uses and the share of converged FPL members.
    """
    from bayesbandit.diagnostics import compare

    draws = dict(num_draws=200, num_warmup=200, num_chains=2) if quick else dict(num_draws=500, num_warmup=500)
    comparison = compare(model, x, y, seed=seed, **draws)
    bound = bb.bind(model, x[:1])
    rows = (x, y, np.ones(len(y)))
    check = bb.inference.laplace_psis(jax.random.PRNGKey(seed), bound, rows, bb.laplace(bound, x, y))
    table = comparison.table
    fpl = comparison.idata["fpl"].attrs
    return {
        "refused": "",
        "perturbation": resolve_perturbation(bound, "auto", "GLMFPL"),
        "fpl_sd_ratio": (float(table.loc["fpl", "sd_ratio_min"]), float(table.loc["fpl", "sd_ratio_max"])),
        "laplace_sd_ratio": (float(table.loc["laplace", "sd_ratio_min"]), float(table.loc["laplace", "sd_ratio_max"])),
        "laplace_kl": float(table.loc["laplace", "kl"]),
        "laplace_coverage": float(table.loc["laplace", "coverage90"]),
        "k_hat": float(check.k_hat),
        "fpl_converged": fpl["num_converged"] / fpl["num_fits"],
    }


def posterior_table(rows: dict[str, dict[str, Any]], what: str) -> list[str]:
    """Markdown lines of :func:`posterior_quality`'s results, one row per program (``what``: the first column)."""
    lines = [
        f"| {what} | FPL perturbs | FPL sd / NUTS sd | Laplace sd / NUTS sd | Laplace KL | Laplace 90% coverage "
        "| k-hat | FPL members converged |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, row in rows.items():
        if row["refused"]:
            lines.append(f"| {name} | refused | | | | | | |")
            continue
        lo, hi = row["fpl_sd_ratio"]
        llo, lhi = row["laplace_sd_ratio"]
        lines.append(
            f"| {name} | {row['perturbation']} | {lo:.2f} - {hi:.2f} | {llo:.2f} - {lhi:.2f} | "
            f"{row['laplace_kl']:.3g} | {row['laplace_coverage']:.2f} | {row['k_hat']:.2f} | {row['fpl_converged']:.0%} |"
        )
    return lines


def matrix(
    names: Sequence[str], policies: Sequence[str], *, horizon: int, runs: int, seed: int, progress: bool = False
) -> xr.Dataset:
    """The matrix as a Dataset over ``(likelihood, policy)``: ratios, convergence, learns, refusal messages."""
    cells = {}
    for name in names:
        for policy_name in policies:
            cells[name, policy_name] = play(name, policy_name, horizon=horizon, runs=runs, seed=seed)
            if progress:
                print(f"{name:>18} {policy_name:<16} {_verdict(cells[name, policy_name])}", flush=True)

    def grid(field: str, fill: Any, dtype: Any) -> np.ndarray:
        return np.array([[cells[n, p].get(field, fill) for p in policies] for n in names], dtype=dtype)

    dims = ("likelihood", "policy")
    return xr.Dataset(
        {
            "regret_ratio": (dims, grid("regret_ratio", np.nan, float)),
            "late_ratio": (dims, grid("late_ratio", np.nan, float)),
            "converged": (dims, grid("converged", np.nan, float)),
            "learns": (dims, grid("learns", False, bool)),
            "refused": (dims, grid("refused", "", object).astype(str)),
        },
        coords={"likelihood": list(names), "policy": list(policies)},
        attrs={"horizon": horizon, "runs": runs, "seed": seed, "learns_below": LEARNS_BELOW},
    )


def _verdict(cell: dict[str, Any]) -> str:
    if cell["refused"]:
        return "refused"
    word = "learns" if cell["learns"] else "DOES NOT LEARN"
    return f"{word}: regret/uniform {cell['regret_ratio']:.2f}, late {cell['late_ratio']:.2f}, converged {cell['converged']:.1%}"


def _markdown(ds: xr.Dataset, first: dict[str, dict[str, float]], nuts: dict[str, dict[str, Any]]) -> str:
    lines = [
        f"Likelihood matrix: {ds.attrs['runs']} runs x {ds.attrs['horizon']} rounds, K = 20 arms, d = 3, seed "
        f"{ds.attrs['seed']}; learns: regret per round over the last quarter below {LEARNS_BELOW} x uniform play's.",
        "",
        "| likelihood | policy | verdict | regret / uniform | late / uniform | converged | first decision (s) |",
        "|---|---|---|---|---|---|---|",
    ]
    for name in ds.likelihood.values:
        for policy in ds.policy.values:
            cell = ds.sel(likelihood=name, policy=policy)
            seconds = first.get(str(name), {}).get(str(policy))
            timing = f"{seconds:.1f}" if seconds is not None else ""
            if str(cell.refused.values):
                reason = str(cell.refused.values).split(": ", 1)[-1].replace("|", "/").replace("\n", " ")
                lines.append(f"| {name} | {policy} | refused: {reason} | | | | |")
                continue
            verdict = "learns" if bool(cell.learns) else "does not learn"
            lines.append(
                f"| {name} | {policy} | {verdict} | {float(cell.regret_ratio):.3f} | {float(cell.late_ratio):.3f} | "
                f"{float(cell.converged):.1%} | {timing} |"
            )
    if nuts:
        lines += [
            "",
            "GLM-FPL's ensemble and Laplace against NUTS (200 rows drawn from each program at a prior draw): range "
            "over parameters of the standard-deviation ratio method / NUTS; the Laplace fit's KL from NUTS, the NUTS "
            "mass its 90% intervals hold, and its Pareto k-hat (no NUTS needed: above 0.7 poor).",
            "",
            *posterior_table(nuts, "likelihood"),
        ]
    return "\n".join(lines) + "\n"


def _plot(ds: xr.Dataset, path: pathlib.Path) -> None:
    fig, ax = plt.subplots(figsize=(9, 0.35 * ds.sizes["likelihood"] + 1.5))
    names = [str(n) for n in ds.likelihood.values]
    y = np.arange(len(names))
    width = 0.8 / ds.sizes["policy"]
    for j, policy in enumerate(ds.policy.values):
        values = ds.late_ratio.sel(policy=policy).values
        bars = ax.barh(y + j * width, np.nan_to_num(values, nan=0.0), height=width, label=str(policy))
        refused = np.isnan(values)
        ax.plot(np.zeros(refused.sum()), (y + j * width)[refused], "x", color=bars.patches[0].get_facecolor(), ms=5)
    ax.plot([], [], "xk", ms=5, label="refused (x)")
    ax.axvline(LEARNS_BELOW, color="k", ls="--", lw=1, label=f"learns below {LEARNS_BELOW}")
    ax.set_yticks(y + 0.4 - width / 2, names)
    ax.invert_yaxis()
    ax.set_xlabel("regret per round over the last quarter / uniform play's")
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def run(
    out_dir: str | pathlib.Path,
    *,
    quick: bool = False,
    runs: int | None = None,
    horizon: int | None = None,
    seed: int = 0,
    progress: bool = False,
) -> dict[str, pathlib.Path]:
    """Run the matrix (module docstring): 4 runs (``runs``, at least 4) x 300 rounds. Quick: the programs of
    ``QUICK`` under GLM-TSL and GLM-FPL for 100 rounds, no timing in fresh processes, a short NUTS."""
    bb.runtime.enable_x64()
    bb.runtime.enable_fast_rng()
    out = pathlib.Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    horizon = horizon or (100 if quick else 300)
    names = list(QUICK if quick else LIKELIHOODS)
    policies = ["GLM-TSL", "GLM-FPL"] if quick else list(POLICIES)
    paths = {"table": out / "likelihoods.md", "results": out / "likelihoods.nc", "plot": out / "likelihoods.png"}
    ds = matrix(names, policies, horizon=horizon, runs=max(runs or 4, 4), seed=seed, progress=progress)
    ds.to_netcdf(paths["results"])
    _plot(ds, paths["plot"])
    first: dict[str, dict[str, float]] = {}
    if not quick:
        for name in names:
            for policy in ("GLM-TSL", "GLM-FPL"):
                if not str(ds.refused.sel(likelihood=name, policy=policy).values):
                    first.setdefault(name, {})[policy] = first_decision_seconds(name, policy)["first_decision_s"]
    paths["table"].write_text(_markdown(ds, first, {}))
    nuts = {name: nuts_comparison(name, seed=seed, quick=quick) for name in (QUICK_NUTS if quick else names)}
    paths["table"].write_text(_markdown(ds, first, nuts))
    return paths
