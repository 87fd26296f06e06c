"""JM504's suggestion when it cannot convert a call itself: static arguments and keywords are
passed as they are, only the other arguments are converted with the pjit's input specs; the
call's statement keeps its targets; the code is Python of one statement a line."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.conftest import run

pytestmark = pytest.mark.usefixtures("pinned_target")

HEAD = """\
import jax
from jax.experimental.pjit import pjit
from jax.sharding import PartitionSpec as P

"""


def _suggestion(body: str) -> str:
    findings = [f for f in run(HEAD + body, ["JM504"], fix=False).findings if f.code == "JM504"]
    assert len(findings) == 1 and findings[0].fix is None
    return findings[0].suggestion


def test_static_arguments_are_passed_as_they_are():
    suggestion = _suggestion(
        "def train(step, mesh, cfg, state, batch):\n"
        "    p_step = pjit(step, in_axis_resources=(None, P('data')), out_axis_resources=None, static_argnums=(0,))\n"
        "    with mesh:\n"
        "        return p_step(cfg, state, batch[jax.process_index()])\n")
    # `state` is under a replicated spec: the same global value in either era, passed as it is
    assert suggestion.startswith("arg3_global, = multihost_utils.host_local_array_to_global_array("
                                 "(batch[jax.process_index()],), mesh, (P('data'),))\n")
    assert "p_step(cfg, state, arg3_global)" in suggestion


def test_keywords_are_passed_as_they_are():
    suggestion = _suggestion(
        "def other(g, mesh, x):\n"
        "    f = pjit(g, in_axis_resources=P('data'), out_axis_resources=None)\n"
        "    with mesh:\n"
        "        return f(x, y=jax.process_index())\n")
    assert "f(x_global, y=jax.process_index())" in suggestion


TRAIN = ("def train(step, mesh, state, batch, rng):\n"
         "    p_train_step = pjit(step, in_axis_resources=(None, P('data'), None), out_axis_resources=(None, None, None))\n"
         "    with mesh: {}\n"
         "\n"
         "rank = jax.process_index()  # multi-process code\n")


def test_the_calls_statement_keeps_its_targets():
    """The issue's case: the suggestion assigns to what the line assigned to, not to `out`."""
    suggestion = _suggestion(TRAIN.format("state, metrics, nextrng = p_train_step(state, batch, rng)"))
    assert suggestion.splitlines() == [
        "batch_global, = multihost_utils.host_local_array_to_global_array((batch,), mesh, (P('data'),))",
        "state, metrics, nextrng = multihost_utils.global_array_to_host_local_array("
        "p_train_step(state, batch_global, rng), mesh, (P(), P(), P()))",
    ]


def test_a_discarded_result_is_called_as_it_was_and_a_nested_call_says_where_out_goes():
    discarded = _suggestion(TRAIN.format("p_train_step(state, batch, rng)"))
    assert discarded.splitlines()[1] == "p_train_step(state, batch_global, rng)"  # as the fix does
    nested = _suggestion(TRAIN.format("metrics = [p_train_step(state, b, rng) for b in batch]"))
    assert nested.splitlines()[1].startswith("out = multihost_utils.global_array_to_host_local_array(p_train_step(")
    assert nested.endswith("  # then use `out` in place of `p_train_step(state, b, rng)`")


def _fixture_suggestions():
    for case in sorted((Path(__file__).resolve().parent.parent / "fixtures" / "JM504").glob("*/before.py")):
        for f in run(case.read_text(), fix=False).findings:
            if f.code == "JM504" and f.suggestion:
                yield f"{case.parent.name}:{f.line}", f.suggestion


def test_every_fixture_suggestion_is_python_of_one_statement_a_line():
    found = list(_fixture_suggestions())
    assert len(found) >= 5
    for where, code in found:
        body = ast.parse(code).body  # parses
        # a statement a line, none joined by `;` (one: only the result converted back, the inputs replicated)
        assert len(body) == len(code.splitlines()) >= 1, where
        back_only = "global_array_to_host_local_array(" in code and "host_local_array_to_global_array(" not in code
        assert len(body) >= 2 or back_only, where
        assert [s.lineno for s in body] == list(range(1, len(body) + 1)), where


@pytest.mark.parametrize("static", ["static_argnums=(0,)", "static_argnames=('cfg',)"])
def test_static_arguments_alone_stop_the_conversion(static):
    """One spec for every argument (no count to disagree with): only the static guard refuses to
    convert `cfg`, which pjit passes as a Python value."""
    body = ("def train(step, mesh, cfg, batch):\n"
            f"    p_step = pjit(step, in_axis_resources=P('data'), out_axis_resources=None, {static})\n"
            "    with mesh:\n"
            "        return p_step(cfg, batch[jax.process_index()])\n")
    suggestion = _suggestion(body)  # reported without a fix
    assert [f.message.count("`static_argnums`/`static_argnames`") for f in run(HEAD + body, ["JM504"], fix=False).findings] == [1]
    assert run(HEAD + body, ["JM504"], unsafe=True).text == HEAD + body
    if static.startswith("static_argnums"):
        assert "p_step(cfg, arg2_global)" in suggestion


# the era (patterns/era.py): only GDA-era code had host-local inputs --------------------------------------------
LOOP = """\
import jax
from jax.experimental.pjit import pjit
from jax.sharding import PartitionSpec as P


def train(step, mesh, params, batch):
    p_step = pjit(step, {specs})
    with mesh:
        return p_step(params, batch[jax.process_index()])
"""


@pytest.mark.parametrize("specs, era", [
    ("in_shardings=(None, P('data')), out_shardings=None", None),
    ("in_axis_resources=(None, P('data')), out_axis_resources=None", "`in_axis_resources` at line 7"),
])
def test_values_of_unseen_origin_are_reported_only_in_code_that_says_it_is_gda_era(specs, era):
    from jaxmigrate.analysis.context import FileContext
    from jaxmigrate.patterns.era import gda_era_evidence

    text = LOOP.format(specs=specs).replace("batch[jax.process_index()]", "batch") + "\nrank = jax.process_index()\n"
    assert gda_era_evidence(FileContext(text)) == era
    codes = [f.code for f in run(text, ["JM504"], fix=False).findings]
    assert codes == ([] if era is None else ["JM504"])


@pytest.mark.parametrize("specs", [
    "in_shardings=(None, P('data')), out_shardings=None",
    "in_axis_resources=(None, P('data')), out_axis_resources=None",
])
@pytest.mark.parametrize("jit", [False, True])
def test_this_process_s_data_is_reported_whatever_the_spelling(specs, jit):
    """This process's slice under a spec that shards it is host-local data in either era (jax.Array's
    pjit and jit raise on NumPy inputs so given with two processes): reported from the call and its
    module, for the pjit as it is and for the `jax.jit` JM701 makes of it."""
    text = LOOP.format(specs=specs)
    if jit:
        text = text.replace("pjit(step, ", "jax.jit(step, ")
    findings = [f for f in run(text, ["JM504"], fix=False).findings if f.code == "JM504"]
    assert len(findings) == 1 and findings[0].fix is not None and "GDA-era by" not in findings[0].message


@pytest.mark.parametrize("evidence", [
    "from jax.experimental.global_device_array import GlobalDeviceArray\n",
    "jax.config.update('jax_parallel_functions_output_gda', False)\n",
    "from jax.experimental.pjit import FROM_GDA\n",
])
def test_a_gda_era_name_anywhere_in_the_module_makes_it_gda_era(evidence):
    text = LOOP.format(specs="in_shardings=(None, P('data')), out_shardings=None") + evidence
    assert "JM504" in [f.code for f in run(text, ["JM504"], fix=False).findings]


def test_the_safe_fix_renames_and_a_later_check_still_reports():
    """Issue 36: JM101's rename is exact and applies whatever JM504 reports of the same pjit (it
    waited for JM504 once, and the call raised `TypeError` until someone edited it). JM504 reports
    the call from its arguments (this process's slice), not from the old keyword, so the check after
    a safe `fix` (whose output pre-commit and CI throw away) still reports it."""
    text = LOOP.format(specs="in_axis_resources=(None, P('data')), out_axis_resources=None")
    out = run(text, ["JM101", "JM504"], fix=True)
    assert "in_shardings=(None, P('data')), out_shardings=None" in out.text
    assert [f.code for f in out.findings] == ["JM504"]
    again = run(out.text, ["JM101", "JM504"], fix=False)  # the next check
    assert [f.code for f in again.findings] == ["JM504"] and again.findings[0].fix is not None
    converted = run(text, ["JM101", "JM504"], unsafe=True)
    assert "in_shardings=(None, P('data'))" in converted.text and converted.findings == []
    assert run(out.text, ["JM101", "JM504"], unsafe=True).text == converted.text  # in two steps as in one


def test_a_silenced_finding_holds_nothing_back():
    """`# noqa: JM504` says the call was reviewed: nothing rests on the keyword any more."""
    text = LOOP.format(specs="in_axis_resources=(None, P('data')), out_axis_resources=None").replace(
        "batch[jax.process_index()])\n", "batch[jax.process_index()])  # noqa: JM504\n")
    out = run(text, ["JM101", "JM504"], fix=True)
    assert "in_shardings=(None, P('data'))" in out.text and out.findings == []


def test_a_name_rebound_from_itself_ends_the_provenance_search():
    """`x = x.reshape(...)` follows `x` to its own binding: the depth bound ends it (it once
    restarted at each method call and recursed until Python stopped it)."""
    text = LOOP.format(specs="in_axis_resources=(P('data'), P('data')), out_axis_resources=None").replace(
        "def train(step, mesh, params, batch):\n",
        "def train(step, mesh, params, batch):\n    params = np.zeros(4)\n    params = params.reshape(4)\n").replace(
        "from jax.experimental.pjit import pjit\n", "import numpy as np\nfrom jax.experimental.pjit import pjit\n")
    findings = [f for f in run(text, ["JM504"], fix=False).findings if f.code == "JM504"]
    assert len(findings) == 1 and "(origin not visible)" in findings[0].message


ARRAY_ON = """\
import jax
import numpy as np
from jax._src import test_util as jtu
from jax._src.config import jax_array
from jax.experimental.pjit import pjit
from jax.sharding import PartitionSpec as P

rank = jax.process_index()


{decorator}def run(mesh):
    data = np.arange(8.0)
    {block}
        f = pjit(lambda a: a, in_axis_resources=P("x"), out_axis_resources=P("x"))
        out = f(data)
    return out
"""


@pytest.mark.parametrize("decorator,block,converted", [
    ("", "with mesh:", True),
    ("", "with jax_array(True), mesh:", False),
    ("@jtu.with_config(jax_array=True)\n", "with mesh:", False),
    ("@jax_array(True)\n", "with mesh:", False),
    ("", "with jax_array(False), mesh:", False),
])
def test_blocks_that_set_the_jax_array_mode_are_left(decorator, block, converted):
    """JAX's own GDA-era tests ran blocks in both modes: with jax.Array on their numpy inputs are
    global; with it off they are GDA-mode code a conversion would make raise. The decorator is
    dropped by JM301 in the first round: later rounds remember it."""
    out = run(ARRAY_ON.format(decorator=decorator, block=block), unsafe=True, target=(0, 4, 14))
    assert ("host_local_array_to_global_array" in out.text) is converted
    assert [f.code for f in out.findings if f.code == "JM504"] == []
    if decorator.startswith("@jtu"):
        assert "jax_array=True" not in out.text


def test_a_test_class_that_skips_in_one_mode_is_left():
    """`if jax.config.jax_array: self.skipTest(...)` in setUp: the class runs only with jax.Array off.
    JM301 folds the test to an unconditional skip in the first round; the later rounds remember."""
    text = """\
import unittest

import jax
import numpy as np
from jax.experimental.pjit import pjit
from jax.sharding import PartitionSpec as P

rank = jax.process_index()


class GdaOnly(unittest.TestCase):
    def setUp(self):
        if jax.config.jax_array:
            self.skipTest("GDA mode only")

    def test_step(self, mesh=None):
        data = np.arange(8.0)
        with mesh:
            f = pjit(lambda a: a, in_axis_resources=P("x"), out_axis_resources=P("x"))
            out = f(data)
        return out
"""
    out = run(text, unsafe=True, target=(0, 4, 14))
    assert "host_local_array_to_global_array" not in out.text and "jax.config.jax_array" not in out.text
    assert [f.code for f in out.findings if f.code == "JM504"] == []


# issue 28, items 2 and 3: what is converted, what is left, and the jax.Array code of the migration guide -----------
GUIDE = """\
import jax
import numpy as np
from jax.experimental import multihost_utils
from jax.experimental.pjit import pjit
from jax.sharding import Mesh, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()), ("data",))
local_inp = np.arange(12.0).reshape(4, 3) + jax.process_index()


def f(key, x):
    return x * 2


key = jax.random.PRNGKey(1)
with mesh:
    replicated = pjit(lambda k: k, in_axis_resources=None, out_axis_resources=None)(key)
    global_inp = multihost_utils.host_local_array_to_global_array(local_inp, mesh, P("data"))
    global_out = pjit(f, in_axis_resources=(P(None), P("data")), out_axis_resources=P("data"))(key, global_inp)
    total = pjit(lambda x: x.sum(), in_axis_resources=P("data"), out_axis_resources=None)(global_out)
"""


def test_the_guides_jax_array_code_is_left_and_migrated_to_jit():
    """A key made with `PRNGKey` under a replicated spec, an input converted by hand, the global
    output of such a call: none is host-local, so nothing is reported and nothing holds pjit and
    `with mesh:` back (the module enables jax.Array another way: JAX_ARRAY=1, an absl flag)."""
    assert [f.code for f in run(GUIDE, ["JM504"], fix=False).findings] == []
    out = run(GUIDE, unsafe=True, target=(0, 10, 0))
    assert "jax.jit(f, in_shardings=(P(None), P(\"data\"))" in out.text and "with jax.set_mesh(mesh):" in out.text
    assert out.text.count("host_local_array_to_global_array") == 1 and "global_array_to_host_local_array" not in out.text


def test_a_call_that_converts_inputs_itself_keeps_its_global_result():
    """An argument of unseen origin beside a converted one: reported, and the code to write
    converts that argument alone and leaves the result global (it once converted the converted
    input again and turned the global output into this process's part)."""
    text = GUIDE.replace("(key, global_inp)", "(key, global_inp, extra)").replace(
        "(P(None), P(\"data\"))", "(P(None), P(\"data\"), P(\"data\"))").replace("with mesh:", "def g(extra):\n  with mesh:")
    text = text.replace("\n    ", "\n      ")
    found = [f for f in run(text, ["JM504"], fix=False).findings if f.code == "JM504"]
    assert len(found) == 1 and found[0].fix is None
    assert "converted with `host_local_array_to_global_array` already" in found[0].message
    assert found[0].suggestion.splitlines() == [
        "extra_global, = multihost_utils.host_local_array_to_global_array((extra,), mesh, (P(\"data\"),))",
        "global_out = pjit(f, in_axis_resources=(P(None), P(\"data\"), P(\"data\")), out_axis_resources=P(\"data\"))"
        "(key, global_inp, extra_global)",
    ]


def test_a_module_that_turns_jax_array_on_passes_global_values():
    """`jax.config.update("jax_array", True)`, as the guide enables it: numpy data is a global value."""
    text = LOOP.format(specs="in_axis_resources=(None, P('data')), out_axis_resources=None") + \
        "\njax.config.update('jax_array', True)\n"
    assert [f.code for f in run(text, ["JM504"], fix=False).findings] == []
    inside = text.replace("\njax.config.update('jax_array', True)\n",
                          "\ndef setup():\n    jax.config.update('jax_array', True)\n")
    assert [f.code for f in run(inside, ["JM504"], fix=False).findings] == ["JM504"]  # in a function: not the module's


def test_the_conversions_alone_do_not_make_a_module_multi_process():
    """JM503's fix writes `host_local_array_to_global_array` for mixed FROM_GDA in a single-process
    program: the module does not become multi-process code for JM504 or the JM701/JM702 plan."""
    from jaxmigrate.analysis.context import FileContext
    from jaxmigrate.patterns.gda import is_multi_process

    single = GUIDE.replace(" + jax.process_index()", "")
    assert not is_multi_process(FileContext(single))
    assert is_multi_process(FileContext(GUIDE))
    assert is_multi_process(FileContext(single + "multihost_utils.sync_global_devices('x')\n"))


def test_replicated_inputs_with_a_sharded_result_convert_the_result_alone():
    """numpy data under a replicated spec needs no conversion; GDA-era pjit still returned this
    process's part of a sharded output: the fix converts the result back, and says what may change."""
    body = ("def run(step, mesh):\n"
            "    data = np.ones(8) * jax.process_index()\n"
            "    f = pjit(step, in_axis_resources=None, out_axis_resources=P('data'))\n"
            "    with mesh:\n"
            "        out = f(data)\n"
            "    return out\n")
    text = HEAD.replace("import jax\n", "import jax\nimport numpy as np\n") + body
    found = [f for f in run(text, ["JM504"], fix=False).findings if f.code == "JM504"]
    assert len(found) == 1 and found[0].fix is not None and "the fix converts the result back" in found[0].message
    out = run(text, ["JM504"], unsafe=True)
    assert "out = multihost_utils.global_array_to_host_local_array(f(data), mesh, P('data'))" in out.text
    assert "host_local_array_to_global_array" not in out.text


def test_a_fix_that_drops_the_gda_era_import_leaves_the_call_reported():
    """Positional specs: the module says it is GDA-era by its GlobalDeviceArray import alone. JM502's
    fix drops the import (with the check that reads the class); the call passes this process's
    slice, so a later check still reports it."""
    text = ("import jax\n"
            "from jax.experimental.global_device_array import GlobalDeviceArray\n"
            "from jax.experimental.pjit import pjit\n"
            "from jax.sharding import PartitionSpec as P\n\n\n"
            "def train(step, mesh, batch):\n"
            "    p_step = pjit(step, P('data'), None)\n"
            "    with mesh:\n"
            "        return p_step(batch[jax.process_index()])\n\n\n"
            "def is_gda(x):\n"
            "    assert isinstance(x, GlobalDeviceArray)\n")
    out = run(text, ["JM502"], unsafe=True)
    assert "GlobalDeviceArray" not in out.text
    assert "JM504" in [f.code for f in run(out.text, ["JM502", "JM504"], fix=False).findings]


def test_a_fix_that_deletes_the_reported_call_resolves_it():
    """JM301 keeps the jax.Array branch of `if jax.config.jax_array: ... else: <GDA-mode code>`: it
    deletes the reported call together with its keywords, which resolves the finding."""
    text = ("import jax\n"
            "import numpy as np\n"
            "from jax.experimental.pjit import pjit\n"
            "from jax.sharding import PartitionSpec as P\n\n\n"
            "def gather(mesh, inp):\n"
            "    if jax.config.jax_array:\n"
            "        return inp\n"
            "    else:\n"
            "        with mesh:\n"
            "            return pjit(lambda x: x, in_axis_resources=P('x'), out_axis_resources=None)(inp)\n\n\n"
            "rank = jax.process_index()\n")
    checked = run(text, ["JM101", "JM301", "JM504"], fix=False, target=(0, 4, 14))
    assert {f.code: f.fix is not None for f in checked.findings} == {"JM101": True, "JM301": True, "JM504": False}
    out = run(text, ["JM101", "JM301", "JM504"], target=(0, 4, 14))
    assert "pjit(" not in out.text and out.findings == []


def test_a_module_that_turned_jax_array_on_is_remembered_after_jm301_deletes_the_line():
    """At 0.4.8 JM301 deletes `jax.config.update("jax_array", True)` (no longer an option to turn
    on) and JM101 keeps `in_axis_resources`: the later rounds of the run still know the module's
    pjit inputs are global values, and convert nothing."""
    text = LOOP.format(specs="in_axis_resources=(None, P('data')), out_axis_resources=None").replace(
        "\n\ndef train", "\njax.config.update('jax_array', True)\n\n\ndef train")
    out = run(text, unsafe=True, target=(0, 4, 8))
    assert "jax_array" not in out.text and "multihost_utils" not in out.text
    assert [f.code for f in out.findings if f.code == "JM504"] == []


LOADER = '''\
import jax
import numpy as np
from jax.experimental.pjit import pjit
from jax.sharding import Mesh, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()).reshape(4, 2), ("data", "model"))


def load_local_batch(step):
    rows = np.arange(12.0).reshape(4, 3) + 100.0 * jax.process_index()
    return {returned}


with mesh:
    f = pjit(lambda b: b * 2, in_axis_resources=P("data"), out_axis_resources=P("data"))
    out = f(load_local_batch(0))
'''


@pytest.mark.parametrize("returned, converted", [
    ("np.asarray(rows + step)", True),  # every return is this process's numpy data
    ("rows + step", False),  # `step` may be anything: a jax.Array would make the sum global
])
def test_a_loader_of_this_module_that_returns_numpy_is_host_data(returned, converted):
    out = run(LOADER.format(returned=returned), ["JM504"], unsafe=True, target=(0, 4, 30))
    assert ("host_local_array_to_global_array((load_local_batch(0),)" in out.text) == converted, out.text


def test_the_jax_jit_jm701_makes_is_still_reported():
    """The migration guide's loop (fixtures/JM504/two_process_guide_loop) with every other rule's fixes
    applied first (pjit -> jax.jit, `with mesh:` -> `jax.set_mesh`, no pjit word left): JM504 still
    reports both calls, and converts them as it would have converted the pjit's."""
    from tests.test_rule_independence import EVERY

    before = (Path(__file__).parent.parent / "fixtures" / "JM504" / "two_process_guide_loop" / "before.py").read_text()
    before = '"""The guide\'s loop."""\n' + before.split('"""', 2)[2].lstrip("\n")  # no word of pjit in the docstring
    others = run(before, [c for c in EVERY if c != "JM504"], unsafe=True).text
    assert "pjit" not in others and "jax.set_mesh(mesh)" in others
    found = [f for f in run(others, fix=False).findings if f.code == "JM504"]
    assert len(found) == 2 and all(f.fix is not None for f in found)
    assert run(others, unsafe=True).text == run(before, unsafe=True).text
