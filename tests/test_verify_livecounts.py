"""Live counts are compared (issue 40, item 1): observing a compiled call leaves no array alive
that the program did not make (the program's own ``len(jax.live_arrays())`` is what it is
without the verifier), and the emulated ``Device.live_buffers()`` counts as 0.4.1 did, so a
leak check's globals are compared: a migration whose count makes arrays of its own (a shard's
``.data`` for every live array: the phantom leak) is divergent, a right one equivalent."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

pytest.importorskip("jax", reason='needs the verify extra: pip install "jaxmigrate[verify]"')

from jaxmigrate.verify._procs import child_environment  # noqa: E402
from jaxmigrate.verify.report import render_text  # noqa: E402
from jaxmigrate.verify.runner import verify_files  # noqa: E402

BEFORE = '''\
"""A GDA-era leak check on the first device: its buffers before and after a step."""
import numpy as np
import jax
from jax.experimental import PartitionSpec as P
from jax.experimental.global_device_array import GlobalDeviceArray
from jax.experimental.maps import Mesh

mesh = Mesh(np.array(jax.devices()).reshape(4, 2), ("x", "y"))
data = np.arange(32.0).reshape(8, 4)
params = GlobalDeviceArray.from_callback(data.shape, mesh, P("x", "y"), lambda idx: data[idx])
dev = jax.devices()[0]


def count():
    return len(dev.live_buffers())


start = count()
grads = jax.jit(lambda a: a * 2)(params)
grads = jax.jit(lambda a: a + 1)(grads)
leaked = count() - start
print("leaked buffers:", leaked)
'''

AFTER = """\
import numpy as np
import jax
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()).reshape(4, 2), ("x", "y"))
data = np.arange(32.0).reshape(8, 4)
params = jax.make_array_from_callback(data.shape, NamedSharding(mesh, P("x", "y")), lambda idx: data[idx])
dev = jax.devices()[0]


def count():
    return {count}


start = count()
grads = jax.jit(lambda a: a * 2)(params)
grads = jax.jit(lambda a: a + 1)(grads)
leaked = count() - start
arrays_alive = len(jax.live_arrays())
print("leaked buffers:", leaked, "arrays alive:", arrays_alive)
"""

PHANTOM = "len([s.data for a in jax.live_arrays() for s in a.addressable_shards if s.device == dev])"
RIGHT = "sum(1 for a in jax.live_arrays() if dev in a.sharding.device_set)"


def _verify(tmp_path, count: str):
    (tmp_path / "before.py").write_text(BEFORE)
    (tmp_path / "after.py").write_text(AFTER.format(count=count))
    verdict = verify_files(str(tmp_path / "before.py"), str(tmp_path / "after.py"), timeout=60, recheck=False)
    return verdict, render_text(verdict)


def _after_globals(verdict):
    found = next(r for r in verdict.runs if r.side == "after").finished["globals"]
    return {name: obs.get("value") for name, obs in found.items() if obs["kind"] == "number"}


def _alone(tmp_path) -> str:
    """What after.py prints run alone, on 8 CPU devices, without the verifier."""
    return subprocess.run([sys.executable, str(tmp_path / "after.py")], env=child_environment(8), capture_output=True,
                          text=True, timeout=120, check=True).stdout


def test_a_phantom_leak_migration_is_divergent(tmp_path):
    verdict, shown = _verify(tmp_path, PHANTOM)
    assert verdict.status == "divergent", shown
    assert [d.where for d in verdict.differences] == ["global `leaked`"], shown
    assert (verdict.differences[0].before, verdict.differences[0].after) == ("int 1", "int 2"), shown
    assert "leaked buffers: 2 " in _alone(tmp_path)  # what the migration prints alone too


def test_a_right_leak_check_migration_is_equivalent_with_its_counts_compared(tmp_path):
    verdict, shown = _verify(tmp_path, RIGHT)
    assert verdict.status == "equivalent", shown
    assert verdict.compared == "2 compiled call value(s), 6 global(s), 0 file(s)", shown  # start, leaked among them


def test_observing_leaves_the_programs_own_live_array_count_as_it_is_alone(tmp_path):
    verdict, shown = _verify(tmp_path, RIGHT)
    counts = _after_globals(verdict)
    alone = re.search(r"leaked buffers: (\d+) arrays alive: (\d+)", _alone(tmp_path))
    assert alone is not None
    assert (counts["leaked"], counts["arrays_alive"]) == (int(alone.group(1)), int(alone.group(2))), shown
