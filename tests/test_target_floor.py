"""With an older target, no rule emits a name that target lacks.

Every fixture and every rule example is fixed (unsafe fixes on) for a range of targets; each JAX
name the fix introduces (resolved through the module's imports) must exist in that target, by
the table below. The table is written from JAX's changelog and source at the tags (see
docs/api-history.md for the history), independently of the rules' own version fields, so a rule that forgets its
gate fails here.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Optional, Set

import pytest

from jaxmigrate.rules import ALL_RULES
from jaxmigrate.rules.context import FileContext
from tests.conftest import run

ROOT = Path(__file__).resolve().parent.parent / "fixtures"
TARGETS = ((0, 4, 1), (0, 4, 14), (0, 4, 24), (0, 4, 25), (0, 5, 0), (0, 6, 0), (0, 7, 0), (0, 7, 1), (0, 8, 0),
           (0, 8, 1), (0, 10, 2))

# name, or module ending in "." (itself and everything in it) -> (first version with it, first without it or None)
AVAILABLE = {
    "jax.sharding.Mesh": ("0.4.1", None),
    "jax.sharding.PartitionSpec": ("0.4.1", None),
    "jax.sharding.NamedSharding": ("0.4.1", None),
    "jax.sharding.GSPMDSharding": ("0.4.5", "0.10.0"),
    "jax.lax.with_sharding_constraint": ("0.4.1", None),
    "jax.experimental.array_serialization.": ("0.4.9", None),
    "jax.experimental.multihost_utils.": ("0.4.1", None),
    "jax.make_array_from_callback": ("0.4.1", None),
    "jax.make_array_from_single_device_arrays": ("0.4.1", None),
    "jax.live_arrays": ("0.4.1", None),
    "jax.Array": ("0.4.1", None),
    "jax.Shard": ("0.4.5", None),
    "jax.tree_util.": ("0.1.0", None),
    "jax.tree.": ("0.4.25", None),
    "jax.shard_map": ("0.6.1", None),
    "jax.jit": ("0.1.0", None),
    "jax.set_mesh": ("0.7.1", None),
    "jax.device_put": ("0.1.0", None),
    "jax.numpy.": ("0.1.0", None),
    # the API-history rules' replacements (JM801-JM803), read from the tags
    "jax.random.permutation": ("0.2.26", None),  # with `independent=`
    "jax.core.ShapedArray": ("0.1.60", None),
    "jax.nn.standardize": ("0.3.5", None),
    "jax.extend.linear_util.": ("0.4.16", None),
    "jax.extend.backend.get_backend": ("0.4.32", None),
    "jax.extend.core.": ("0.4.27", None),
}


def _version(text: str):
    return tuple(int(p) for p in text.split("."))


def _availability(name: str):
    if name in AVAILABLE:
        return AVAILABLE[name]
    prefixes = [p for p in AVAILABLE if p.endswith(".") and (name.startswith(p) or name == p[:-1])]
    return AVAILABLE[max(prefixes, key=len)] if prefixes else None


def _jax_names(text: str) -> Set[str]:
    ctx = FileContext(text)
    names = set()
    for node in [*ctx.nodes(ast.Name), *ctx.nodes(ast.Attribute)]:
        if isinstance(node, ast.Attribute) and isinstance(ctx.parent(node), ast.Attribute):
            continue  # the longest chain only
        q: Optional[str] = ctx.qualname(node)
        if q and q.startswith("jax."):
            names.add(q)
    return names


SOURCES = [pytest.param(p.read_text(), id=f"{p.parent.parent.name}/{p.parent.name}") for p in sorted(ROOT.glob("*/*/before.py"))]
SOURCES += [pytest.param(ex.before, id=f"{rule.code}-example-{i}") for rule in ALL_RULES for i, ex in enumerate(rule.examples)]


@pytest.mark.parametrize("source", SOURCES)
def test_no_name_the_target_lacks(source):
    before = _jax_names(source)
    problems = []
    for target in TARGETS:
        added = _jax_names(run(source, unsafe=True, target=target).text) - before
        for name in sorted(added):
            known = _availability(name)
            if known is None:
                problems.append(f"{'.'.join(map(str, target))}: {name} is not in the availability table")
                continue
            since, until = known
            if target < _version(since) or (until and target >= _version(until)):
                problems.append(f"{'.'.join(map(str, target))}: {name} exists from {since}" + (f" until {until}" if until else ""))
    assert not problems, "\n".join(problems)


def test_the_table_is_consulted():
    """A name the fix introduces is found: jax.tree.map appears for 0.4.25, not for 0.4.24."""
    src = "import jax\n\nx = jax.tree_map(abs, [1])\n"
    assert "jax.tree.map" in _jax_names(run(src, target=(0, 4, 25)).text)
    assert "jax.tree.map" not in _jax_names(run(src, target=(0, 4, 24)).text)
