"""The legacy runtime as legacy programs used it, run as before/after pairs: GDAs through
jax.jit / eval_shape / jnp with DeviceArray, ShardedDeviceArray and `.device_buffers`; a leak
check that keeps `live_buffers()` lists; pjit in jax.Array mode on 2 processes (global in and
out). Mini projects: tests/verify_projects/{legacy_arrays,live_buffers_kept,jax_array_mode}."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("jax", reason='needs the verify extra: pip install "jaxmigrate[verify]"')

from jaxmigrate.verify.report import render_text  # noqa: E402
from jaxmigrate.verify.runner import verify_files  # noqa: E402

PROJECTS = Path(__file__).parent / "verify_projects"


@pytest.mark.parametrize("name,processes,compared", [
    ("legacy_arrays", 1, "1 compiled call value(s), 9 global(s)"),
    ("live_buffers_kept", 1, "4 global(s)"),
    ("jax_array_mode", 2, "1 compiled call value(s), 3 global(s)"),  # out global (8, 4), not host-local
])
def test_a_right_migration_is_equivalent(name, processes, compared):
    verdict = verify_files(str(PROJECTS / name / "before.py"), str(PROJECTS / name / "after.py"), processes=processes)
    shown = render_text(verdict)
    assert verdict.status == "equivalent", shown
    assert compared in verdict.compared, shown
