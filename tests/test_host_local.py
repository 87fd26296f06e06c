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
        "    p_step = pjit(step, in_shardings=(None, P('data')), out_shardings=None, static_argnums=(0,))\n"
        "    with mesh:\n"
        "        return p_step(cfg, state, batch[jax.process_index()])\n")
    assert suggestion.startswith("state_global, arg3_global = multihost_utils.host_local_array_to_global_array("
                                 "(state, batch[jax.process_index()]), mesh, (P(), P('data')))\n")
    assert "p_step(cfg, state_global, arg3_global)" in suggestion


def test_keywords_are_passed_as_they_are():
    suggestion = _suggestion(
        "def other(g, mesh, x):\n"
        "    f = pjit(g, in_shardings=P('data'), out_shardings=None)\n"
        "    with mesh:\n"
        "        return f(x, y=jax.process_index())\n")
    assert "f(x_global, y=jax.process_index())" in suggestion


TRAIN = ("def train(step, mesh, state, batch, rng):\n"
         "    p_train_step = pjit(step, in_shardings=(None, P('data'), None), out_shardings=(None, None, None))\n"
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
            f"    p_step = pjit(step, in_shardings=P('data'), out_shardings=None, {static})\n"
            "    with mesh:\n"
            "        return p_step(cfg, batch[jax.process_index()])\n")
    suggestion = _suggestion(body)  # reported without a fix
    assert [f.message.count("`static_argnums`/`static_argnames`") for f in run(HEAD + body, ["JM504"], fix=False).findings] == [1]
    assert run(HEAD + body, ["JM504"], unsafe=True).text == HEAD + body
    if static.startswith("static_argnums"):
        assert "p_step(cfg, arg2_global)" in suggestion
