"""Uses of the removed GlobalDeviceArray module as plain data for JM502: its names read through
imports, its import statements, ``isinstance(x, GlobalDeviceArray)`` as the test of a branch.

Under jax.Array every array is a ``jax.Array``: a GDA branch rewritten to
``isinstance(x, jax.Array)`` takes every array (tracers too) and shadows a later branch that
already handles ``jax.Array``. Upstream migrations deleted such a branch: it was GDA-mode code.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple

from jaxmigrate.analysis.context import FileContext
from jaxmigrate.analysis.names import canonical
from jaxmigrate.analysis.statements import EXITS, enclosing_block, is_elif
from jaxmigrate.catalog.gda import EVERY_ARRAY
from jaxmigrate.patterns.gda import GDA_MODULE

#: attributes that only an array with a sharding has (``hasattr(x, "sharding")`` tells a jax.Array)
ARRAY_ONLY_ATTRIBUTES = ("sharding", "addressable_shards", "global_shards")


@dataclass
class GdaBranch:
    stmt: ast.If  # the `if` (or `elif`) whose test is the check
    call: ast.Call  # isinstance(subject, GlobalDeviceArray)
    subject: ast.expr
    is_elif: bool
    handled_by: Optional[ast.expr]  # a later test that takes jax.Arrays (an `elif`, or an `if` after it)


def gda_branch(ctx: FileContext, node: ast.expr) -> Optional[GdaBranch]:
    """The branch whose test is ``isinstance(x, <node>)`` (``node`` the class, alone), else None."""
    call = ctx.parent(node)
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "isinstance"
            and len(call.args) == 2 and call.args[1] is node and not call.keywords):
        return None
    stmt = ctx.parent(call)
    if not (isinstance(stmt, ast.If) and stmt.test is call):
        return None
    subject = call.args[0]
    return GdaBranch(stmt, call, subject, is_elif(ctx, stmt), _later_array_test(ctx, stmt, subject))


def _later_array_test(ctx: FileContext, stmt: ast.If, subject: ast.expr) -> Optional[ast.expr]:
    """The first later test of the chain (``elif``), or of an ``if`` after the chain when the GDA
    branch leaves the block, that takes ``subject`` when it is a jax.Array."""
    orelse = stmt.orelse
    while len(orelse) == 1 and isinstance(orelse[0], ast.If):
        if takes_arrays(ctx, orelse[0].test, subject):
            return orelse[0].test
        orelse = orelse[0].orelse
    if orelse or not stmt.body or not isinstance(stmt.body[-1], EXITS):
        return None
    block: List[ast.stmt] = enclosing_block(ctx, stmt)
    for later in block[block.index(stmt) + 1:]:
        if isinstance(later, ast.If) and takes_arrays(ctx, later.test, subject):
            return later.test
    return None


def takes_arrays(ctx: FileContext, test: ast.expr, subject: ast.expr) -> bool:
    """Whether ``test`` is true for ``subject`` when it is a jax.Array: ``isinstance(subject,
    jax.Array)`` (or ``jnp.ndarray``, alone or in a tuple) or ``hasattr(subject, "sharding")``,
    itself or as an operand of an ``or``."""
    tests = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or) else [test]
    wanted = ctx.text(subject)
    for t in tests:
        if not (isinstance(t, ast.Call) and isinstance(t.func, ast.Name) and len(t.args) == 2
                and ctx.text(t.args[0]) == wanted):
            continue
        cls = t.args[1]
        if t.func.id == "isinstance":
            classes = cls.elts if isinstance(cls, ast.Tuple) else [cls]
            if any(ctx.qualname(c) in EVERY_ARRAY for c in classes):
                return True
        if t.func.id == "hasattr" and isinstance(cls, ast.Constant) and cls.value in ARRAY_ONLY_ATTRIBUTES:
            return True
    return False


def gda_member_references(ctx: FileContext) -> List[Tuple[ast.expr, str]]:
    """(node, member) for each Name/Attribute read that names ``GDA_MODULE.member`` through imports."""
    out = []
    prefix = GDA_MODULE + "."
    for node, q in ctx.qualified():
        if not isinstance(node.ctx, ast.Load):  # type: ignore[attr-defined]  # a Name or an Attribute: has a ctx
            continue
        if q.startswith(prefix) and "." not in q[len(prefix):] and _through_import(ctx, node):
            out.append((node, q[len(prefix):]))
    return out


def _through_import(ctx: FileContext, node: ast.expr) -> bool:
    """Whether the chain's root is bound by imports (and ``x = None`` fallbacks) only: uses of
    a variable assigned from the class (``kind = gda_lib.GlobalDeviceArray``) are not rewritten,
    the assignment is."""
    root = node
    while isinstance(root, ast.Attribute):
        root = root.value
    if not isinstance(root, ast.Name):
        return False
    resolver = ctx.resolver
    owner = resolver.lookup(root.id, resolver.scope_of(root))
    return owner is not None and all(b.kind in ("import", "none") for b in owner.bindings[root.id])


@dataclass
class GdaImport:
    """One name an import statement takes from the removed module (or the module itself)."""

    stmt: ast.Import | ast.ImportFrom
    alias: ast.alias
    what: str  # the name imported, in full
    uses: Sequence[ast.expr]  # its reads (of the module itself: ``gda_lib`` in ``gda_lib.X``)
    is_module: bool
    star: bool = False


def gda_module_imports(ctx: FileContext) -> List[GdaImport]:
    found = []
    for stmt in ctx.nodes(ast.Import):
        for alias in stmt.names:
            if canonical(alias.name) == GDA_MODULE:
                uses = (ctx.loads_of(alias.asname, GDA_MODULE) if alias.asname
                        else [n for n in ctx.references(GDA_MODULE) if isinstance(n, ast.Attribute)])
                found.append(GdaImport(stmt, alias, alias.name, uses, True))
    for frm in ctx.nodes(ast.ImportFrom):
        if frm.level or not frm.module:
            continue
        for alias in frm.names:
            full = canonical(f"{frm.module}.{alias.name}") or ""
            local = alias.asname or alias.name
            if alias.name == "*" and canonical(frm.module) == GDA_MODULE:
                found.append(GdaImport(frm, alias, GDA_MODULE, [], True, star=True))
            elif full == GDA_MODULE:
                found.append(GdaImport(frm, alias, full, ctx.loads_of(local, GDA_MODULE), True))
            elif full.startswith(GDA_MODULE + ".") and "." not in full[len(GDA_MODULE) + 1:]:
                found.append(GdaImport(frm, alias, full, ctx.loads_of(local, full), False))
    return found
