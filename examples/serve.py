"""A small HTTP service around one ``bayesbandit.Agent``, on the standard library only.

Endpoints (JSON in, JSON out):

* ``POST /decide`` with ``{"arms": [[...], ...]}`` (a contextual agent: this request's arms, K x d)
  or ``{}`` (a fixed arm set, or a catalogue) -> ``{"id": ..., "action": ..., "propensity": ...}``;
  ``propensity`` is null unless the service runs with ``--propensity``.
* ``POST /reward`` with ``{"id": ..., "reward": ...}`` -> ``{"id": ...}``: the reward of that
  decision, in any order and after any delay.
* ``GET /health`` -> 200 once the agent is ready (created, loaded and compiled), 503 before.

A bad request gets 400 with the agent's message (it names the argument and the fix), an unknown
or expired decision 404, a second reward for a decision 409; the agent is unchanged by any of them.

Usage, from the repository root::

    python examples/serve.py --kind contextual --propensity --port 8000
    curl -s -X POST localhost:8000/decide -d '{"arms": [[0.1, 0.2, 0.3, 0.4, 0.5], [1, 0, 0, 0, 0]]}'
    curl -s -X POST localhost:8000/reward -d '{"id": "<the id above>", "reward": 1}'

``--checkpoint PATH`` loads the agent from PATH when it exists (replaying ``--log`` after it) and
saves it there on SIGTERM or Ctrl-C. Once ready the service prints one line,
``listening on http://HOST:PORT``, to stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import sys
import threading
import traceback
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
from bayesbandit.models import logistic

import bayesbandit as bb
from bayesbandit.errors import DecisionAlreadyRewarded, InvalidInput, UnknownDecision

K, D = 20, 5  # arms in the fixed set (and per contextual request, which warm_up compiles for), features per arm
CATALOGUE_SIZE, FIRST_ID = 200, 1000  # the host kind's catalogue: item ids 1000 .. 1199
MAX_BODY = 1 << 20  # bytes


def fixed_arms(seed: int) -> np.ndarray:
    """The fixed kind's arm set: K x D features from U[-1, 1]."""
    return np.random.default_rng([seed, 1]).uniform(-1.0, 1.0, (K, D))


def catalogue(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The host kind's catalogue: item ids and their features from U[-1, 1]."""
    features = np.random.default_rng([seed, 2]).uniform(-1.0, 1.0, (CATALOGUE_SIZE, D))
    return np.arange(FIRST_ID, FIRST_ID + CATALOGUE_SIZE), features


def make_policy(kind: str):
    if kind == "online":
        return bb.GLMTSL(logistic(), history="online")
    if kind == "host":
        return bb.SubTS(index="exact")  # a host policy: bb.contract.policy_kind(...) == "host"
    return bb.GLMTSL(logistic())  # fixed and contextual: the posterior refitted on the whole history


def make_agent(args: argparse.Namespace) -> bb.Agent:
    """A new agent of ``--kind``, or the one saved at ``--checkpoint`` (with ``--log`` replayed after it)."""
    policy = make_policy(args.kind)
    arms = fixed_arms(args.seed) if args.kind == "fixed" else None
    if args.checkpoint and os.path.exists(args.checkpoint):
        return bb.Agent.load(args.checkpoint, policy, arms=arms, log=args.log)
    if args.kind == "fixed":
        return bb.Agent(policy, arms=arms, seed=args.seed, log=args.log)
    if args.kind == "host":
        return bb.Agent(policy, bb.Catalogue(*catalogue(args.seed)), seed=args.seed, log=args.log)
    return bb.Agent(policy, d=D, seed=args.seed, log=args.log)


class Service:
    """The agent, once it is ready, and how a request maps onto it."""

    def __init__(self, propensity: bool) -> None:
        self.agent: bb.Agent | None = None
        self.propensity = propensity
        self.ready = threading.Event()

    def decide(self, body: dict) -> dict:
        arms = body.get("arms")
        decision = self.agent.decide(None if arms is None else np.asarray(arms), propensity=self.propensity)
        return {"id": decision.id, "action": np.asarray(decision.action).tolist(), "propensity": decision.propensity}

    def reward(self, body: dict) -> dict:
        if not isinstance(body.get("id"), str) or "reward" not in body:
            raise InvalidInput('POST /reward takes {"id": "<a decision id from /decide>", "reward": <a number>}.')
        self.agent.update(body["id"], body["reward"])
        return {"id": body["id"]}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: a client sends many requests over one connection
    service: Service  # set on a subclass by serve()

    def setup(self) -> None:
        super().setup()
        # Send each response at once. With Nagle's algorithm on, a response written in two parts
        # (headers, then body) waits for the client's ACK of the first part, which a client with
        # delayed ACKs holds back for up to ~40 ms: ~40 ms added to every keep-alive response.
        self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def do_GET(self) -> None:
        if self.path != "/health":
            self.reply(404, {"error": f"no such endpoint: GET {self.path}"})
        elif self.service.ready.is_set():
            self.reply(200, {"status": "ready"})
        else:
            self.reply(503, {"status": "starting"})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY:
            self.close_connection = True  # the body is not read
            self.reply(413, {"error": f"the request body is over {MAX_BODY} bytes"})
            return
        raw = self.rfile.read(length)
        endpoint = {"/decide": self.service.decide, "/reward": self.service.reward}.get(self.path)
        if endpoint is None:
            self.reply(404, {"error": f"no such endpoint: POST {self.path}"})
            return
        if not self.service.ready.is_set():
            self.reply(503, {"error": "the agent is not ready yet; GET /health says when it is"})
            return
        try:
            body = json.loads(raw or b"{}")
            if not isinstance(body, dict):
                raise InvalidInput(f"the request body must be a JSON object; got {type(body).__name__}.")
            self.reply(200, endpoint(body))
        except json.JSONDecodeError as exc:
            self.reply(400, {"error": f"the request body is not JSON: {exc}"})
        except DecisionAlreadyRewarded as exc:  # before InvalidInput, which it subclasses
            self.reply(409, {"error": str(exc)})
        except UnknownDecision as exc:  # and ExpiredDecision
            self.reply(404, {"error": str(exc)})
        except InvalidInput as exc:
            self.reply(400, {"error": str(exc)})
        except Exception as exc:  # noqa: BLE001  (the service keeps serving; the traceback goes to stderr)
            traceback.print_exc()
            self.reply(500, {"error": f"{type(exc).__name__}: {exc}"})

    def reply(self, status: int, payload: dict) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args) -> None:  # one line per request would cost more than it serves
        pass


class Server(ThreadingHTTPServer):
    daemon_threads = True  # an idle keep-alive connection does not hold up the exit
    # The listen backlog. With socketserver's default of 5, clients that connect at once while the
    # process is busy overflow it: the kernel drops their SYN and they retry a second later.
    request_queue_size = 128


def serve(args: argparse.Namespace) -> None:
    bb.runtime.enable_x64()  # before any array is made: the GLM policies' Newton solves need float64
    service = Service(args.propensity)
    handler = type("BoundHandler", (Handler,), {"service": service})
    server = Server((args.host, args.port), handler)
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    # Listen at once (GET /health answers 503 while the agent loads and compiles) in a thread, so
    # the main thread is free to wait for a signal and then call server.shutdown().
    threading.Thread(target=server.serve_forever, name="http", daemon=True).start()

    agent = make_agent(args)
    # compile every call the service will make, and wait: no request waits for XLA
    num_arms = K if args.kind in ("contextual", "online") else None
    agent.warm_up(num_arms=num_arms, propensity=args.propensity, rows=args.rows)
    service.agent = agent
    service.ready.set()
    host, port = server.server_address[:2]
    print(f"listening on http://{host}:{port}", flush=True)

    stop.wait()
    server.shutdown()
    server.server_close()
    if args.checkpoint:
        agent.save(args.checkpoint)  # commits the decision log up to the snapshot first
    agent.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--kind",
        choices=["fixed", "contextual", "online", "host"],
        default="contextual",
        help="fixed: GLM-TSL over a fixed set of 20 arms; contextual: GLM-TSL, each request's arms (d = 5); "
        "online: the same with history='online'; host: Sub-TS over a catalogue of 200 item ids (d = 5)",
    )
    parser.add_argument("--propensity", action="store_true", help="log each decision's propensity")
    parser.add_argument(
        "--rows", type=int, default=None, help="contextual kind: the rows it will learn from, compiled for at start"
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000, help="0: a free port (printed once ready)")
    parser.add_argument("--seed", type=int, default=0, help="the agent's seed and the fixed arm set's or catalogue's")
    parser.add_argument("--log", default=None, help="SQLite decision log")
    parser.add_argument("--checkpoint", default=None, help="load from it if it exists; save to it on shutdown")
    serve(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
