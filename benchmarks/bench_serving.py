"""Serving over HTTP: the example service ``examples/serve.py`` driven by 8 keep-alive clients.

For every ``--kind`` of the service (fixed: GLM-TSL over 20 fixed arms; contextual: GLM-TSL with a
row buffer, 20 x 5 arms per request; online: GLM-TSL with ``history="online"``; host: Sub-TS over
a catalogue of 200 items), with and without ``--propensity``, the script starts the service in a
fresh process and measures:

* ready s: from starting the process to its ``listening on ...`` line (imports, the agent, and
  ``Agent.warm_up``);
* decide latency, as the client sees it (request sent to response read; a connection's first
  request includes connecting), over every decision after ready: p50, p95, p99 and max, and the p99 and max of the first 50, sent by the 8 clients
  at once before any reward;
* the longest gap with no decision answered (from the first request on) and when it ended, decisions per second,
  and failures: responses other than 200, and requests that got no response (target 0);
* for the fixed and host kinds, the distinct actions among the first 20 decisions (their rewards
  have not arrived yet: the spread of the first exploration).

8 client threads, each over one keep-alive ``http.client.HTTPConnection``, send ``POST /decide``
(contextual kinds: a fresh 20 x 5 arm set from U[-1, 1] each); each decision's reward, Bernoulli
with mean ``sigmoid(x theta)`` for the chosen features ``x`` and a fixed true ``theta``, is sent
``POST /reward`` after a delay drawn from U[0, 2] s (a scheduler thread keeps them in a heap; two
sender threads send them when due, so rewards arrive out of order).

``--pythonpath DIR`` puts DIR first on the service's PYTHONPATH: the same script served by the
package installed at DIR (an earlier build, say), named ``--label`` in the results. The committed
``bench_serving_before.md`` was made so, from the package at 23469fb (an Agent without ``warm_up``),
with ``examples/serve.py`` as of 17c49b5, which called ``warm_up`` only where the package had it.

Usage, from the repository root:
``python -m benchmarks.bench_serving [--quick] [--decisions N] [--pythonpath DIR --label NAME]``.
Writes ``benchmarks/results/bench_serving[_<label>][_quick].md``.
"""

from __future__ import annotations

import argparse
import heapq
import http.client
import json
import os
import queue
import shlex
import signal
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np
from tqdm import tqdm

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if not __package__:
    sys.path.insert(0, ROOT)

from benchmarks._common import RESULTS, machine_info, md_table, write_results  # noqa: E402

SERVE = os.path.join(ROOT, "examples", "serve.py")
KINDS = ("fixed", "contextual", "online", "host")
CLIENTS, REWARD_SENDERS, FIRST, SPREAD = 8, 2, 50, 20
K, D, CATALOGUE_SIZE, FIRST_ID = 20, 5, 200, 1000  # as examples/serve.py has them
MAX_DELAY = 2.0  # seconds, the longest a reward waits
READY_TIMEOUT, REQUEST_TIMEOUT, STOP_TIMEOUT = 600.0, 120.0, 60.0
THETA = np.linspace(-1.0, 1.0, D)


def serve_module():
    """``examples/serve.py`` as a module: its arm set and catalogue are the service's (NumPy only)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("bayesbandit_serve_example", SERVE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Server:
    """``examples/serve.py`` in a child process: started, read until ready, stopped (SIGTERM, then SIGKILL)."""

    def __init__(
        self, kind: str, propensity: bool, seed: int, env: dict[str, str], folder: str, rows: int | None = None
    ) -> None:
        self.command = [sys.executable, SERVE, "--kind", kind, "--port", "0", "--seed", str(seed)]
        self.command += ["--propensity"] if propensity else []
        self.command += ["--rows", str(rows)] if rows else []
        self.stderr_path = os.path.join(folder, f"{kind}-{int(propensity)}.stderr")
        self.stderr = open(self.stderr_path, "wb")  # a file, not a pipe: a full pipe would block the service
        started = time.monotonic()
        self.process = subprocess.Popen(self.command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=self.stderr)
        lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=lambda: lines.put(self.process.stdout.readline()), daemon=True).start()
        try:
            line = lines.get(timeout=READY_TIMEOUT).decode().strip()
        except queue.Empty:
            line = ""
        self.ready_s = time.monotonic() - started
        if not line.startswith("listening on http://"):
            self.stop()
            raise RuntimeError(f"{shlex.join(self.command)} did not get ready: {line!r}\n{self.tail()}")
        self.host, port = line.removeprefix("listening on http://").rsplit(":", 1)
        self.port = int(port)
        self.exit_code: int | None = None

    def tail(self, lines: int = 30) -> str:
        with open(self.stderr_path, "rb") as f:
            return b"".join(f.readlines()[-lines:]).decode(errors="replace")

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=STOP_TIMEOUT)
        self.stderr.close()
        self.exit_code = self.process.returncode
        return self.exit_code


class Client:
    """One keep-alive connection; ``post`` returns ``(status, JSON body or None)``, never raises."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.connection: http.client.HTTPConnection | None = None

    def post(self, path: str, body: dict) -> tuple[int, dict | None, str]:
        data = json.dumps(body).encode()
        try:
            if self.connection is None:
                self.connection = http.client.HTTPConnection(
                    self.server.host, self.server.port, timeout=REQUEST_TIMEOUT
                )
            self.connection.request("POST", path, data, {"Content-Type": "application/json"})
            response = self.connection.getresponse()
            raw = response.read()
            return response.status, json.loads(raw) if response.status == 200 else None, raw.decode(errors="replace")
        except (OSError, http.client.HTTPException, ValueError) as exc:
            self.close()  # a fresh connection for the next request
            return 0, None, f"{type(exc).__name__}: {exc}"

    def close(self) -> None:
        if self.connection is not None:
            self.connection.close()
            self.connection = None


class Rewards:
    """Rewards due at given times: a heap, a scheduler thread that hands due ones to sender threads."""

    def __init__(self, server: Server) -> None:
        self.heap: list[tuple[float, int, str, float]] = []
        self.condition = threading.Condition()
        self.due: queue.Queue[tuple[str, float] | None] = queue.Queue()
        self.closed = False
        self.sent = 0
        self.failures: list[str] = []
        self.latencies: list[float] = []
        self.lock = threading.Lock()
        self.threads = [threading.Thread(target=self._schedule, daemon=True)]
        self.threads += [
            threading.Thread(target=self._send, args=(Client(server),), daemon=True) for _ in range(REWARD_SENDERS)
        ]
        for thread in self.threads:
            thread.start()

    def add(self, at: float, order: int, decision_id: str, reward: float) -> None:
        with self.condition:
            heapq.heappush(self.heap, (at, order, decision_id, reward))
            self.condition.notify()

    def _schedule(self) -> None:
        while True:
            with self.condition:
                while not self.closed and (not self.heap or self.heap[0][0] > time.monotonic()):
                    wait = self.heap[0][0] - time.monotonic() if self.heap else None
                    self.condition.wait(timeout=wait)
                if not self.heap:  # closed, and nothing left
                    break
                _, _, decision_id, reward = heapq.heappop(self.heap)
            self.due.put((decision_id, reward))
        for _ in range(REWARD_SENDERS):
            self.due.put(None)

    def _send(self, client: Client) -> None:
        while (item := self.due.get()) is not None:
            decision_id, reward = item
            start = time.perf_counter()
            status, _, text = client.post("/reward", {"id": decision_id, "reward": reward})
            elapsed = time.perf_counter() - start
            with self.lock:
                self.sent += 1
                self.latencies.append(elapsed)
                if status != 200:
                    self.failures.append(f"/reward {status}: {text[:300]}")
        client.close()

    def finish(self, timeout: float) -> bool:
        """Send whatever is left as it falls due, and wait for the senders; False if they did not finish."""
        with self.condition:
            self.closed = True
            self.condition.notify()
        deadline = time.monotonic() + timeout
        for thread in self.threads:
            thread.join(timeout=max(0.0, deadline - time.monotonic()))
        return not any(thread.is_alive() for thread in self.threads)


def drive(server: Server, kind: str, decisions: int, seed: int, features) -> dict:
    """Send ``decisions`` decisions from 8 client threads, and their rewards; returns the measurements."""
    latency = np.full(decisions, np.nan)
    answered = np.full(decisions, np.nan)  # seconds since the first request
    actions: list = [None] * decisions
    failures: list[str] = []
    rewards = Rewards(server)
    counter = iter(range(decisions))
    lock = threading.Lock()
    start = time.monotonic()

    def client_thread(index: int) -> None:
        rng = np.random.default_rng([seed, 7, index])
        client = Client(server)
        while True:
            with lock:
                i = next(counter, None)
            if i is None:
                break
            arms = rng.uniform(-1.0, 1.0, (K, D)) if kind in ("contextual", "online") else None
            body = {} if arms is None else {"arms": arms.tolist()}
            sent = time.perf_counter()
            status, reply, text = client.post("/decide", body)
            latency[i] = time.perf_counter() - sent
            answered[i] = time.monotonic() - start
            if status != 200:
                with lock:
                    failures.append(f"/decide {status}: {text[:300]}")
                continue
            action = reply["action"]
            actions[i] = action
            x = arms[action] if arms is not None else features(action)
            reward = float(rng.random() < 1.0 / (1.0 + np.exp(-x @ THETA)))
            rewards.add(time.monotonic() + rng.uniform(0.0, MAX_DELAY), i, reply["id"], reward)
        client.close()

    threads = [threading.Thread(target=client_thread, args=(c,), daemon=True) for c in range(CLIENTS)]
    for thread in threads:
        thread.start()
    deadline = start + max(600.0, 0.5 * decisions)
    with tqdm(total=decisions, desc=f"{kind}", unit="dec", file=sys.stderr, leave=False) as bar:
        while any(thread.is_alive() for thread in threads) and time.monotonic() < deadline:
            threads[0].join(timeout=0.5)
            bar.update(int(np.sum(~np.isnan(answered))) - bar.n)
    if any(thread.is_alive() for thread in threads):
        failures.append(f"the clients did not finish within {deadline - start:.0f} s")
    elapsed = time.monotonic() - start
    if not rewards.finish(timeout=MAX_DELAY + 300.0):
        failures.append("the rewards were not all sent within 300 s of the last decision")
    done = ~np.isnan(latency)
    times = np.sort(np.concatenate([[0.0], answered[done]]))
    first = latency[:FIRST][done[:FIRST]]
    spread = [a for a in actions[:SPREAD] if a is not None]
    return {
        "latency_ms": 1e3 * latency[done],
        "first_ms": 1e3 * first,
        "gap_s": float(np.max(np.diff(times))) if len(times) > 1 else float("nan"),
        "gap_end_s": float(times[1:][np.argmax(np.diff(times))]) if len(times) > 1 else float("nan"),
        "decisions": int(done.sum()),
        "per_s": int(done.sum()) / elapsed,
        "spread": len({json.dumps(a) for a in spread}) if kind in ("fixed", "host") else None,
        "failures": failures + rewards.failures,
        "rewards": rewards.sent,
        "reward_ms": 1e3 * np.asarray(rewards.latencies),
    }


def server_package(env: dict[str, str]) -> str:
    """Where the service's ``bayesbandit`` comes from, and whether its Agent has ``warm_up``."""
    code = "import bayesbandit as bb; print(bb.__file__, bb.__version__, hasattr(bb.Agent, 'warm_up'))"
    # run as the service is (a script: its own folder first on sys.path, not the working directory)
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=os.path.dirname(SERVE),
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    ).stdout.split()
    return f"`{os.path.dirname(out[0])}` (version {out[1]}; `Agent.warm_up`: {'yes' if out[2] == 'True' else 'no'})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="500 decisions per configuration")
    parser.add_argument("--decisions", type=int, default=None, help="decisions per configuration (default 10,000)")
    parser.add_argument("--kinds", nargs="+", choices=KINDS, default=list(KINDS))
    parser.add_argument("--pythonpath", default=None, help="put this folder first on the service's PYTHONPATH")
    parser.add_argument("--label", default=None, help="names the package served (default: the working tree)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--warm-rows",
        action="store_true",
        help="the contextual service compiles its row buffer's sizes up to the decisions at start (serve.py --rows)",
    )
    parser.add_argument("--out-dir", default=RESULTS)
    args = parser.parse_args(argv)
    decisions = args.decisions or (500 if args.quick else 10_000)
    env = dict(os.environ)
    if args.pythonpath:
        env["PYTHONPATH"] = os.pathsep.join([os.path.abspath(args.pythonpath), *filter(None, [env.get("PYTHONPATH")])])
    label = args.label or ("working tree" if not args.pythonpath else args.pythonpath)
    command = shlex.join(["python", "-m", "benchmarks.bench_serving", *(sys.argv[1:] if argv is None else argv)])
    commit = (
        subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, timeout=30
        ).stdout.strip()
        or "unknown"
    )
    machine = machine_info()  # the date and load average at the start
    package = server_package(env)
    example = serve_module()
    arm_set = example.fixed_arms(args.seed)
    ids, item_features = example.catalogue(args.seed)
    assert (example.K, example.D, len(ids), int(ids[0])) == (K, D, CATALOGUE_SIZE, FIRST_ID)
    features = {"fixed": lambda a: arm_set[a], "host": lambda a: item_features[a - FIRST_ID]}

    rows, problems = [], []
    configurations = [(kind, propensity) for kind in args.kinds for propensity in (False, True)]
    with tempfile.TemporaryDirectory(prefix="bench-serving-") as folder:
        for kind, propensity in tqdm(configurations, desc="configurations", file=sys.stderr):
            buffer_rows = decisions if args.warm_rows and kind == "contextual" else None
            server = Server(kind, propensity, args.seed, env, folder, buffer_rows)
            try:
                result = drive(server, kind, decisions, args.seed, features.get(kind))
            finally:
                exit_code = server.stop()
            if exit_code != 0:
                result["failures"].append(f"the service exited with {exit_code} on SIGTERM")
            if result["failures"]:
                problems.append((kind, propensity, result["failures"], server.tail()))
            lat, first = result["latency_ms"], result["first_ms"]
            pct = np.percentile(lat, [50, 95, 99]) if len(lat) else [np.nan] * 3
            row = [
                kind,
                "yes" if propensity else "no",
                f"{server.ready_s:.1f}",
                *(f"{v:.1f}" for v in pct),
                f"{np.max(lat):.0f}" if len(lat) else "n/a",
                f"{np.percentile(first, 99):.0f}" if len(first) else "n/a",
                f"{np.max(first):.0f}" if len(first) else "n/a",
                f"{result['gap_s']:.2f}",
                f"{result['gap_end_s']:.1f}",
                f"{result['decisions']:,}",
                f"{result['per_s']:,.0f}",
                f"{np.percentile(result['reward_ms'], 99):.1f}" if len(result["reward_ms"]) else "n/a",
                "—" if result["spread"] is None else f"{result['spread']} of {SPREAD}",
                len(result["failures"]),
            ]
            rows.append(row)
            print(" | ".join(str(c) for c in row), file=sys.stderr, flush=True)
    header = [
        "kind",
        "propensity",
        "ready s",
        "decide p50 ms",
        "p95 ms",
        "p99 ms",
        "max ms",
        f"first {FIRST}: p99 ms",
        f"first {FIRST}: max ms",
        "longest gap s",
        "gap ended at s",
        "decisions",
        "decisions / s",
        "reward p99 ms",
        f"distinct actions, first {SPREAD}",
        "failures",
    ]
    sections = [
        f"# Serving over HTTP: `examples/serve.py`, {label}",
        f"- command: `{command}`\n- commit: {commit}\n- served package: {package}\n{machine}",
        f"{decisions:,} decisions per configuration from {CLIENTS} client threads over keep-alive connections; "
        f"each reward sent U[0, {MAX_DELAY:g}] s after its decision ({REWARD_SENDERS} sender threads). Ready: "
        "process start to the `listening` line. Latencies as the client sees them (a connection's first request "
        f"includes connecting), over every decision after ready; the first {FIRST} are those sent first, by all clients at once. Longest gap: the longest time, "
        "from the first request on, with no decision answered, and when it ended (seconds after the first "
        f"request). Distinct actions: among the first {SPREAD} decisions (fixed arm set and catalogue only). "
        "Failures: responses other than 200 and requests without a response, decisions and rewards, plus a "
        "non-zero exit on SIGTERM (`benchmarks/bench_serving.py`).",
        md_table(header, rows),
    ]
    for kind, propensity, failures, tail in problems:
        shown = "\n".join(failures[:5]) + (f"\n... {len(failures) - 5} more" if len(failures) > 5 else "")
        sections.append(f"Failures, {kind}, propensity {propensity}:\n\n```\n{shown}\n--- service stderr:\n{tail}```")
    text = "\n\n".join(sections)
    name = "bench_serving" + (f"_{args.label}" if args.label else "")
    print(write_results(name, args.quick, text, args.out_dir))
    print(text)
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
