"""One rename machine (issue 25): which rule owns a moved name is decided by the table
``catalog/owners.py`` when it is built, not by comparing findings in each file; the one renamer
(``patterns/renames.py``) writes both tables' import rewrites. That no other module writes them:
tests/test_layers.py."""

from __future__ import annotations

import ast

from jaxmigrate.analysis.context import FileContext
from jaxmigrate.catalog.moves import MOVES
from jaxmigrate.catalog.owners import MIGRATED, OWNERS, owner
from jaxmigrate.patterns.renames import rewrite_from_import
from jaxmigrate.rules import ALL_RULES, BY_CODE
from jaxmigrate.rules.moved_name_base import MovedNameRule
from tests.conftest import run


def test_every_owner_is_a_rule_and_each_moved_name_rule_takes_exactly_its_moves():
    assert set(OWNERS.values()) <= set(BY_CODE)
    movers = [r for r in ALL_RULES if issubclass(r, MovedNameRule)]
    assert {r.code for r in movers} == {m.rule for m in MOVES}
    for rule in movers:
        mine = {m.old for m in MOVES if rule()._move(m.old) is not None}
        assert mine == {name for name, code in OWNERS.items() if code == rule.code and name not in MIGRATED}


def test_owner_of_names_and_of_what_lies_under_a_moved_module():
    assert owner("jax.experimental.maps.Mesh") == "JM201"
    assert owner("jax.tree_map") == "JM601"
    assert owner("jax.experimental.pjit.pjit") == "JM701"
    assert owner("jax.experimental.gda_serialization.serialization.run_serialization") == "JM201"
    assert owner("jax.experimental.gda_serialization_x") is None  # a module's prefix is not the module
    assert owner("jax.experimental.maps.xmap") is None  # the API history reports it (JM203 where it spans it)
    assert owner("jax.numpy.product") is None


LEGACY = """\
import numpy as np
from jax.experimental.maps import Mesh

mesh = Mesh(np.array(devices), ("x",))
"""


def test_a_name_a_hand_rule_owns_is_never_the_history_rules():
    """Decided by the table: run alone, JM801 does not report `maps.Mesh` (no JM201 finding is
    there to hide it), while JM201 reports and fixes its import."""
    assert [f.code for f in run(LEGACY, ["JM801"], fix=False).findings] == []
    assert [f.code for f in run(LEGACY, ["JM201"], fix=False).findings] == ["JM201"]
    product = "import jax.numpy as jnp\n\nx = jnp.product(jnp.ones(3))\n"
    assert [f.code for f in run(product, ["JM801"], fix=False).findings] == ["JM801"]


def test_jm802_leaves_pjit_to_jm701():
    text = "from jax.experimental.pjit import pjit\n\nf = pjit(abs)\n"
    assert not [f for f in run(text, ["JM802"], fix=False).findings]


def _fix(text: str, module_alias_new, **options) -> str:
    ctx = FileContext.of(text)
    node = next(n for n in ast.walk(ctx.tree) if isinstance(n, ast.ImportFrom))
    moved = [(next(a for a in node.names if a.name == name), new) for name, new in module_alias_new]
    out = text
    for edit in sorted(rewrite_from_import(ctx, node, moved, **options), key=lambda e: e.start, reverse=True):
        out = out[:edit.start] + edit.text + out[edit.end:]
    return out


def test_the_renamer_keeps_the_local_name_or_renames_the_uses():
    text = "from jax.experimental.maps import mesh, xmap  # old\n\nwith mesh(d, n):\n    pass\n"
    # the hand table's moves: the new name, each use renamed
    assert _fix(text, [("mesh", "jax.sharding.Mesh")], rename_uses=True) == (
        "from jax.sharding import Mesh\nfrom jax.experimental.maps import xmap  # old\n\nwith Mesh(d, n):\n    pass\n")
    # the history's renames: the local name stays
    assert _fix(text, [("mesh", "jax.sharding.Mesh")]) == (
        "from jax.sharding import Mesh as mesh\nfrom jax.experimental.maps import xmap  # old\n\nwith mesh(d, n):\n    pass\n")


def test_the_renamer_renames_in_place_within_a_module_and_carries_comments():
    assert _fix("from jax.numpy import product, sum\n", [("product", "jax.numpy.prod")]) == (
        "from jax.numpy import prod as product, sum\n")
    text = "from jax.experimental.pjit import (\n    pjit,\n    PartitionSpec as P,  # the spec\n)\n"
    assert _fix(text, [("PartitionSpec", "jax.sharding.PartitionSpec")]) == (
        "from jax.sharding import PartitionSpec as P  # the spec\nfrom jax.experimental.pjit import (\n    pjit,\n)\n")
