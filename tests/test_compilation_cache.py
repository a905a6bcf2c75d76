"""The persistent compilation cache: compiled programs land in the folder given."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

import bayesbandit as bb
from bayesbandit.errors import InvalidInput


def test_compiled_programs_are_stored_in_the_folder(tmp_path):
    script = textwrap.dedent(
        f"""
        import jax, jax.numpy as jnp
        import bayesbandit as bb
        bb.runtime.enable_compilation_cache({str(tmp_path / "cache")!r})
        print(jax.config.jax_persistent_cache_min_compile_time_secs)
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)  # this program compiles in less
        jax.block_until_ready(jax.jit(lambda x: jnp.linalg.cholesky(x @ x.T + jnp.eye(4)))(jnp.ones((4, 4))))
        """
    )
    out = subprocess.run([sys.executable, "-c", script], check=True, timeout=300, capture_output=True, text=True)
    assert float(out.stdout.split()[0]) == bb.runtime.CACHE_MIN_COMPILE_SECONDS  # not JAX's 1 s
    assert any((tmp_path / "cache").iterdir())


def test_a_file_is_not_a_cache_folder(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(InvalidInput, match="cannot use"):
        bb.runtime.enable_compilation_cache(tmp_path / "file" / "cache")


def test_an_empty_folder_name_is_refused_not_taken_as_the_current_directory():
    with pytest.raises(InvalidInput, match="empty string.*Fix"):
        bb.runtime.enable_compilation_cache("")
