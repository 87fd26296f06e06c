"""The shortcuts that make ``check`` fast give the answers of the slow ways they replace.

- ``rules/scopes.walk``: its index holds every node ``ast.walk`` yields (but the shared operator
  singletons), each node's parent holds it, and each Name's scope is the one its statement is in.
- ``FileContext.qualified``/``qualname``: the same qualified name the resolver gives on its own.
- ``Presence``: a rule wants the same files through it as from the bytes.
- ``drops_before_edits``: dropping imports on the analysed text gives what dropping them on the
  edited text gives.
- later fix rounds skip rules the fixed text no longer wants.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from jaxmigrate.analysis.context import FileContext
from jaxmigrate.analysis.imports import Importer
from jaxmigrate.analysis.scopes import walk
from jaxmigrate.engine import apply, pipeline
from jaxmigrate.engine.pipeline import Settings, transform
from jaxmigrate.prefilter import Presence
from jaxmigrate.rules import ALL_RULES, ANCHORS, BY_CODE
from tests.conftest import run

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
BEFORE = sorted(FIXTURES.glob("*/*/before.py"))
TEXTS = [pytest.param(p.read_text(), id=f"{p.parent.parent.name}/{p.parent.name}") for p in BEFORE]
TEXTS += [pytest.param(ex.before, id=f"{rule.code}-example-{i}") for rule in ALL_RULES for i, ex in enumerate(rule.examples)]
SINGLETONS = (ast.expr_context, ast.operator, ast.cmpop, ast.unaryop, ast.boolop)

NESTED = '''
import jax
from jax.experimental import maps as m


@jax.jit
def outer(x, y: m.Mesh = m.Mesh, *rest: m.Mesh, **kw):
    class Inner(m.Mesh):
        attr = m

        def method(self, m=None):
            return m

    g = lambda m: m.Mesh
    [m for m in range(3)]
    with open("f") as m:
        pass
    return Inner, g


try:
    import numpy as m2
except ImportError:
    m2 = None
'''


@pytest.mark.parametrize("text", [*TEXTS, pytest.param(NESTED, id="nested-scopes")])
def test_walk_indexes_every_node_once_with_its_parent(text):
    tree = ast.parse(text)
    walked = walk(tree)
    expected = [n for n in ast.walk(tree) if not isinstance(n, SINGLETONS)]
    indexed = [n for nodes in walked.index.values() for n in nodes]
    assert sorted(map(id, indexed)) == sorted(map(id, expected))
    for node in expected:
        if node is tree:
            continue
        parent = walked.parents[id(node)]
        assert any(child is node for child in ast.iter_child_nodes(parent))
    assert set(walked.scope_of) == {id(n) for n in expected if isinstance(n, ast.Name)}


def test_scopes_follow_python():
    walked = walk(ast.parse(NESTED))
    scopes = {id(n): walked.scope_of[id(n)] for n in walked.index[ast.Name]}
    by_line = {}
    for name in walked.index[ast.Name]:
        by_line.setdefault((name.lineno, name.id), []).append(scopes[id(name)].kind)
    assert by_line[(7, "m")] == ["module", "module", "module"]  # annotations and defaults: outside
    assert by_line[(8, "m")] == ["function"]  # a class's bases: in the enclosing function
    assert by_line[(9, "m")] == ["class"]
    assert by_line[(12, "m")] == ["function"]
    module = walked.module_scope.bindings
    assert [b.kind for b in module["m"]] == ["import"] and [b.kind for b in module["m2"]] == ["import", "none"]


@pytest.mark.parametrize("text", TEXTS)
def test_qualified_names_agree_with_the_resolver(text):
    ctx = FileContext(text)
    for kind in (ast.Name, ast.Attribute):
        for node in ctx.nodes(kind):
            assert ctx.qualname(node) == ctx.resolver.qualname(node), ast.dump(node)
    for node, qualname in ctx.qualified():
        assert node in ctx.references(qualname)


@pytest.mark.parametrize("text", TEXTS)
def test_presence_wants_what_the_bytes_want(text):
    data = text.encode()
    present = Presence(data, ANCHORS)
    assert [r.code for r in ALL_RULES if r.wants(present)] == [r.code for r in ALL_RULES if r.wants(data)]


@pytest.mark.parametrize("path", BEFORE, ids=lambda p: f"{p.parent.parent.name}/{p.parent.name}")
def test_dropping_imports_before_the_edits_changes_nothing(path, monkeypatch):
    text = path.read_text()
    early = run(text, unsafe=True).text
    monkeypatch.setattr(apply, "drops_before_edits", lambda *args: None)  # always on the edited text
    assert run(text, unsafe=True).text == early


def test_drops_wait_for_the_edited_text_when_the_import_is_in_a_block():
    ctx = FileContext("def f():\n    from jax.experimental import maps\n    return maps.Mesh\n")
    (name,) = [n for n in ctx.nodes(ast.Attribute)]
    edit = ctx.replace(name, "jax.sharding.Mesh")
    from jaxmigrate.core.findings import ImportRef

    assert apply.drops_before_edits(ctx, [edit], [ImportRef("jax.experimental", "maps")]) is None
    top = FileContext("from jax.experimental import maps\nx = maps.Mesh\ny = maps\n")
    uses = [n for n in top.nodes(ast.Attribute)]
    # `y = maps` still reads it: nothing to drop
    assert apply.drops_before_edits(top, [top.replace(uses[0], "M")], [ImportRef("jax.experimental", "maps")]) == []
    only = FileContext("from jax.experimental import maps\nx = maps.Mesh\n")
    (use,) = [n for n in only.nodes(ast.Attribute)]
    drops = apply.drops_before_edits(only, [only.replace(use, "M")], [ImportRef("jax.experimental", "maps")])
    assert [(d.start, d.end, d.text) for d in drops] == [(0, 34, "")]
    # a new text that names it: decided on the edited text
    assert apply.drops_before_edits(only, [only.replace(use, "maps.M")], [ImportRef("jax.experimental", "maps")]) is None


def test_later_rounds_skip_rules_the_fixed_text_does_not_want(monkeypatch):
    calls = []
    real = pipeline.analyse
    monkeypatch.setattr(pipeline, "analyse", lambda text, path, rules, target=None, origin=None, owners=(): calls.append(
        [r.code for r in rules]) or real(text, path, rules, target, origin, owners))
    legacy = ("from jax.experimental.pjit import pjit  # not with_sharding_constraint\n\n"
              "f = pjit(abs, in_axis_resources=None, out_axis_resources=None)\n")
    out = transform(legacy.encode(), "x.py", Settings(tuple(BY_CODE), fix=True, target=(0, 7, 0)))
    assert "in_shardings=None" in out.text
    # JM102 wanted `axis_resources`, which the fix removed; JM101 reported, so it stays
    assert "JM102" in calls[0] and "JM101" in calls[1] and "JM102" not in calls[1]


@pytest.mark.parametrize("statement", ["from a import b, c, d", "import a.b, c as d, e", "from a.b import c as d, e",
                                       "from jax.experimental import maps, pjit as pj, PartitionSpec as P"])
def test_plain_imports_are_rebuilt_as_libcst_renders_them(statement, monkeypatch):
    import re

    from jaxmigrate.analysis import import_text

    names = statement.split(" import ", 1)[1] if statement.startswith("from ") else statement[len("import "):]
    items = [tuple((item.split(" as ") + [None])[:2]) for item in names.split(", ")]
    for drop in items:
        fast = import_text.render_without_names(statement, {drop})
        with monkeypatch.context() as m:
            m.setattr(import_text, "_PLAIN_IMPORT", re.compile("(?!)"))  # never plain: LibCST renders it
            assert fast == import_text.render_without_names(statement, {drop})


def test_a_name_for_the_same_object_at_the_same_scope_is_worked_out_once(monkeypatch):
    """JM701 asks for `jax.jit` and the shardings at each pjit call: 12,000 calls in one module
    went through every visible name each time (over 15 minutes)."""
    calls = []
    real = Importer._reference
    monkeypatch.setattr(Importer, "_reference", lambda self, *args: calls.append(args) or real(self, *args))
    text = "from jax.experimental.pjit import pjit\n\n" + "".join(f"f{i} = pjit(g, in_shardings=None, out_shardings=None)\n"
                                                             for i in range(50))
    findings = run(text, fix=False).findings
    assert sum(f.code == "JM701" for f in findings) == 50
    assert len(calls) == len(set(calls)) and len(calls) <= 4
