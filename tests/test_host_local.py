"""JM504's suggestion when it cannot convert a call itself: static arguments and keywords are
passed as they are, only the other arguments are converted with the pjit's input specs."""

from __future__ import annotations

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
        "    p_step = pjit(step, in_shardings=(None, P('data')), out_shardings=None, static_argnums=(0,))\n"
        "    with mesh:\n"
        "        return p_step(cfg, state, batch[jax.process_index()])\n")
    assert suggestion.startswith("state_global, arg3_global = multihost_utils.host_local_array_to_global_array("
                                 "(state, batch[jax.process_index()]), mesh, (P(), P('data')));")
    assert "p_step(cfg, state_global, arg3_global)" in suggestion


def test_keywords_are_passed_as_they_are():
    suggestion = _suggestion(
        "def other(g, mesh, x):\n"
        "    f = pjit(g, in_shardings=P('data'), out_shardings=None)\n"
        "    with mesh:\n"
        "        return f(x, y=jax.process_index())\n")
    assert "f(x_global, y=jax.process_index())" in suggestion


@pytest.mark.parametrize("static", ["static_argnums=(0,)", "static_argnames=('cfg',)"])
def test_static_arguments_alone_stop_the_conversion(static):
    """One spec for every argument (no count to disagree with): only the static guard refuses to
    convert `cfg`, which pjit passes as a Python value."""
    body = ("def train(step, mesh, cfg, batch):\n"
            f"    p_step = pjit(step, in_shardings=P('data'), out_shardings=None, {static})\n"
            "    with mesh:\n"
            "        return p_step(cfg, batch[jax.process_index()])\n")
    suggestion = _suggestion(body)  # reported without a fix
    assert [f.message.count("`static_argnums`/`static_argnames`") for f in run(HEAD + body, ["JM504"], fix=False).findings] == [1]
    assert run(HEAD + body, ["JM504"], unsafe=True).text == HEAD + body
    if static.startswith("static_argnums"):
        assert "p_step(cfg, arg2_global)" in suggestion
