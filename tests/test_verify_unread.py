"""A global bound on the before side only (issue 40, item 3): listed, not a difference, when the
before file never reads it (a loop variable the migrated loop no longer needs); a difference
when something the program computed or printed reads it."""

from __future__ import annotations

import pytest

from jaxmigrate.verify._unread import unread_globals

HEAD = """\
import jax
import jax.numpy as jnp

step = jax.jit(lambda a: a * 2.0)
state = jnp.arange(8.0)
"""


def test_unread_globals_are_those_nothing_loads():
    assert unread_globals("for i in range(3):\n    x = f(x)\n") == {"i"}
    assert unread_globals("for i in range(3):\n    print(i)\n") == set()  # printed
    assert unread_globals("n = 1\nn += 1\n") == set()  # an augmented assignment reads it
    assert unread_globals("t = 1\ndef g():\n    return t\n") == set()  # read in a function
    assert unread_globals("def g():\n    global z\n    z = 1\ng()\n") == set()  # a result: compared
    assert unread_globals("r = f()\n") == set()  # a result nothing reads is still compared
    assert unread_globals("with lock() as held:\n    x = f(x)\n") == {"held"}
    assert unread_globals("a = 1\nprint(globals()['a'])\n") == set()  # reached by name: none unread
    assert unread_globals("a = 1\nimport __main__\nprint(__main__.a)\n") == set()
    assert unread_globals("a = (\n") == set()  # not parsed: none


def _verify(tmp_path, before: str, after: str):
    pytest.importorskip("jax", reason='needs the verify extra: pip install "jaxmigrate[verify]"')
    from jaxmigrate.verify.runner import verify_files

    (tmp_path / "before.py").write_text(before)
    (tmp_path / "after.py").write_text(after)
    return verify_files(str(tmp_path / "before.py"), str(tmp_path / "after.py"), timeout=60)


def test_a_dropped_loop_variable_is_equivalent_and_listed(tmp_path):
    verdict = _verify(tmp_path, HEAD + "for i in range(3):\n    state = step(state)\n",
                      HEAD + "state = step(step(step(state)))\n")
    assert verdict.status == "equivalent", verdict.reason
    assert verdict.unread == ["`i`: int 2"]
    from jaxmigrate.verify.report import render_text

    assert "bound on the before side only and never read there, not compared: `i`: int 2" in render_text(verdict)


def test_a_dropped_global_the_program_printed_is_divergent(tmp_path):
    verdict = _verify(tmp_path, HEAD + "for i in range(3):\n    state = step(state)\nprint('steps', i + 1)\n",
                      HEAD + "state = step(step(step(state)))\nprint('steps', 3)\n")
    assert verdict.status == "divergent", verdict.reason
    assert [d.where for d in verdict.differences] == ["global `i`"] and not verdict.unread
