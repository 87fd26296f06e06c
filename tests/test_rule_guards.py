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
    `jax.set_mesh(with_mesh(...))` would fail, so it is reported, and the module's pjit stays
    (`jax.jit` would not see the helper's mesh). A factory named like a mesh is one."""
    source = MESH_HELPERS.format(helper=helper)
    line = source.splitlines().index(f"with {helper}((\"x\",)):") + 1
    found = [(f.line, f.fix is not None) for f in run(source, fix=False).findings if f.code == "JM702"]
    assert found == [(line, is_mesh)]
    fixed = run(source, unsafe=True).text
    assert (f"with jax.set_mesh({helper}(" in fixed) is is_mesh
    assert ("jax.jit(" in fixed) is is_mesh


@pytest.mark.parametrize("line,message", [
    ('jax.config.update("jax_array", use_array)', "remove this update"),  # a value not written out
    ('done = jax.config.update("jax_parallel_functions_output_gda", False)', "remove this update"),  # not a statement
    ('jax.config.update("jax_array")', None),  # not a call of update(name, value)
])
def test_jm301_reports_the_updates_it_cannot_delete(line, message):
    """An update JM301 cannot delete on its own is reported for a person, without a fix."""
    source = f"import jax\n\nuse_array = True\n{line}\n"
    findings = [f for f in run(source, ["JM301"], fix=False).findings if f.code == "JM301"]
    if message is None:
        assert findings == []
    else:
        assert [(f.line, f.fix) for f in findings] == [(4, None)] and findings[0].message.endswith(message)


def test_jm301_unsafe_deletion_drops_the_import_left_unused():
    source = 'from jax import config\n\nconfig.update("jax_parallel_functions_output_gda", False)\nx = 1\n'
    assert run(source, ["JM301"], fix=True).text == source  # unsafe: not without --unsafe-fixes
    assert run(source, ["JM301"], unsafe=True).text == "\nx = 1\n"


def test_jm401_reports_a_guard_it_cannot_fold():
    """`hasattr(backend, "live_buffers")` outside an `if` test: reported with the value it has now."""
    source = 'import jax\n\nbackend = jax.lib.xla_bridge.get_backend()\nok = hasattr(backend, "live_buffers")\n'
    findings = [f for f in run(source, ["JM401"], fix=False).findings if f.line == 4]
    assert [(f.code, f.fix, f.suggestion) for f in findings] == [("JM401", None, "True")]
    assert findings[0].message.startswith('`hasattr(..., "live_buffers")` guards a removed API')


def test_jm301_folds_the_flag_inside_or_and_not():
    source = ("import jax\n\n\ndef pick(a, b):\n    if a or (b and jax.config.jax_array):\n        return 1\n"
              "    while not (b and jax.config.jax_array):\n        break\n    return 0\n")
    out = run(source, ["JM301"])
    assert "    if a or b:\n" in out.text and "    while not b:\n" in out.text and out.findings == []


def test_jm301_reads_output_gda_as_false_and_says_a_gda_branch_no_longer_runs():
    """Under jax.Array pjit outputs are never GDAs: a read is `False` (it suggested `True`, which
    selected the GDA branch), and the branch it selected is named as the code that no longer runs."""
    source = ("import jax\n\n\ndef outputs(out):\n    if jax.config.jax_parallel_functions_output_gda:\n"
              "        return [s.data for s in out.local_shards]\n    return out\n\n\n"
              "flag = jax.config.jax_parallel_functions_output_gda\n")
    findings = [f for f in run(source, ["JM301"], fix=False).findings if f.code == "JM301"]
    assert [(f.line, f.suggestion) for f in findings] == [(5, "False"), (10, "False")]
    assert "the GlobalDeviceArray branch on line 6 no longer runs" in findings[0].message


def test_jaxs_own_context_managers_named_like_a_mesh_are_no_mesh():
    """`jax.sharding.use_abstract_mesh(am)` is current JAX, not a `with mesh:` (jax's own tests at HEAD)."""
    text = ("import jax\n\n\ndef f(am, mesh):\n    with jax.sharding.use_abstract_mesh(am):\n        pass\n"
            "    with mesh:\n        pass\n")
    found = [f.line for f in run(text, ["JM702"], fix=False).findings]
    assert found == [7]


def test_from_gda_is_left_while_the_target_still_has_it():
    """Before 0.4.7 FROM_GDA works, and a project with jax.Array off needs it for GDA inputs."""
    text = ("from jax.experimental.pjit import pjit, FROM_GDA\n"
            "from jax.sharding import PartitionSpec as P\n\n"
            "f = pjit(lambda x: x, in_axis_resources=FROM_GDA, out_axis_resources=P('x'))\n")
    assert [f.code for f in run(text, ["JM503"], fix=False, target=(0, 4, 5)).findings] == []
    assert [f.code for f in run(text, ["JM503"], fix=False, target=(0, 4, 7)).findings] == ["JM503"]


def test_jax_array_turned_off_is_reported_while_the_option_is_live():
    """Before 0.4.7 the option is live: reads and `True` updates are left, turning it off is reported
    (the GDA migrations write code that needs jax.Array on)."""
    text = ("import jax\n\njax.config.update('jax_array', True)\njax.config.update('jax_array', False)\n"
            "on = jax.config.jax_array\n")
    found = run(text, ["JM301"], fix=True, target=(0, 4, 5))
    assert [(f.line, f.fix) for f in found.findings] == [(4, None)] and found.text == text


def test_a_guard_on_a_removed_name_reads_false_where_no_branch_is_chosen_and_a_present_name_is_left():
    source = ("import jax\n\nLEGACY = hasattr(jax, 'device_put_sharded')\nJIT = hasattr(jax, 'jit')\n"
              "OLD = hasattr(jax, 'device_put_sharded')\n")
    out = run(source, ["JM801"])
    assert out.text == "import jax\n\nLEGACY = False\nJIT = hasattr(jax, 'jit')\nOLD = False\n"
    kept = run(source, ["JM801"], target=(0, 9, 2))  # still there at 0.9.2: nothing to say
    assert kept.text == source and kept.findings == []
