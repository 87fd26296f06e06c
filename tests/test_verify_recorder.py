"""The recorder that wraps a program's compiled functions is invisible to the program: an
``isinstance`` test of a jitted function against its class answers as it does unrecorded (a library
that refuses already-compiled functions, found in tests/verify_projects/import_time_library)."""

from __future__ import annotations

import pytest

pytest.importorskip("jax", reason='needs the verify extra: pip install "jaxmigrate[verify]"')

from jaxmigrate.verify._recorder import Recorded  # noqa: E402
from jaxmigrate.verify.report import render_text  # noqa: E402
from jaxmigrate.verify.runner import verify_files  # noqa: E402

ASKS = """\
import importlib

import jax
import jax.numpy as jnp

f = jax.jit(lambda a: a + 1)
is_compiled = isinstance(f, {cls})
total = float(f(jnp.float32(1.0)))
"""

SAYS = """\
import jax
import jax.numpy as jnp

f = jax.jit(lambda a: a + 1)
is_compiled = True
total = float(f(jnp.float32(1.0)))
"""


def test_a_recorded_function_is_an_instance_of_the_compiled_functions_class():
    import jax

    fn = jax.jit(lambda a: a)
    assert isinstance(Recorded(fn), type(fn))
    assert Recorded(fn).__class__ is type(fn)


def test_a_program_that_asks_whether_a_function_is_compiled_gets_its_answer(tmp_path):
    import jax

    cls = type(jax.jit(lambda a: a))
    before, after = tmp_path / "asks.py", tmp_path / "says.py"
    before.write_text(ASKS.format(cls=f"importlib.import_module({cls.__module__!r}).{cls.__name__}"))
    after.write_text(SAYS)
    verdict = verify_files(str(before), str(after), devices=1, timeout=120, recheck=False)
    assert verdict.status == "equivalent", render_text(verdict)
