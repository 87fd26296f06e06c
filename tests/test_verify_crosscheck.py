"""The legacy runtime against a real legacy JAX: pjit with `in_axis_resources` PartitionSpecs.

jax==0.4.13 is the oldest jaxlib on PyPI and still has pjit's `in_axis_resources` (positional
and keyword; not `None` specs: 0.4.13 changed their meaning (measured here); and no
longer the experimental names of Mesh/PartitionSpec, so the program uses `jax.sharding`).
The same program runs under a real 0.4.13 in its own venv and under
jaxmigrate's legacy runtime on the installed JAX; shapes, values and shard layouts must agree.
The venv is `verify --legacy-jax 0.4.13`'s (jaxmigrate.verify.legacy_env), built once under
~/.cache/jaxmigrate/legacy-jax; the test skips where it cannot be built.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("jax", reason='needs the verify extra: pip install "jaxmigrate[verify]"')

from jaxmigrate.verify import legacy_env  # noqa: E402

PROGRAM = r'''
import json
import numpy as np
import jax
from jax.experimental.pjit import pjit
from jax.sharding import Mesh, PartitionSpec as P  # 0.4.13 no longer has the experimental names

mesh = Mesh(np.array(jax.devices()).reshape(4, 2), ("x", "y"))
x = np.arange(64.0, dtype=np.float32).reshape(8, 8)
position = {d: k for k, d in enumerate(jax.devices())}


def layout(arr):
    out = []
    for device, index in arr.sharding.devices_indices_map(arr.shape).items():
        bounds = [[s.start or 0, arr.shape[i] if s.stop is None else s.stop] for i, s in enumerate(index)]
        out.append([position[device], bounds])
    return sorted(out)


cases = {
    "x_to_xy": dict(in_axis_resources=P("x"), out_axis_resources=P("x", "y")),
    "xy_to_x": dict(in_axis_resources=P("x", "y"), out_axis_resources=P("x")),
    "col_to_row": dict(in_axis_resources=P(None, "y"), out_axis_resources=P("y", None)),
    "joined_to_replicated": dict(in_axis_resources=P(("x", "y")), out_axis_resources=P()),
    "tuple_specs": dict(in_axis_resources=(P("x"),), out_axis_resources=P(None, "x")),
}
report = {}
with mesh:
    for name, specs in cases.items():
        r = pjit(lambda a: a * 2 + 1, **specs)(x)
        report[name] = dict(shape=list(r.shape), values=np.asarray(r).tolist(), layout=layout(r))
    r = pjit(lambda a: a - 1, P("y"), P("x"))(x)  # positional specs
    report["positional"] = dict(shape=list(r.shape), values=np.asarray(r).tolist(), layout=layout(r))
print("REPORT" + json.dumps(report))
'''

ENV = dict(os.environ, JAX_PLATFORMS="cpu", XLA_FLAGS="--xla_force_host_platform_device_count=8",
           TF_CPP_MIN_LOG_LEVEL="2", PYTHONWARNINGS="ignore")


def _legacy_python() -> str:
    """A Python with jax==0.4.13 (JAXMIGRATE_JAX0413_PYTHON, or the venv `verify --legacy-jax
    0.4.13` uses, built once under ~/.cache/jaxmigrate/legacy-jax)."""
    given = os.environ.get("JAXMIGRATE_JAX0413_PYTHON")
    if given:
        return given
    python, note = legacy_env.ensure("0.4.13")
    if python is None:
        pytest.skip(f"needs a venv with jax==0.4.13, absent and not buildable here: {note}")
    return python


def _run(python: str, preamble: str = "") -> dict:
    proc = subprocess.run([python, "-c", preamble + PROGRAM], env=ENV, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = next(line for line in proc.stdout.splitlines() if line.startswith("REPORT"))
    return json.loads(line[len("REPORT"):])


def test_legacy_runtime_matches_real_jax_0_4_13():
    real = _run(_legacy_python())
    emulated = _run(sys.executable, "from jaxmigrate.verify import legacy\nlegacy.install()\n")
    assert set(real) == set(emulated)
    for case in real:
        assert emulated[case]["shape"] == real[case]["shape"], case
        assert emulated[case]["values"] == real[case]["values"], case
        assert emulated[case]["layout"] == real[case]["layout"], case
