"""JM502 on what a pjitted function returned (patterns/pjit_outputs.py): a GDA where GDA outputs
were on, by a class decorator or in the text a fix round started from; elsewhere reported."""

from __future__ import annotations

from jaxmigrate.analysis.context import FileContext
from jaxmigrate.engine.pipeline import analyse
from jaxmigrate.patterns.era import GDA_OUTPUTS, origin_facts
from jaxmigrate.rules import BY_CODE
from tests.conftest import run

PJIT_OUTPUT = '''\
import jax
from jax.experimental.pjit import pjit
{flag}

def layout(x):
    f = pjit(lambda a: a * 2, in_axis_resources=None, out_axis_resources=None)
    out = f(x)
    return out.mesh_axes
'''

TEST_CLASS = '''\
import unittest
from jax._src import test_util as jtu
from jax.experimental.pjit import pjit


@jtu.with_config(jax_parallel_functions_output_gda=True)
class OutputTest(unittest.TestCase):
    def test_layout(self):
        out = pjit(lambda a: a, in_axis_resources=None, out_axis_resources=None)(1.0)
        self.assertEqual(out.mesh_axes, ())
'''


def _jm502(text: str, origin=None):
    return [f for f in analyse(text, "example.py", [BY_CODE["JM502"]], None, origin) if "mesh_axes" in f.message]


def test_with_config_on_a_test_class_makes_its_outputs_gdas():
    fixed = run(TEST_CLASS, ["JM502"])
    assert "out.sharding.spec" in fixed.text


def test_the_option_turned_on_before_a_fix_round_still_counts():
    on = PJIT_OUTPUT.format(flag='jax.config.update("jax_parallel_functions_output_gda", True)')
    assert origin_facts(FileContext.of(on, "example.py", None)) == {GDA_OUTPUTS: True}
    [found] = _jm502(on)
    assert found.fix is not None and found.fix_safety == "safe"
    gone = PJIT_OUTPUT.format(flag="")  # JM301 deleted the line in an earlier round
    [inherited] = _jm502(gone, {GDA_OUTPUTS: True})
    assert inherited.fix is not None
    [reported] = _jm502(gone)  # the text as given never turned it on: reported with what to write
    assert reported.fix is None and reported.suggestion == "out.sharding.spec"
