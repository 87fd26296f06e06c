"""Readable differences (issue 30): each call named by its function and file:line on both sides,
a sharding difference shown with its PartitionSpec and mesh axes and both layouts as device
grids, a value difference with its first differing index and both values, and value differences
listed before layout-only ones. Mini project: tests/verify_projects/sharding_readable."""

from __future__ import annotations

from pathlib import Path

import pytest

jax = pytest.importorskip("jax", reason='needs the verify extra: pip install "jaxmigrate[verify]"')

from jaxmigrate.verify.compare import layout_only  # noqa: E402
from jaxmigrate.verify.observe import observe  # noqa: E402
from jaxmigrate.verify.report import render_text  # noqa: E402
from jaxmigrate.verify.runner import verify_files  # noqa: E402

PROJECT = Path(__file__).parent / "verify_projects" / "sharding_readable"


@pytest.fixture(scope="module")
def verdict():
    return verify_files(str(PROJECT / "before.py"), str(PROJECT / "after.py"))


def test_value_differences_come_first_with_the_first_differing_index(verdict):
    shown = render_text(verdict)
    assert verdict.status == "divergent", shown
    assert [(d.where, d.what) for d in verdict.differences] == [
        ("call #2", "values differs"), ("global `masked`", "values differs"),
        ("call #1", "sharding differs"), ("global `out`", "sharding differs")], shown
    assert verdict.reason.endswith("first: call #2 (process 0): values differs")
    first = verdict.differences[0]
    assert first.site == "`mask` at before.py:22 (before) | after.py:20 (after)"
    assert first.detail == "first difference at [3,1]: before -1.0, after 13.0; 1 of 32 element(s) differ"
    assert "call of `mask` at before.py:22 (before) | after.py:20 (after)" in shown


def test_a_sharding_difference_shows_spec_mesh_axes_and_device_grids(verdict):
    layout = verdict.differences[2]
    assert layout.site == "`double` at before.py:21 (before) | after.py:19 (after)"
    assert layout.before.startswith("float32[8x4] sharding: NamedSharding(mesh x=4 y=2, P('x', 'y')) [0:2,0:2]@d0")
    assert layout.before.endswith("[6:8,2:4]@d7")  # not cut off, no values
    assert layout.after.startswith("float32[8x4] sharding: NamedSharding(mesh x=4 y=2, P('x')) [0:2,:]@d0,d1")
    grid = layout.picture.splitlines()
    assert grid[0].split() == ["before:", "NamedSharding(mesh", "x=4", "y=2,", "P('x',", "'y'))",
                               "after:", "NamedSharding(mesh", "x=4", "y=2,", "P('x'))"]
    assert [line.split() for line in grid[1:]] == [
        ["|", f"d{2 * r}", "|", f"d{2 * r + 1}", "|", "|", f"d{2 * r},d{2 * r + 1}", "|"] for r in range(4)]


def test_layout_only_words():
    assert layout_only("sharding") and layout_only("[0] sharding") and layout_only(".params sharding")
    assert not layout_only("values and sharding") and not layout_only("values") and not layout_only("shape")


def test_mesh_axis_types_are_shown_when_not_auto():
    """jax.make_mesh's axes are Explicit from JAX 0.9.0: the layout says so (shown, not compared)."""
    if tuple(int(p) for p in jax.__version__.split(".")[:2]) < (0, 9):
        pytest.skip("jax.make_mesh makes Explicit axes from JAX 0.9.0")
    n = len(jax.devices())
    mesh = jax.make_mesh((n,), ("x",))
    arr = jax.device_put(jax.numpy.zeros(2 * n), jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("x")))
    assert observe(arr)["layout"] == f"NamedSharding(mesh x={n} (x: Explicit), P('x'))"
    auto = jax.sharding.Mesh(mesh.devices, ("x",))
    arr = jax.device_put(jax.numpy.zeros(2 * n), jax.sharding.NamedSharding(auto, jax.sharding.PartitionSpec("x")))
    assert observe(arr)["layout"] == f"NamedSharding(mesh x={n}, P('x'))"
