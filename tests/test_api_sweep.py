"""Every dotted name a rule can emit exists in the installed JAX, and in the newest JAX on Python
3.12 where pyenv has one (as TensorFlow's upgrade script checks its rewrite targets). Older
targets: tests/test_target_floor.py."""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.venvs import cached_venv, pyenv_pythons

pytest.importorskip("jax", reason='needs the verify extra: pip install "jaxmigrate[verify]"')

from jaxmigrate.catalog.moves import MOVES, applies  # noqa: E402
from jaxmigrate.patterns import gda, pjit_calls  # noqa: E402
from jaxmigrate.rules import (  # noqa: E402
    device_put_sharded,
    experimental_shard_map,
    live_buffers,
    mesh_context,
    positional_sharding,
    sharding_constraint_axis_resources,
)

EMITTED = sorted({
    *(m.new for m in MOVES if applies(m, None)),
    *(m.prefer for m in MOVES if m.prefer),
    gda.MAKE_FROM_CALLBACK, gda.MAKE_FROM_ARRAYS,
    gda.NAMED_SHARDING, gda.PARTITION_SPEC,
    f"{gda.MULTIHOST_UTILS}.host_local_array_to_global_array",
    f"{gda.MULTIHOST_UTILS}.global_array_to_host_local_array",
    "jax.live_arrays", sharding_constraint_axis_resources.MODERN, "jax.Array", "jax.Shard", experimental_shard_map.MODERN,
    pjit_calls.JIT, mesh_context.SET_MESH_NAME, device_put_sharded.MESH, "jax.device_put", "jax.tree.map", "jax.numpy.stack",
    positional_sharding.MESH,
})


RESOLVE = """
import importlib

def resolve(dotted):
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for attr in parts[i:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(dotted)
"""
_resolve = {}
exec(RESOLVE, _resolve)  # the same resolver runs here and, below, in the newest JAX's interpreter


@pytest.mark.parametrize("dotted", EMITTED)
def test_emitted_name_exists(dotted):
    assert _resolve["resolve"](dotted) is not None


def test_the_sweep_covers_the_live_buffers_target():
    assert live_buffers.GET_BACKEND not in EMITTED  # a legacy name is never emitted


SWEEP = RESOLVE + """
import json, sys
import jax

missing = []
for name in json.loads(sys.argv[1]):
    try:
        resolve(name)
    except (ImportError, AttributeError) as exc:
        missing.append(f"{name}: {exc}")
print(json.dumps({"jax": jax.__version__, "missing": missing}))
"""


def test_emitted_names_exist_in_the_newest_jax():
    """jax >= 0.11 needs Python >= 3.12: a venv of pyenv's 3.12 (or 3.13) with the newest jax."""
    python = cached_venv("jax-newest-py312", pyenv_pythons("3.12", "3.13"), ["jax"])
    proc = subprocess.run([python, "-c", SWEEP, json.dumps(EMITTED)], capture_output=True, text=True, timeout=300,
                          env={"JAX_PLATFORMS": "cpu", "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["missing"] == [], f"missing in jax {report['jax']}: {report['missing']}"
