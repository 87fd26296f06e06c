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
    assert suggestion.startswith("state_global, arg3_global = multihost_utils.host_local_array_to_global_array("
                                 "(state, batch[jax.process_index()]), mesh, (P(), P('data')))\n")
    assert "p_step(cfg, state_global, arg3_global)" in suggestion


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
        "state_global, batch_global, rng_global = multihost_utils.host_local_array_to_global_array("
        "(state, batch, rng), mesh, (P(), P('data'), P()))",
        "state, metrics, nextrng = multihost_utils.global_array_to_host_local_array("
        "p_train_step(state_global, batch_global, rng_global), mesh, (P(), P(), P()))",
    ]


def test_a_discarded_result_is_called_as_it_was_and_a_nested_call_says_where_out_goes():
    discarded = _suggestion(TRAIN.format("p_train_step(state, batch, rng)"))
    assert discarded.splitlines()[1] == "p_train_step(state_global, batch_global, rng_global)"  # as the fix does
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
        assert len(body) == len(code.splitlines()) >= 2, where  # a statement a line, none joined by `;`
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
def test_only_code_that_says_it_is_gda_era_is_reported(specs, era):
    from jaxmigrate.analysis.context import FileContext
    from jaxmigrate.patterns.era import gda_era_evidence

    text = LOOP.format(specs=specs)
    assert gda_era_evidence(FileContext(text)) == era
    codes = [f.code for f in run(text, ["JM504"], fix=False).findings]
    assert codes == ([] if era is None else ["JM504"])


@pytest.mark.parametrize("evidence", [
    "from jax.experimental.global_device_array import GlobalDeviceArray\n",
    "jax.config.update('jax_parallel_functions_output_gda', False)\n",
    "from jax.experimental.pjit import FROM_GDA\n",
])
def test_a_gda_era_name_anywhere_in_the_module_makes_it_gda_era(evidence):
    text = LOOP.format(specs="in_shardings=(None, P('data')), out_shardings=None") + evidence
    assert "JM504" in [f.code for f in run(text, ["JM504"], fix=False).findings]


def test_the_safe_fix_that_rewrites_the_evidence_leaves_the_finding_in_the_run():
    """JM101 rewrites `in_axis_resources` in the first round: the later rounds inherit the era of
    the text as given, so `fix` lists the JM504 finding as left, not "0 findings left"."""
    text = LOOP.format(specs="in_axis_resources=(None, P('data')), out_axis_resources=None")
    out = run(text, ["JM101", "JM504"], fix=True)
    assert "in_shardings=(None, P('data'))" in out.text and "in_axis_resources" not in out.text
    assert [f.code for f in out.findings] == ["JM504"]


def test_a_name_rebound_from_itself_ends_the_provenance_search():
    """`x = x.reshape(...)` follows `x` to its own binding: the depth bound ends it (it once
    restarted at each method call and recursed until Python stopped it)."""
    text = LOOP.format(specs="in_axis_resources=(None, P('data')), out_axis_resources=None").replace(
        "def train(step, mesh, params, batch):\n",
        "def train(step, mesh, params, batch):\n    params = np.zeros(4)\n    params = params.reshape(4)\n").replace(
        "from jax.experimental.pjit import pjit\n", "import numpy as np\nfrom jax.experimental.pjit import pjit\n")
    findings = [f for f in run(text, ["JM504"], fix=False).findings if f.code == "JM504"]
    assert len(findings) == 1 and "comes from is not visible" in findings[0].message


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
