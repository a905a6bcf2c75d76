"""The example HTTP service, ``examples/serve.py``: run in a child process and used by a real HTTP client.

Decisions from 4 threads over keep-alive connections, each rewarded: every answer 200, ids unique,
propensities in (0, 1] when asked for; a bad request gets 400 with a message that names the
argument, an unknown decision 404, a second reward 409; the service exits cleanly on SIGTERM.
"""

from __future__ import annotations

import http.client
import json
import os
import queue
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

SERVE = Path(__file__).resolve().parents[1] / "examples" / "serve.py"
START_TIMEOUT, REQUEST_TIMEOUT = 120.0, 60.0
THREADS, PER_THREAD = 4, 8


class Service:
    """``examples/serve.py`` in a child process, with the parent's environment."""

    def __init__(self, tmp_path: Path, *args: str) -> None:
        self.stderr = open(tmp_path / "serve.stderr", "w+b")  # closed in stop
        command = [sys.executable, str(SERVE), "--port", "0", *args]
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=self.stderr, env=dict(os.environ))
        lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=lambda: lines.put(self.process.stdout.readline()), daemon=True).start()
        try:
            line = lines.get(timeout=START_TIMEOUT).decode()
        except queue.Empty:
            line = ""
        if not line.startswith("listening on http://127.0.0.1:"):
            self.stop()
            errors = self.errors()
            self.stderr.close()
            pytest.fail(f"the service did not start: {line!r}\n{errors}")
        self.port = int(line.strip().rsplit(":", 1)[1])

    def errors(self) -> str:
        if self.stderr.closed:
            return ""
        self.stderr.seek(0)
        return self.stderr.read().decode(errors="replace")

    def request(self, connection: http.client.HTTPConnection, method: str, path: str, body=None) -> tuple[int, dict]:
        data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
        connection.request(method, path, data, {"Content-Type": "application/json"})
        response = connection.getresponse()
        return response.status, json.loads(response.read())

    def connect(self) -> http.client.HTTPConnection:
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=REQUEST_TIMEOUT)

    def stop(self) -> int | None:
        """SIGTERM, and the exit code (None: it had to be killed)."""
        try:
            if self.process.poll() is None:
                self.process.send_signal(signal.SIGTERM)
                try:
                    self.process.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    self.process.kill()
                    self.process.wait(timeout=60)
                    return None
            return self.process.returncode
        finally:
            self.process.stdout.close()


@pytest.mark.timeout(240)
@pytest.mark.parametrize(
    ("args", "arms"),
    [
        (["--kind", "fixed"], None),
        (["--kind", "contextual", "--propensity"], [[0.1 * (i + j) - 0.5 for j in range(5)] for i in range(6)]),
    ],
    ids=["fixed", "contextual-propensity"],
)
def test_serve_example(tmp_path, args, arms):
    service = Service(tmp_path, *args, "--seed", "3")
    try:
        connection = service.connect()
        assert service.request(connection, "GET", "/health") == (200, {"status": "ready"})
        body = {} if arms is None else {"arms": arms}
        answers: list[tuple[int, dict]] = []
        failures: list[BaseException] = []

        def client() -> None:
            own = service.connect()  # one keep-alive connection per thread
            try:
                for _ in range(PER_THREAD):
                    status, decision = service.request(own, "POST", "/decide", body)
                    answers.append((status, decision))
                    if status == 200:
                        answers.append(service.request(own, "POST", "/reward", {"id": decision["id"], "reward": 1}))
            except BaseException as exc:  # noqa: BLE001  (reported by the test thread)
                failures.append(exc)
            finally:
                own.close()

        threads = [threading.Thread(target=client) for _ in range(THREADS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=REQUEST_TIMEOUT * PER_THREAD)
        assert not failures, failures
        assert len(answers) == 2 * THREADS * PER_THREAD, service.errors()
        assert all(status == 200 for status, _ in answers), [a for a in answers if a[0] != 200]
        decisions = [answer for _, answer in answers if "action" in answer]
        assert len({d["id"] for d in decisions}) == THREADS * PER_THREAD
        num_arms = 20 if arms is None else len(arms)
        assert all(0 <= d["action"] < num_arms for d in decisions)
        if "--propensity" in args:
            assert all(0 < d["propensity"] <= 1 for d in decisions)
        else:
            assert all(d["propensity"] is None for d in decisions)

        # Bad requests: the status and the agent's message, naming what was wrong; nothing changes.
        bad_arms = {"arms": [[1.0, 2.0]]} if arms is None else {}
        status, error = service.request(connection, "POST", "/decide", bad_arms)
        assert status == 400 and "arms" in error["error"], error
        status, error = service.request(connection, "POST", "/reward", {"id": decisions[0]["id"], "reward": 2.0})
        assert status == 409 and "rewarded already" in error["error"], error
        status, error = service.request(connection, "POST", "/reward", {"id": "never-made", "reward": 1.0})
        assert status == 404 and "never-made" in error["error"], error
        status, decision = service.request(connection, "POST", "/decide", body)
        status_bad, error = service.request(connection, "POST", "/reward", {"id": decision["id"], "reward": 2.0})
        assert status_bad == 400 and "reward" in error["error"], error
        assert service.request(connection, "POST", "/reward", {"id": decision["id"], "reward": 0})[0] == 200
        status, error = service.request(connection, "POST", "/decide", b"not json")
        assert status == 400 and "JSON" in error["error"], error
        connection.close()
    finally:
        code = service.stop()
        errors = service.errors()
        service.stderr.close()
    assert code == 0, errors
    assert "Traceback" not in errors, errors
