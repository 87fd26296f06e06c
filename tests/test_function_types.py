"""jaxlib's removed function types (JM801, patterns/function_types.py): the jit types become the
type `jax.jit` returns; `PmapFunction`, which has no successor, leaves a tuple of classes as a
tuple, and stays reported alone or before JAX 0.8.0 gets pmap's own type."""

import pytest

from tests.conftest import assert_parses, run

JIT = "type(jax.jit(lambda: 0))"


@pytest.mark.parametrize("before,after", [
    ("T = (jax.xla.xe.PmapFunction, jax.xla.xe.PjitFunction)", f"T = ({JIT},)"),
    ("T = (jax.xla.xe.PjitFunction, jax.xla.xe.PmapFunction)", f"T = ({JIT},)"),
    ("T = (jax.xla.xe.PjitFunction, jax.xla.xe.PmapFunction,)", f"T = ({JIT},)"),
    ("T = (int, jax.xla.xe.PmapFunction, str)", "T = (int, str)"),
    ("T = jax.xla.xe.PjitFunction, jax.xla.xe.PmapFunction", f"T = {JIT},"),
    ("ok = isinstance(f, (jax.lib.xla_extension.CompiledFunction, jax.lib.xla_extension.PmapFunction))",
     f"ok = isinstance(f, ({JIT},))"),
])
def test_tuple_forms(before, after):
    fixed = run(f"import jax\n{before}\n", unsafe=True)
    assert fixed.text == f"import jax\n{after}\n"
    assert_parses(fixed.text)
    assert all(f.code != "JM801" for f in fixed.findings), fixed.findings


def test_pmap_type_alone_stays_reported():
    fixed = run("import jax\nT = jax.xla.xe.PmapFunction\n", unsafe=True)
    assert "jax.xla.xe.PmapFunction" in fixed.text
    assert [f.code for f in fixed.findings] == ["JM801"] and "no type to test for" in fixed.findings[0].message


def test_before_pmap_became_jit_the_pmap_type():
    fixed = run("import jax\nT = (int, jax.xla.xe.PmapFunction)\n", unsafe=True, target=(0, 5, 0))
    assert fixed.text == "import jax\nT = (int, type(jax.pmap(lambda x: x)))\n"


def test_without_unsafe_fixes_it_is_left_as_it_was():
    fixed = run("import jax\nT = (jax.xla.xe.PjitFunction, jax.xla.xe.PmapFunction)\n")
    assert "jax.xla.xe" in fixed.text and {f.fix_safety for f in fixed.findings} == {"unsafe"}
