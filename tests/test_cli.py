"""The ``bayesbandit`` command, called in-process."""

import json
import os
import shlex
import subprocess
import sys

import numpy as np
import pytest
import xarray as xr
from bayesbandit.experiments import EXPERIMENTS
from bayesbandit.experiments._provenance import RESULT_ENVIRONMENT, command_line
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
    for name in RESULT_ENVIRONMENT:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "1")  # recorded as part of the command
    out_dir = tmp_path / "out"
    argv = ["run", "glm-logistic", "--quick", "--runs", "2", "--horizon", "200", "--out", str(out_dir), "--no-progress"]
    assert main(argv) == 0
    files = {p.name for p in out_dir.iterdir()}
    assert files == {"glm_logistic.png", "glm_logistic.nc", "glm_logistic.md", "parts", "run.json"}
    assert len(list((out_dir / "parts" / "5").glob("*/runs-0-2.nc"))) == 8
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
    # What made it: the command, the commit, the machine and the wall time, in run.json and under the table.
    made = json.loads((out_dir / "run.json").read_text())["provenance"]
    assert made["command"] == "OPENBLAS_NUM_THREADS=1 bayesbandit " + " ".join(argv)
    assert len(made["commit"]) == 40 or made["commit"] == "unknown"
    assert made["wall_s"] > 0 and made["machine"]["cpus"] >= 1 and made["date"].endswith("UTC")
    assert (
        table.rstrip()
        .splitlines()[-1]
        .startswith("<!-- provenance --> Made by `OPENBLAS_NUM_THREADS=1 bayesbandit run glm-logistic")
    )

    # A second run into the same folder reuses every stored part; other settings recompute them.
    import bayesbandit.experiments.glm_logistic as glm_logistic

    first = xr.load_dataset(out_dir / "glm_logistic.nc")
    (out_dir / "glm_logistic.nc").unlink()

    def must_not_run(*args, **kwargs):
        raise AssertionError("a stored part was run again")

    monkeypatch.setattr(glm_logistic.Figure1, "__call__", must_not_run)
    assert main(argv) == 0
    xr.testing.assert_identical(xr.load_dataset(out_dir / "glm_logistic.nc"), first)
    with pytest.raises(AssertionError, match="run again"):
        main([*argv, "--seed", "1"])
    monkeypatch.setattr(glm_logistic, "FPL_THEORY_MAX_STEPS", 30)  # a policy's parameters changed
    with pytest.raises(AssertionError, match="run again"):
        main(argv)


def test_shards_merged_equal_the_one_process_run(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("BAYESBANDIT_JAX_CACHE", "")
    argv = ["run", "glm-logistic", "--quick", "--runs", "3", "--horizon", "100", "--no-progress"]
    assert main([*argv, "--out", str(tmp_path / "one")]) == 0
    for k in (0, 1):
        assert main([*argv, "--shard", f"{k}/2", "--out", str(tmp_path / f"shard{k}")]) == 0
        assert f"shard {k}/2 finished" in capsys.readouterr().out
        assert not (tmp_path / f"shard{k}" / "glm_logistic.nc").exists()
    assert main(["merge", str(tmp_path / "shard0"), "--out", str(tmp_path / "m"), "--no-progress"]) == 2
    assert "8 of 16 parts of the grid are not stored" in capsys.readouterr().err
    shards = [str(tmp_path / f"shard{k}") for k in (0, 1)]
    assert main(["merge", *shards, "--out", str(tmp_path / "merged"), "--no-progress"]) == 0
    one = xr.load_dataset(tmp_path / "one" / "glm_logistic.nc")
    merged = xr.load_dataset(tmp_path / "merged" / "glm_logistic.nc")
    for var in ("cumulative_regret", "total_reward", "not_converged"):
        np.testing.assert_array_equal(merged[var].values, one[var].values, err_msg=var)

    # Shards of other runs do not merge; experiments not made of parts refuse the grid flags.
    other = ["run", "glm-logistic", "--quick", "--runs", "3", "--horizon", "100", "--seed", "1", "--no-progress"]
    assert main([*other, "--shard", "0/2", "--out", str(tmp_path / "other")]) == 0
    assert main(["merge", shards[0], str(tmp_path / "other"), "--out", str(tmp_path / "x"), "--no-progress"]) == 2
    assert "merge the shards of one run" in capsys.readouterr().err
    assert main(["merge", str(tmp_path), "--no-progress"]) == 2
    assert "no readable run.json" in capsys.readouterr().err
    assert main(["run", "ope-logistic", "--quick", "--shard", "0/2", "--out", str(tmp_path / "o")]) == 2
    assert "not made of parts" in capsys.readouterr().err
    assert main([*argv, "--shard", "2/2", "--out", str(tmp_path / "bad")]) == 2
    assert "K/N" in capsys.readouterr().err


def test_the_recorded_command_runs_again_as_written_with_its_environment():
    environ = {"XLA_FLAGS": "--xla_a=1 --xla_b=2", "OPENBLAS_NUM_THREADS": "1", "HOME": "/root"}
    line = command_line(["bayesbandit", "run", "bai-static", "--cells", "gap, 0.3"], environ)
    assert (
        line == "OPENBLAS_NUM_THREADS=1 XLA_FLAGS='--xla_a=1 --xla_b=2' bayesbandit run bai-static --cells 'gap, 0.3'"
    )
    assert shlex.split(line)[:3] == ["OPENBLAS_NUM_THREADS=1", "XLA_FLAGS=--xla_a=1 --xla_b=2", "bayesbandit"]


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


def test_deep_mnist_shards_merge_to_the_one_process_run(tmp_path, monkeypatch):
    """deep-mnist is made of parts: two shards and a merge give the one-process results, bit for bit, and a
    stored part is reused only for the same images."""
    pytest.importorskip("sklearn")
    monkeypatch.setenv("BAYESBANDIT_JAX_CACHE", "")
    options = ["--quick", "--runs", "4", "--horizon", "40", "--block", "2", "--policies", "DeepFPL (relu)"]
    assert main(["run", "deep-mnist", *options, "--out", str(tmp_path / "whole"), "--no-progress"]) == 0
    for k in (0, 1):
        argv = ["run", "deep-mnist", *options, "--shard", f"{k}/2", "--out", str(tmp_path / f"shard{k}")]
        assert main([*argv, "--no-progress"]) == 0
        assert len(list((tmp_path / f"shard{k}" / "parts").rglob("*.nc"))) == 1  # its half of the 2 parts
    shards = [str(tmp_path / f"shard{k}") for k in (0, 1)]
    assert main(["merge", *shards, "--out", str(tmp_path / "merged"), "--no-progress"]) == 0
    with (
        xr.open_dataset(tmp_path / "whole" / "results.nc") as whole,
        xr.open_dataset(tmp_path / "merged" / "results.nc") as merged,
    ):
        assert whole.sizes["run"] == 4 and list(merged.run.values) == [0, 1, 2, 3]
        for name in ("reward", "action", "regret"):
            np.testing.assert_array_equal(merged[name].values, whole[name].values)

    from bayesbandit.experiments.deep_mnist import Figure2, compared

    from bayesbandit.datasets.images import ImageData, load_digits
    from bayesbandit.envs import ImageClassBandit

    digits = load_digits()
    changed = ImageData(digits.images.copy(), digits.labels, digits.source)
    changed.images[0, 0] += 1.0
    policy = ("DeepFPL (relu)", compared(40, hidden=16)["DeepFPL (relu)"])
    grids = [Figure2((policy,), ImageClassBandit(data=data), 40, 4, 0, 2) for data in (digits, changed)]
    part = grids[0].parts()[0]
    assert grids[0].settings(part)["images"] != grids[1].settings(part)["images"]


def test_chosen_cells_of_a_bai_grid_run_alone_and_say_so(tmp_path, capsys, monkeypatch):
    """--cells runs the named cells only (labels as the summary prints them, spaces ignored); run.json and
    the summary name them; their parts are the whole grid's; an unknown label is refused naming the known ones."""
    monkeypatch.setenv("BAYESBANDIT_JAX_CACHE", "")
    out_dir = tmp_path / "corner"
    argv = ["run", "bai-random", "--quick", "--runs", "4", "--out", str(out_dir), "--no-progress"]
    assert main([*argv, "--cells", "Fig. 7: corner, B = 25, 8"]) == 0
    with xr.open_dataset(out_dir / "results.nc") as ds:
        assert ds.label.values.tolist() == ["Fig. 7: corner, B = 25, 8"] and int(ds.attrs["grid_cells"]) == 2
        assert ds.algorithm.values.tolist() == ["GSE-Lin-FW", "OD-LinBAI"] and ds.sizes["replication"] == 4
        first = ds.load()
    summary = (out_dir / "summary.md").read_text()
    assert "Cells run (1 of the grid's 2, chosen with `cells`): `Fig. 7: corner, B = 25, 8`." in summary
    assert "Fig. 3" not in summary
    assert json.loads((out_dir / "run.json").read_text())["options"]["cells"] == ["Fig. 7: corner, B = 25, 8"]
    assert [p.name for p in (out_dir / "parts").iterdir()] == ["Fig_7_corner_B_25_x8"]  # the whole grid's part

    import bayesbandit.experiments.bai_grid as bai_grid

    def must_not_run(*args, **kwargs):
        raise AssertionError("a stored part was run again")

    monkeypatch.setattr(bai_grid.BAIGrid, "__call__", must_not_run)
    assert main([*argv, "--cells", "Fig.7:corner,B=25,8"]) == 0
    xr.testing.assert_identical(xr.load_dataset(out_dir / "results.nc"), first)

    capsys.readouterr()
    assert main([*argv, "--cells", "Fig. 7: corner, B = 25, 9; Fig. 3: B/K = 20, 16"]) == 2
    err = capsys.readouterr().err
    assert "Got 'Fig. 7: corner, B = 25, 9', which names no cell" in err
    assert "Known cells: Fig. 3: B/K = 20, 16; Fig. 7: corner, B = 25, 8." in err
    assert main([*argv, "--cells", " ; "]) == 2
    assert "non-empty list of cell labels" in capsys.readouterr().err
    assert main(["run", "glm-logistic", "--quick", "--out", str(tmp_path / "g"), "--cells", "B/K = 10, 16"]) == 2
    assert "drop --cells" in capsys.readouterr().err


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


def test_version(capsys):
    import bayesbandit

    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.strip() == f"bayesbandit {bayesbandit.__version__}"


def test_list_prints_no_third_party_warning(tmp_path):
    """ArviZ warns once a day, at import, that it is being refactored; a fresh cache folder makes
    today's first import (the filter in ``bayesbandit.diagnostics._arviz`` is what keeps it out)."""
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path), "PYTHONWARNINGS": "default"}
    code = "import sys; from bayesbandit.experiments.cli import main; sys.exit(main(['list']))"
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "glm-logistic" in done.stdout
    assert done.stderr == ""
    assert "Warning" not in done.stdout


def test_sections_are_for_experiments_made_of_sections(tmp_path, capsys):
    assert main(["run", "comb-clustered", "--quick", "--sections", "index,theta", "--out", str(tmp_path)]) == 2
    assert "sections" in capsys.readouterr().err
    assert main(["run", "sublinear-synthetic", "--quick", "--sections", "table9", "--out", str(tmp_path)]) == 2
    assert "table9" in capsys.readouterr().err
    assert main(["run", "glm-logistic", "--quick", "--sections", "x", "--out", str(tmp_path)]) == 2
    assert "drop --sections" in capsys.readouterr().err
