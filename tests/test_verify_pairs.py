"""Hand-written before/after pairs: wrong migrations are divergent, right ones equivalent.

Includes the jax.Array migration guide's FROM_GDA example with per-process host-local data on
2 processes x 4 CPU devices, and the undecidable cases (the legacy side raises, a side dies, a
time-out that must leave no process behind).
"""

from __future__ import annotations

import os
import textwrap
import time

import pytest

pytest.importorskip("jax", reason='needs the verify extra: pip install "jaxmigrate[verify]"')

from jaxmigrate.verify.report import render_text  # noqa: E402
from jaxmigrate.verify.runner import verify_files, verify_migration  # noqa: E402

HEADER = """\
import numpy as np
import jax
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
"""

LEGACY = HEADER + """\
from jax.experimental.pjit import pjit
mesh = Mesh(np.array(jax.devices()).reshape(4, 2), ("x", "y"))
x = np.arange(32.0).reshape(8, 4)
"""

MODERN = HEADER + """\
from jax.experimental.pjit import pjit
mesh = Mesh(np.array(jax.devices()).reshape(4, 2), ("x", "y"))
x = np.arange(32.0).reshape(8, 4)
"""


def _pair(tmp_path, before: str, after: str, **options):
    (tmp_path / "before.py").write_text(textwrap.dedent(before))
    (tmp_path / "after.py").write_text(textwrap.dedent(after))
    return verify_files(str(tmp_path / "before.py"), str(tmp_path / "after.py"), **options)


def _expect(verdict, status: str, text: str = ""):
    shown = render_text(verdict)
    assert verdict.status == status, shown
    assert text in shown, shown


# -- single process: deliberately wrong migrations ---------------------------------------------

LEGACY_CALL = LEGACY + """\
with mesh:
    out = pjit(lambda a: a * 2, in_axis_resources=P("x"), out_axis_resources=P("x", "y"))(x)
"""


def test_right_rename_is_equivalent(tmp_path):
    after = MODERN + """\
with mesh:
    out = pjit(lambda a: a * 2, in_shardings=P("x"), out_shardings=P("x", "y"))(x)
"""
    verdict = _pair(tmp_path, LEGACY_CALL, after)
    _expect(verdict, "equivalent", "1 compiled call value(s)")


def test_wrong_spec_is_a_layout_difference(tmp_path):
    """Values equal, layout wrong: LAYOUT_DIFFERS, exit 3, which fails CI as DIVERGENT does (issue 40, item 4)."""
    after = MODERN + """\
with mesh:
    out = pjit(lambda a: a * 2, in_shardings=P("x"), out_shardings=P("x"))(x)
"""
    _expect(_pair(tmp_path, LEGACY_CALL, after), "layout_differs", "call #1 (process 0): sharding differs")


def test_swapped_mesh_axes_are_divergent(tmp_path):
    """The mesh global itself differs (its axes), a value: DIVERGENT, not only a layout."""
    after = HEADER + """\
from jax.experimental.pjit import pjit
mesh = Mesh(np.array(jax.devices()).reshape(4, 2), ("y", "x"))
x = np.arange(32.0).reshape(8, 4)
with mesh:
    out = pjit(lambda a: a * 2, in_shardings=P("x"), out_shardings=P("x", "y"))(x)
"""
    _expect(_pair(tmp_path, LEGACY_CALL, after), "divergent", "sharding differs")


def test_changed_arithmetic_is_divergent(tmp_path):
    after = MODERN + """\
with mesh:
    out = pjit(lambda a: a * 3, in_shardings=P("x"), out_shardings=P("x", "y"))(x)
"""
    _expect(_pair(tmp_path, LEGACY_CALL, after), "divergent", "values differs")


LEGACY_NONE = LEGACY + """\
with mesh:
    out = pjit(lambda a: a + 1, in_axis_resources=None, out_axis_resources=None)(x)
"""


def test_global_lost_by_the_migration_is_divergent(tmp_path):
    """A global only before.py defines (and after.py has under no other name) is a difference."""
    before = LEGACY_CALL + "total = float(out.sum())\n"
    after = MODERN + """\
with mesh:
    out = pjit(lambda a: a * 2, in_shardings=P("x"), out_shardings=P("x", "y"))(x)
"""
    _expect(_pair(tmp_path, before, after), "divergent", "global `total` (process 0): not defined after")


def test_none_as_unspecified_jit_sharding_is_a_layout_difference(tmp_path):
    """The values agree; the output is not replicated as None asked: LAYOUT_DIFFERS, exit 3."""
    after = MODERN + """\
with mesh:
    out = jax.jit(lambda a: a + 1, in_shardings=None, out_shardings=None)(x)
"""
    _expect(_pair(tmp_path, LEGACY_NONE, after), "layout_differs", "replicated on d0-7")


def test_none_as_replicated_named_sharding_is_equivalent(tmp_path):
    after = MODERN + """\
replicated = NamedSharding(mesh, P())
out = jax.jit(lambda a: a + 1, in_shardings=replicated, out_shardings=replicated)(x)
"""
    _expect(_pair(tmp_path, LEGACY_NONE, after), "equivalent")


# -- two processes x 4 devices: host-local data ------------------------------------------------

TRAIN = """\
import numpy as np
import jax
from jax.experimental.pjit import pjit
from jax.sharding import Mesh, PartitionSpec as P
{extra}
mesh = Mesh(np.array(jax.devices()).reshape(4, 2), ("data", "model"))
local_batch = np.arange(16.0).reshape(4, 4) + 100.0 * jax.process_index()
with mesh:
    step = pjit(lambda b: b * 2, {in_kw}=P("data"), {out_kw}=P("data"))
{call}
"""


def test_dropped_host_local_conversion_is_divergent(tmp_path):
    before = TRAIN.format(extra="", in_kw="in_axis_resources", out_kw="out_axis_resources",
                          call="    doubled = step(local_batch)")
    after = TRAIN.format(extra="", in_kw="in_shardings", out_kw="out_shardings", call="    doubled = step(local_batch)")
    _expect(_pair(tmp_path, before, after, processes=2), "divergent", "(process 1)")


def test_explicit_host_local_conversion_is_equivalent(tmp_path):
    before = TRAIN.format(extra="", in_kw="in_axis_resources", out_kw="out_axis_resources",
                          call="    doubled = step(local_batch)")
    call = ("    g = multihost_utils.host_local_array_to_global_array(local_batch, mesh, P('data'))\n"
            "    doubled = multihost_utils.global_array_to_host_local_array(step(g), mesh, P('data'))")
    after = TRAIN.format(extra="from jax.experimental import multihost_utils", in_kw="in_shardings",
                         out_kw="out_shardings", call=call)
    _expect(_pair(tmp_path, before, after, processes=2), "equivalent", "1 compiled call value(s)")


GUIDE_BEFORE = """\
\"\"\"The jax.Array migration guide's FROM_GDA example, with per-process host-local data.\"\"\"
import numpy as np
import jax
from jax.experimental.global_device_array import GlobalDeviceArray
from jax.experimental.pjit import pjit, FROM_GDA
from jax.sharding import Mesh, PartitionSpec as P
{flag}
mesh = Mesh(np.array(jax.devices()).reshape(4, 2), ("x", "y"))
data = np.arange(32.0).reshape(8, 4)


def f(a, b, c, d):
    return a + b, c * d


gda1 = GlobalDeviceArray.from_callback(data.shape, mesh, P("x"), lambda idx: data[idx])
gda2 = GlobalDeviceArray.from_callback(data.shape, mesh, P("x", "y"), lambda idx: -data[idx])
np_array1 = np.full((4, 4), 10.0 * (jax.process_index() + 1))  # this process's half of a P('x') input
np_array2 = np.arange(32.0).reshape(8, 4) % 3  # replicated: the same on every process
with mesh:
    pjitted_f = pjit(f, in_axis_resources=(FROM_GDA, P('x'), FROM_GDA, P(None)),
                     out_axis_resources=(P('x'), P('x', 'y')))
    out1, out2 = pjitted_f(gda1, np_array1, gda2, np_array2)
"""

GUIDE_AFTER = """\
import numpy as np
import jax
from jax.experimental import multihost_utils
from jax.experimental.pjit import pjit
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()).reshape(4, 2), ("x", "y"))
data = np.arange(32.0).reshape(8, 4)


def f(a, b, c, d):
    return a + b, c * d


gda1 = jax.make_array_from_callback(data.shape, NamedSharding(mesh, P("x")), lambda idx: data[idx])
gda2 = jax.make_array_from_callback(data.shape, NamedSharding(mesh, P("x", "y")), lambda idx: -data[idx])
np_array1 = np.full((4, 4), 10.0 * (jax.process_index() + 1))
np_array2 = np.arange(32.0).reshape(8, 4) % 3
with mesh:
    pjitted_f = pjit(f, out_shardings=(P('x'), P('x', 'y')))
    array2, array3 = multihost_utils.host_local_array_to_global_array(
        (np_array1, np_array2), mesh, (P('x'), P(None)))
    out1, out2 = pjitted_f(gda1, array2, gda2, array3)
{outputs}
"""


def test_migration_guide_from_gda_two_process_equivalent(tmp_path):
    """With jax_parallel_functions_output_gda the legacy outputs are global, as the guide's are."""
    before = GUIDE_BEFORE.format(flag='jax.config.update("jax_parallel_functions_output_gda", True)')
    verdict = _pair(tmp_path, before, GUIDE_AFTER.format(outputs=""), processes=2)
    _expect(verdict, "equivalent", "1 compiled call value(s)")


def test_migration_guide_host_local_outputs_two_process(tmp_path):
    """Without the flag the legacy outputs were host-local: the guide's rewrite alone diverges,
    converting the outputs back as well is equivalent."""
    before = GUIDE_BEFORE.format(flag="")
    _expect(_pair(tmp_path, before, GUIDE_AFTER.format(outputs=""), processes=2), "divergent", "global `out1`")
    outputs = "out1, out2 = multihost_utils.global_array_to_host_local_array((out1, out2), mesh, (P('x'), P('x', 'y')))"
    _expect(_pair(tmp_path, before, GUIDE_AFTER.format(outputs=outputs), processes=2), "equivalent")


def test_verify_migration_of_the_guide_example(tmp_path):
    """`jaxmigrate verify FILE`: the current rules migrate the flagged guide example equivalently."""
    path = tmp_path / "guide.py"
    path.write_text(GUIDE_BEFORE.format(flag='jax.config.update("jax_parallel_functions_output_gda", True)'))
    verdict = verify_migration(str(path), processes=2)
    _expect(verdict, "equivalent")
    assert verdict.after.endswith("(migrated in memory)")


# -- undecidable -----------------------------------------------------------------------------


def test_legacy_side_raising_is_undecidable(tmp_path):
    before = LEGACY + "out = pjit(lambda a: a, P('x'), P('x'))(x)  # no mesh at the call\n"
    after = MODERN + "out = jax.jit(lambda a: a)(x)\n"
    verdict = _pair(tmp_path, before, after)
    _expect(verdict, "undecidable",
            "the before side raised under the legacy runtime: RuntimeError: pjit requires a non-empty mesh")
    assert verdict.exit_code == 2


def test_after_side_raising_is_divergent(tmp_path):
    after = MODERN + "with mesh:\n    out = pjit(lambda a: a * 2, P('x'), P('x', 'y'))(x)\nraise RuntimeError('after broke')\n"
    _expect(_pair(tmp_path, LEGACY_CALL, after), "divergent", "raised on one side only")


def test_side_dying_without_observations_is_undecidable(tmp_path):
    _expect(_pair(tmp_path, LEGACY_CALL, "import os\nos._exit(3)\n"), "undecidable",
            "the after side (process 0) exited with code 3 without observations")


def test_timeout_kills_every_process(tmp_path):
    """A side that outlives the timeout is ended with everything it started (its 600 s sleeps
    would hold the run). On a loaded machine the side may not reach the script within a short
    timeout: then it runs again with a longer one, until the grandchild has been started."""
    pid_file = tmp_path / "grandchild.pid"
    hang = f"""\
import subprocess, time
child = subprocess.Popen(["sleep", "600"])
open({str(pid_file)!r}, "w").write(str(child.pid))
time.sleep(600)
"""
    for timeout in (4, 16, 64):
        start = time.monotonic()
        verdict = _pair(tmp_path, hang, LEGACY_CALL, timeout=timeout)
        assert time.monotonic() - start < timeout + 120  # not the sleeps' 600 s
        _expect(verdict, "undecidable", f"timed out after {timeout} s")
        if pid_file.exists():
            break
    pids = [int(pid_file.read_text())] + [r.pid for r in verdict.runs]
    deadline = time.monotonic() + 5
    while any(_alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [pid for pid in pids if _alive(pid)]


def _alive(pid: int) -> bool:
    """Running (a zombie waiting for a reaper counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


TRANSPOSED = """\
import numpy as np
import jax
from jax.experimental.pjit import pjit
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
mesh = Mesh(np.array(jax.devices()).reshape(2, 4).T, ("x", "y"))  # process p holds the column y == p


def block(p):
    return np.arange(16.0).reshape(8, 2) + 100.0 * p
{body}
"""


def test_host_local_blocks_assemble_in_mesh_order_two_process(tmp_path):
    """Dimension 1 over 'y', which spans the processes: each process's (8, 2) block becomes its
    columns of the global (8, 4) array (written here without multihost_utils)."""
    before = TRANSPOSED.format(body="""\
jax.config.update("jax_parallel_functions_output_gda", True)
with mesh:
    out = pjit(lambda a: a * 1, P(None, "y"), P("x", "y"))(block(jax.process_index()))
""")
    after = TRANSPOSED.format(body="""\
full = np.concatenate([block(0), block(1)], axis=1)
g = jax.make_array_from_callback((8, 4), NamedSharding(mesh, P(None, "y")), lambda index: full[index])
with mesh:
    out = pjit(lambda a: a * 1, in_shardings=P(None, "y"), out_shardings=P("x", "y"))(g)
""")
    _expect(_pair(tmp_path, before, after, processes=2), "equivalent", "1 compiled call value(s)")
    swapped = after.replace("[block(0), block(1)]", "[block(1), block(0)]")
    _expect(_pair(tmp_path, before, swapped, processes=2), "divergent", "values differs")


def test_shipped_example_migrates_equivalently():
    example = os.path.join(os.path.dirname(__file__), "..", "examples", "legacy_train.py")
    _expect(verify_migration(os.path.normpath(example)), "equivalent")
