"""``simulate`` and ``bai.replicate`` as one job of two processes (``bb.sharding.initialize``) play exactly
the runs one process plays, and ``initialize`` refuses bad arguments."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import textwrap

import jax
import numpy as np
import pytest
from _fresh import HOST_DEVICES_FLAG, LOOP_EMITTER_FLAG, SUITE, TESTS
from bayesbandit.models import logistic

import bayesbandit as bb
from bayesbandit import bai
from bayesbandit.errors import ConfigurationError, InvalidInput

PROCESSES = 2
LIMIT = 150  # seconds for a process of the job: importing, joining, compiling and playing take about 20

# One process of the job: joins it, plays the same runs as ``reference`` and saves them. Then both
# processes call ``simulate`` with their own seed, which must raise in both (the keys disagree).
PROCESS = textwrap.dedent(
    """
    import sys
    import numpy as np
    import bayesbandit as bb

    {prelude}
    tests, port, index, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    bb.sharding.initialize(f"127.0.0.1:{{port}}", {processes}, index, initialization_timeout=60, heartbeat_timeout=10)
    import jax

    sys.path.insert(0, tests)
    from test_distributed import reference

    arrays = reference()
    try:
        bb.simulate({{"lints": bb.LinTS(v=0.5)}}, bb.envs.LogisticBandit(K=8, d=3), 5, runs=2, seed=index)
    except bb.errors.ConfigurationError as error:
        arrays["mismatch"] = np.array(str(error))
    np.savez(out, processes=jax.process_count(), devices=len(jax.devices()), **arrays)
    """
)


def reference() -> dict[str, np.ndarray]:
    """Runs of two compiled policies (5 runs: padded on two devices) and of two BAI algorithms (9 replications in
    batches of 4: the last padded)."""
    sim = bb.simulate(
        {"tsl": bb.GLMTSL(logistic(), a=1.0), "lints": bb.LinTS(v=0.5)},
        bb.envs.LogisticBandit(K=8, d=3),
        40,
        runs=5,
        seed=3,
        num_chunks=4,
    )
    bai_ds = bai.replicate(
        {"gse": bai.GSE(), "bayesgap": bai.BayesGap()},
        bai.AdaptiveInstance(K=6, omega=0.2),
        budget=60,
        replications=9,
        batch_size=4,
    )
    return {
        **{f"sim_{var}": sim[var].values for var in ("action", "regret", "reward", "not_converged")},
        **{f"bai_{var}": bai_ds[var].values for var in ("arm", "correct", "pulls")},
    }


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _environment() -> dict[str, str]:
    """One CPU device per process, XLA's fusion emitters (as the 'one_device' child of ``tests/_fresh.py``)."""
    env = {**os.environ, "JAX_PLATFORMS": "cpu", "JAX_NUM_CPU_DEVICES": "1"}
    flags = env.get("XLA_FLAGS", "").split()
    env["XLA_FLAGS"] = " ".join(f for f in flags if f != LOOP_EMITTER_FLAG and not f.startswith(HOST_DEVICES_FLAG))
    return env


def test_two_processes_give_the_one_process_results(fresh_process, tmp_path):
    """Both processes of a two-process job return the one-process runs bit for bit, each seeing 2 processes and
    2 devices; different seeds in the two processes raise ConfigurationError in both."""
    fresh_process.start("one_device")  # the reference plays beside the job
    script = tmp_path / "process.py"
    script.write_text(PROCESS.format(prelude=SUITE, processes=PROCESSES))
    port, env = _free_port(), _environment()
    procs = []
    for index in range(PROCESSES):
        log = open(tmp_path / f"log{index}.txt", "w")  # noqa: SIM115 (closed below)
        command = [sys.executable, str(script), str(TESTS), str(port), str(index), str(tmp_path / f"out{index}.npz")]
        procs.append((subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env), log))
    codes = []
    for proc, log in procs:
        try:
            codes.append(proc.wait(timeout=LIMIT))
        except subprocess.TimeoutExpired:
            proc.kill()
            codes.append(proc.wait())
        log.close()
    logs = "\n".join((tmp_path / f"log{index}.txt").read_text()[-3000:] for index in range(PROCESSES))
    assert codes == [0] * PROCESSES, logs

    one = fresh_process.result("one_device", "test_distributed.py:reference")
    for index in range(PROCESSES):
        with np.load(tmp_path / f"out{index}.npz") as saved:
            job = dict(saved)
        assert int(job.pop("processes")) == PROCESSES and int(job.pop("devices")) == PROCESSES
        assert "other keys" in str(job.pop("mismatch"))
        assert job.keys() == one.keys()
        for name in one:
            np.testing.assert_array_equal(job[name], one[name], err_msg=f"process {index}: {name}")


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        (("127.0.0.1", 2, 0), "coordinator_address"),
        (("127.0.0.1:0", 2, 0), "coordinator_address"),
        (("127.0.0.1:70000", 2, 0), "coordinator_address"),
        ((":1234", 2, 0), "coordinator_address"),
        ((1234, 2, 0), "coordinator_address"),
        (("127.0.0.1:1234", 0, 0), "num_processes"),
        (("127.0.0.1:1234", 2.0, 0), "num_processes"),
        (("127.0.0.1:1234", 2, 2), "process_id"),
        (("127.0.0.1:1234", 2, -1), "process_id"),
        (("127.0.0.1:1234", True, 0), "num_processes"),
    ],
)
def test_initialize_refuses_bad_arguments(arguments, named):
    with pytest.raises(InvalidInput, match=rf"'{named}'.*Got .*Fix: "):
        bb.sharding.initialize(*arguments)
    assert not jax.distributed.is_initialized()


@pytest.mark.parametrize("timeout", ["initialization_timeout", "heartbeat_timeout"])
def test_initialize_refuses_bad_timeouts(timeout):
    with pytest.raises(InvalidInput, match=rf"'{timeout}'.*Got 0 .*Fix: "):
        bb.sharding.initialize("127.0.0.1:1234", 2, 0, **{timeout: 0})
    assert not jax.distributed.is_initialized()


def test_initialize_after_a_computation_is_a_configuration_error():
    jax.devices()  # the backend exists
    with pytest.raises(ConfigurationError, match="before any JAX computation"):
        bb.sharding.initialize("127.0.0.1:1234", 2, 1, initialization_timeout=1)
    assert not jax.distributed.is_initialized()
