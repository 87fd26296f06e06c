"""Dropping names from import statements and moving them to new ones keeps the comments on the
names' lines with the names (engine/imports.py, rules/statements.py)."""

from __future__ import annotations

from jaxmigrate.engine.imports import fix_imports
from jaxmigrate.rules.base import ImportRef
from jaxmigrate.rules.statements import alias_comments, render_import_from

MULTI = '''\
from jax.experimental.pjit import (
    # the sharding helpers
    pjit,  # keep me
    FROM_GDA  # gda: goes with its name
)
x = pjit
'''


def test_dropping_the_last_name_takes_its_comment_and_keeps_the_others():
    out = fix_imports(MULTI, (), [ImportRef("jax.experimental.pjit", "FROM_GDA")])
    assert out == '''\
from jax.experimental.pjit import (
    # the sharding helpers
    pjit,  # keep me
)
x = pjit
'''


def test_dropping_a_name_with_a_comma_keeps_the_next_names_comment():
    source = "from m import (\n    a,  # on a\n    b,  # on b\n)\nx = b\n"
    assert fix_imports(source, (), [ImportRef("m", "a")]) == "from m import (\n    b,  # on b\n)\nx = b\n"


def test_alias_comments_finds_the_comment_on_each_names_line():
    assert alias_comments(MULTI.split("\nx =")[0], {("FROM_GDA", None), ("pjit", None)}) == {
        ("pjit", None): "# keep me", ("FROM_GDA", None): "# gda: goes with its name"}
    assert alias_comments("from m import a, b", {("a", None)}) == {}


def test_render_import_from():
    assert render_import_from("m", [("a", None), ("b", None)], True, "", "\n") == "from m import a, b"
    assert render_import_from("m", [("a as A", "# c")], True, "", "\n") == "from m import a as A  # c"
    assert render_import_from("m", [("a", "# c"), ("b", None)], True, "    ", "\n") == (
        "from m import (\n        a,  # c\n        b,\n    )")
    assert render_import_from("m", [("a", "# c")], False, "", "\n") == "from m import (\n    a,  # c\n)"


def test_a_re_rendered_import_keeps_the_files_line_endings():
    source = MULTI.replace("\n", "\r\n")
    out = fix_imports(source, (), [ImportRef("jax.experimental.pjit", "FROM_GDA")])
    assert out == "from jax.experimental.pjit import (\r\n    # the sharding helpers\r\n    pjit,  # keep me\r\n)\r\nx = pjit\r\n"


def test_a_dotted_name_below_a_submodule_imports_that_submodule():
    """`import jax` does not load `jax.extend.core`: a fix that writes `jax.extend.core.Primitive`
    (the local name `Primitive` being taken) imports `jax.extend.core` as well."""
    from tests.conftest import run

    src = "import jax\n\n\nclass Primitive:\n    pass\n\n\np = jax.core.Primitive('x')\n"
    out = run(src).text
    assert "import jax.extend.core\n" in out and "p = jax.extend.core.Primitive('x')" in out
    again = run(out).text  # with the submodule imported, nothing more is added
    assert again == out
