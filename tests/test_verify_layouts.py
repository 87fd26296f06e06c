"""A verdict of its own for layouts (issue 40, item 4): values, outputs and files equal but
layouts differ is LAYOUT_DIFFERS, exit 3, each layout difference drawn; where JAX itself chose the
after side's layout (a value made eagerly under `jax.set_mesh`, replicated over the mesh where it
was on one device under `with mesh:`), the difference says so. It was DIVERGENT, with nothing to
tell it from a wrong `out_shardings`, which is LAYOUT_DIFFERS too and still fails CI (exit 3)."""

from __future__ import annotations

import json
import textwrap

import pytest

pytest.importorskip("jax", reason='needs the verify extra: pip install "jaxmigrate[verify]"')

from click.testing import CliRunner  # noqa: E402

from jaxmigrate.cli import main  # noqa: E402
from jaxmigrate.verify.report import render_text  # noqa: E402
from jaxmigrate.verify.runner import EXIT_LAYOUT, verify_files  # noqa: E402

HEADER = """\
import numpy as np
import jax
from jax.sharding import Mesh, PartitionSpec as P
mesh = Mesh(np.array(jax.devices()), ("x",))
x = np.arange(8.0)
"""
BEFORE = HEADER + """\
from jax.experimental.pjit import pjit
with mesh:
    key = jax.random.PRNGKey(0)
    out = pjit(lambda a: a * 2, in_axis_resources=P("x"), out_axis_resources=P("x"))(x)
"""
SET_MESH = HEADER + """\
with jax.set_mesh(mesh):
    key = jax.random.PRNGKey(0)
    out = jax.jit(lambda a: a * 2, in_shardings=P("x"), out_shardings=P("x"))(x)
"""


def _pair(tmp_path, before: str, after: str):
    (tmp_path / "before.py").write_text(textwrap.dedent(before))
    (tmp_path / "after.py").write_text(textwrap.dedent(after))
    return str(tmp_path / "before.py"), str(tmp_path / "after.py")


def test_an_eager_value_under_set_mesh_gets_the_layout_verdict_and_says_jax_chose_it(tmp_path):
    verdict = verify_files(*_pair(tmp_path, BEFORE, SET_MESH))
    shown = render_text(verdict)
    assert verdict.status == "layout_differs" and verdict.exit_code == EXIT_LAYOUT == 3, shown
    assert [(d.where, d.what) for d in verdict.differences] == [("global `key`", "sharding differs")], shown
    assert verdict.reason == ("values, outputs and files agree; only layouts differ: 1 layout difference(s), "
                              "1 of them chosen by JAX (eager values under jax.set_mesh); first: global `key` "
                              "(process 0): sharding differs"), shown
    (key,) = verdict.differences
    assert key.note.startswith("JAX chose this layout: the after value was made outside any compiled call under "
                               "jax.set_mesh (mesh x=8)"), shown
    assert shown.splitlines()[0].startswith("LAYOUT_DIFFERS: ") and key.note in shown
    assert "| d0 |" in key.picture and "d0-7" in key.picture, key.picture  # both layouts drawn


def test_a_wrong_out_shardings_gets_the_layout_verdict_and_fails_ci(tmp_path):
    wrong = SET_MESH.replace('out_shardings=P("x")', "out_shardings=P()").replace("    key = jax.random.PRNGKey(0)\n", "")
    before = BEFORE.replace("    key = jax.random.PRNGKey(0)\n", "")
    result = CliRunner().invoke(main, ["verify", *_pair(tmp_path, before, wrong), "--format", "json"])
    assert result.exit_code == 3, result.output
    data = json.loads(result.output[result.output.index("{"):])
    assert data["verdict"] == "layout_differs" and data["exit_code"] == 3
    assert [(d["where"], d["what"], d["note"]) for d in data["differences"]] == [
        ("call #1", "sharding differs", ""), ("global `out`", "sharding differs", "")]  # the migration asked for it


def test_a_value_difference_beside_a_layout_difference_stays_divergent(tmp_path):
    after = SET_MESH.replace("a * 2", "a * 3")
    verdict = verify_files(*_pair(tmp_path, BEFORE, after), recheck=False)
    assert verdict.status == "divergent" and verdict.exit_code == 1, render_text(verdict)
    assert [d.where for d in verdict.differences] == ["call #1", "global `out`", "global `key`"]
