"""The server's `# noqa` code action: the edit silences the finding where a comment can go, and
no edit is offered where one cannot (the finding's line ends inside a string or with a backslash)."""

from __future__ import annotations

import pytest

from jaxmigrate import api
from jaxmigrate.server import _noqa_edit
from tests.test_api import _applied

PJIT = "from jax.experimental.pjit import pjit\n\n"


def _first(text: str, code: str = "JM101") -> api.Finding:
    return next(f for f in api.check_source(text, "x.py", api.Options(target_jax="0.7.0", cache=False)) if f.code == code)


@pytest.mark.parametrize("line, written", [
    ("f = pjit(abs, in_axis_resources=None)", "f = pjit(abs, in_axis_resources=None)  # noqa: JM101"),
    ("f = pjit(abs, in_axis_resources=None)  # a note", "f = pjit(abs, in_axis_resources=None)  # a note  # noqa: JM101"),
    ("f = pjit(abs, in_axis_resources=None)  # noqa: JM203 (the mesh)",
     "f = pjit(abs, in_axis_resources=None)  # noqa: JM203, JM101 (the mesh)"),
    ("f = pjit(abs,  in_axis_resources=None,\n         donate_argnums=())",
     "f = pjit(abs,  in_axis_resources=None,  # noqa: JM101"),
])
def test_the_noqa_edit_silences_the_finding(line, written):
    text = PJIT + line + "\n"
    finding = _first(text)
    fixed = _applied(text, [_noqa_edit(text, finding)])
    assert fixed.splitlines()[2] == written
    assert not [f for f in api.check_source(fixed, "x.py", api.Options(target_jax="0.7.0", cache=False))
                if f.code == "JM101" and f.line == 3]


@pytest.mark.parametrize("line", [
    'f = pjit(abs, in_axis_resources=None, doc="""two\nlines""")',  # the line ends inside a string
    "f = pjit(abs, in_axis_resources=None) + \\\n    0",  # a comment cannot follow the backslash
])
def test_no_noqa_edit_where_a_comment_cannot_go(line):
    text = PJIT + line + "\n"
    assert _noqa_edit(text, _first(text)) is None
