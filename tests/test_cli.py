"""The ``bayesbandit`` command, called in-process."""

import os

import pytest
import xarray as xr
from bayesbandit.experiments import EXPERIMENTS
from bayesbandit.experiments.cli import main


def test_list(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    for name in EXPERIMENTS:
        assert name in out
    assert "Kveton" in out


def test_unknown_experiment(capsys):
    assert main(["run", "no-such-experiment"]) == 2
    assert "unknown experiment" in capsys.readouterr().err


def test_run_glm_logistic_quick(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("BAYESBANDIT_JAX_CACHE", "")
    out_dir = tmp_path / "out"
    argv = ["run", "glm-logistic", "--quick", "--runs", "2", "--horizon", "200", "--out", str(out_dir), "--no-progress"]
    assert main(argv) == 0
    files = {p.name for p in out_dir.iterdir()}
    assert files == {"glm_logistic.png", "glm_logistic.nc", "glm_logistic.md", "parts"}
    assert len(list((out_dir / "parts" / "d5").glob("*.nc"))) == 8
    printed = capsys.readouterr().out
    assert str(out_dir / "glm_logistic.nc") in printed and "| policy |" in printed
    with xr.open_dataset(out_dir / "glm_logistic.nc") as ds:
        assert ds.sizes["policy"] == 8 and ds.sizes["run"] == 2
        assert ds.cumulative_regret.dims == ("d", "policy", "run", "round")
        assert int(ds["round"][-1]) == 199
        assert (ds.cumulative_regret.isel(round=-1) >= 0).all()
    table = (out_dir / "glm_logistic.md").read_text()
    for algo in ("GLM-TSL", "GLM-FPL", "GLM-UCB", "UCB-GLM"):
        assert f"{algo} (theory)" in table and f"{algo} (practical)" in table

    # A second run into the same folder reuses every stored part; other settings recompute them.
    import bayesbandit.experiments.glm_logistic as glm_logistic

    first = xr.load_dataset(out_dir / "glm_logistic.nc")
    (out_dir / "glm_logistic.nc").unlink()

    def must_not_run(*args, **kwargs):
        raise AssertionError("a stored part was run again")

    monkeypatch.setattr(glm_logistic, "run_part", must_not_run)
    assert main(argv) == 0
    xr.testing.assert_identical(xr.load_dataset(out_dir / "glm_logistic.nc"), first)
    with pytest.raises(AssertionError, match="run again"):
        main([*argv, "--seed", "1"])
    monkeypatch.setattr(glm_logistic, "FPL_THEORY_MAX_STEPS", 30)  # a policy's parameters changed
    with pytest.raises(AssertionError, match="run again"):
        main(argv)


def test_user_mistakes_get_a_message_not_a_traceback(tmp_path, capsys):
    a_file = tmp_path / "results.txt"
    a_file.write_text("")
    assert main(["run", "glm-logistic", "--quick", "--out", str(a_file), "--no-progress"]) == 2
    assert "it is a file, not a folder" in capsys.readouterr().err
    assert (
        main(["run", "glm-logistic", "--quick", "--horizon", "3", "--out", str(tmp_path / "o"), "--no-progress"]) == 2
    )
    assert "'horizon' parameter of glm-logistic" in capsys.readouterr().err


def test_run_deep_mnist_quick_for_chosen_policies(tmp_path, capsys, monkeypatch):
    pytest.importorskip("sklearn")
    monkeypatch.setenv("BAYESBANDIT_JAX_CACHE", "")
    out_dir = tmp_path / "deep"
    argv = ["run", "deep-mnist", "--quick", "--runs", "3", "--horizon", "80", "--out", str(out_dir), "--no-progress"]
    assert main([*argv, "--policies", "DeepFPL (relu),DeepFL"]) == 0
    with xr.open_dataset(out_dir / "results.nc") as ds:
        assert list(ds.policy.values) == ["DeepFPL (relu)", "DeepFL (relu)"] and ds.sizes["round"] == 80
        assert 0.25 <= float(ds.reward.mean()) <= 0.75
    summary = (out_dir / "summary.md").read_text()
    assert "| DeepFPL > DeepFL |" in summary and "repGLM" not in summary
    assert main([*argv, "--policies", "NoSuchPolicy"]) == 2
    assert "no policy matches" in capsys.readouterr().err
    assert main(["run", "glm-logistic", "--quick", "--out", str(tmp_path / "g"), "--policies", "GLM-TSL"]) == 2
    assert "drop --policies" in capsys.readouterr().err


def test_runs_are_split_over_one_host_device_per_core_unless_told(monkeypatch):
    from bayesbandit.experiments.cli import _use_host_devices

    monkeypatch.setenv("XLA_FLAGS", "--xla_cpu_enable_fast_math=false")
    _use_host_devices(4)
    assert os.environ["XLA_FLAGS"] == "--xla_cpu_enable_fast_math=false --xla_force_host_platform_device_count=4"
    _use_host_devices(2)  # a count already set is kept
    assert os.environ["XLA_FLAGS"].endswith("count=4")
    monkeypatch.delenv("XLA_FLAGS")
    _use_host_devices(1)
    assert "XLA_FLAGS" not in os.environ
