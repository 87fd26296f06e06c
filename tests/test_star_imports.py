"""Star imports of JAX modules are resolved from the API history (analysis/scopes.py,
catalog/api_history.star_names), so the rules see what they bind and the prefilter lets the file
through (issue 26, item 7)."""

from __future__ import annotations

import ast

import pytest

from jaxmigrate.analysis.context import FileContext
from jaxmigrate.catalog.api_history import star_names
from jaxmigrate.core.findings import ImportRef
from jaxmigrate.engine.pipeline import analyse
from jaxmigrate.rules import ALL_RULES, BY_CODE
from tests.conftest import run


def _qualnames(source: str) -> dict:
    """Name id -> what the resolver makes of its (last) load."""
    ctx = FileContext.of(source)
    return {n.id: ctx.qualname(n) for n in ctx.nodes(ast.Name) if isinstance(n.ctx, ast.Load)}


STAR_PJIT = "from jax.experimental.pjit import *\n\ng = pjit(f, in_axis_resources=None)\n"


def test_a_star_import_of_a_jax_module_binds_its_public_names():
    found = _qualnames(STAR_PJIT + "s = with_sharding_constraint(x, PartitionSpec('x'))\nc = core\n")
    assert found["pjit"] == "jax.experimental.pjit.pjit"
    assert found["with_sharding_constraint"] == "jax.experimental.pjit.with_sharding_constraint"
    assert found["PartitionSpec"] == "jax.experimental.pjit.PartitionSpec"
    assert found["core"] is None  # a helper the module imported for its own use
    # the internal path resolves as an explicit import of it does
    assert _qualnames("from jax._src.pjit import *\ng = pjit\n")["pjit"] == "jax.experimental.pjit.pjit"


def test_star_names_leave_out_private_helper_and_builtin_names():
    names = star_names("jax.experimental.maps")
    assert "xmap" in names and "Mesh" in names
    assert "zip" not in names and "map" not in names  # the module's own zip/map: a bare `zip` is the builtin
    assert not [n for n in names if n.startswith("_")]
    assert "core" not in star_names("jax.experimental.pjit")  # kind `i`: imported for the module's own use
    assert star_names("numpy") == star_names("jax.no_such_module") == ()


def test_an_explicit_binding_wins_over_a_star_import():
    source = ("from jax.experimental.pjit import *\nfrom jax.sharding import PartitionSpec\n\n\n"
              "def pjit(f):\n    return f\n\n\ng = pjit(PartitionSpec)\n")
    found = _qualnames(source)
    assert found["pjit"] is None  # the project's own
    assert found["PartitionSpec"] == "jax.sharding.PartitionSpec"
    # only star imports of JAX modules are read, and only at module level
    assert _qualnames("from numpy import *\ng = pjit\n")["pjit"] is None
    assert _qualnames("from .jax.experimental.pjit import *\ng = pjit\n")["pjit"] is None


def test_a_star_imported_pjit_is_reported_and_fixed():
    """Issue 26, item 7: it was not reported at all."""
    assert BY_CODE["JM101"].wants(STAR_PJIT.encode())
    assert [f.code for f in run(STAR_PJIT, fix=False).findings] == ["JM701", "JM101"]
    fixed = run(STAR_PJIT, unsafe=True)  # nothing to shard and no mesh entered: `jax.jit(f)` (as 0.4.13 ran it)
    assert fixed.text == "import jax\nfrom jax.experimental.pjit import *\n\ng = jax.jit(f)\n"
    assert fixed.findings == []
    meshed = run(STAR_PJIT + "with mesh:\n    g(1)\n", unsafe=True)  # under a mesh, `None` is replicated: `P()`
    assert "g = jax.jit(f, in_shardings=jax.sharding.PartitionSpec())\n" in meshed.text


@pytest.mark.parametrize("code, text", [
    ("JM801", "from jax import *\n\ny = tree_multimap(f, x, z)\n"),
    ("JM601", "from jax import *\n\ny = tree_map(f, x)\n"),
    ("JM201", "from jax.experimental.pjit import *\n\nspec = PartitionSpec('x')\n"),
    ("JM101", STAR_PJIT),
])
def test_the_prefilter_lets_a_star_imported_trigger_through(code, text):
    """A name right under `jax` needs its module spelled before it: `from jax import *` spells it."""
    assert BY_CODE[code].wants(text.encode())
    assert code in {f.code for f in analyse(text, "example.py", ALL_RULES)}
    assert code in {f.code for f in run(text, fix=False).findings}


def test_a_name_reused_through_a_star_import_must_outlive_the_fix():
    """A moved name a star import binds is not reused for its new name: no fix rewrites the star
    import, and the target's module no longer has it."""
    from jaxmigrate.analysis.imports import importer

    ctx = FileContext.of("from jax.experimental.pjit import *\nfrom jax.sharding import *\ns = PartitionSpec\n")
    assert importer(ctx).reference("jax.sharding.Mesh") == ("Mesh", ())  # the star's own name, still there
    moved = FileContext.of("from jax.experimental.pjit import *\ns = PartitionSpec\n")
    assert importer(moved).reference("jax.sharding.PartitionSpec") == ("jax.sharding.PartitionSpec", (ImportRef("jax"),))
