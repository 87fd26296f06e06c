"""Guards of the rules that decide a case on their own: each test here fails if its guard goes."""

from __future__ import annotations

import pytest

from tests.conftest import run

MESH_HELPERS = '''import contextlib

import numpy as np

import jax
from jax.experimental.pjit import pjit
from jax.sharding import Mesh, PartitionSpec as P

devices = np.array(jax.devices())


def with_mesh(axes):
    stack = contextlib.ExitStack()
    stack.enter_context(Mesh(devices, axes))
    return stack


def make_mesh(axes):
    return Mesh(devices, axes)


double = pjit(lambda a: a * 2, in_shardings=P("x"), out_shardings=None)
with {helper}(("x",)):
    y = double(np.arange(8.0))
'''


@pytest.mark.parametrize("helper,is_mesh", [("with_mesh", False), ("make_mesh", True)])
def test_jm702_leaves_with_helpers_alone(helper, is_mesh):
    """`with with_mesh(...)` enters a mesh itself (not a generator here, so only its name tells):
    `jax.set_mesh(with_mesh(...))` would fail. A factory named like a mesh is one."""
    source = MESH_HELPERS.format(helper=helper)
    found = [f.line for f in run(source, fix=False).findings if f.code == "JM702"]
    assert found == ([source.splitlines().index(f"with {helper}((\"x\",)):") + 1] if is_mesh else [])
    fixed = run(source, unsafe=True).text
    assert (f"with jax.set_mesh({helper}(" in fixed) is is_mesh
