"""JM101: pjit's ``in_axis_resources``/``out_axis_resources`` keywords → ``in_shardings``/``out_shardings``."""

from __future__ import annotations

import ast
from typing import Iterator, Optional, Set

from jaxmigrate.analysis.context import FileContext
from jaxmigrate.core.findings import Edit, Finding, Fix
from jaxmigrate.patterns.gda import PJIT
from jaxmigrate.patterns.pjit_calls import AXIS_RESOURCES_RENAMES, legacy_keys, rename_key
from jaxmigrate.rules.base import Example, Rule, snippet


class PjitAxisResources(Rule):
    """
    ## What it does
    Renames the `in_axis_resources` and `out_axis_resources` keywords of
    `jax.experimental.pjit.pjit` to `in_shardings` and `out_shardings`, in calls, in
    `functools.partial(pjit, ...)` (also as a decorator) and in a `dict(...)`/`{...}` of keyword
    arguments whose only use is `**kwargs` into a pjit call in the same function.

    ## Why is this bad?
    The keywords were deprecated in JAX 0.4.9 and deleted in 0.4.14: the call raises a
    `TypeError`. Inside `pjit` the rename keeps the meaning exactly, `None` (replicated)
    included. Positional specs (`pjit(f, P('x'), None)`) keep working and are left alone.

    The rename is exact, and applied whatever another rule reports of the same call: a pjit
    whose calls JM504 reports for host-local inputs is renamed too (JM504 finds them by what they
    pass, not by these keywords, so a later `check` still reports them).

    With a target before 0.4.9 the rule stays quiet: there the old keywords are not deprecated,
    and before 0.4.4 pjit does not take `in_shardings`/`out_shardings` at all.

    Other dynamic forms (a keyword dict that is also used elsewhere, a key added by
    subscript) are reported for a manual rename. Calls to anything that is not JAX's pjit (a
    project's own wrapper or partitioner taking a keyword of the same name) are left alone.
    """

    code = "JM101"
    name = "pjit-axis-resources"
    summary = "pjit `in_axis_resources`/`out_axis_resources` renamed to `in_shardings`/`out_shardings`"
    fix_safety = "safe"
    triggers = (b"in_axis_resources", b"out_axis_resources")
    deprecated_in = "0.4.9"
    removed_in = "0.4.14"
    replacement_since = "0.4.4"  # pjit's signature at jax-v0.4.4 has in_shardings/out_shardings
    examples = (
        Example(
            snippet("""
                from jax.experimental.pjit import pjit
                from jax.sharding import PartitionSpec as P

                f = pjit(lambda x: x * 2, in_axis_resources=P("x"), out_axis_resources=None)
            """),
            snippet("""
                from jax.experimental.pjit import pjit
                from jax.sharding import PartitionSpec as P

                f = pjit(lambda x: x * 2, in_shardings=P("x"), out_shardings=None)
            """),
            title="keywords of a pjit call",
        ),
        Example(
            snippet("""
                from functools import partial
                import jax.experimental.pjit as pjit_lib

                @partial(pjit_lib.pjit, in_axis_resources=None, out_axis_resources=None)
                def step(x):
                    return x + 1
            """),
            snippet("""
                from functools import partial
                import jax.experimental.pjit as pjit_lib

                @partial(pjit_lib.pjit, in_shardings=None, out_shardings=None)
                def step(x):
                    return x + 1
            """),
            title="partial used as a decorator",
        ),
        Example(
            snippet("""
                def partition(fn, in_axis_resources, out_axis_resources):
                    return fn

                step = partition(abs, in_axis_resources=None, out_axis_resources=None)
            """),
            title="a project's own function with a keyword of the same name is not JAX's pjit",
        ),
        Example(
            snippet("""
                from jax.experimental.pjit import pjit

                f = pjit(abs, in_axis_resources=None, out_axis_resources=None)
            """),
            title="a target before 0.4.9 (here 0.4.1, whose pjit has no `in_shardings`) keeps the old keywords",
            target="0.4.1",
        ),
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        if not ctx.target_at_least(self.deprecated_in):
            return
        handled_dicts: Set[int] = set()
        for call, _, _ in ctx.applications(PJIT):
            given = {kw.arg for kw in call.keywords}
            for kw in call.keywords:
                # both spellings: a TypeError either way
                if kw.arg in AXIS_RESOURCES_RENAMES and AXIS_RESOURCES_RENAMES[kw.arg] in given:
                    yield self.finding(ctx, kw,
                                       f"`{kw.arg}` next to `{AXIS_RESOURCES_RENAMES[kw.arg]}`: keep one of them by hand")
                elif kw.arg in AXIS_RESOURCES_RENAMES:
                    yield self._keyword_finding(ctx, kw)
                elif kw.arg is None:  # **kwargs
                    yield from self._kwargs(ctx, call, kw.value, handled_dicts)
        yield from self._dynamic_keys(ctx, handled_dicts)

    # -------------------------------------------------------------------------------------
    def _keyword_finding(self, ctx: FileContext, kw: ast.keyword) -> Finding:
        start = ctx.offset(kw.lineno, kw.col_offset)
        new = AXIS_RESOURCES_RENAMES[kw.arg]  # type: ignore[index]  # a legacy keyword: its arg is set
        fix = Fix("safe", edits=(Edit(start, start + len(kw.arg), new),))  # type: ignore[arg-type]  # a legacy keyword: its arg is set
        return self.finding(ctx, kw, f"`{kw.arg}` was removed from pjit in JAX 0.4.14: use `{new}`", fix, replacement=new)

    def _kwargs(self, ctx: FileContext, call: ast.Call, value: ast.expr, handled: set) -> Iterator[Finding]:
        """``pjit(f, **kw)`` where ``kw`` is a keyword dict built in the same function."""
        if not isinstance(value, ast.Name):
            return
        scope = ctx.resolver.scope_of(value)
        bindings = scope.bindings.get(value.id, [])
        if len(bindings) != 1:
            return
        stmt = bindings[0].node
        if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1:
            return
        keys = legacy_keys(ctx, stmt.value)
        if not keys:
            return
        handled.add(id(stmt.value))
        only_use = _load_count(ctx, value.id, scope) == 1
        for key_node, key in keys:
            if only_use:
                edit = rename_key(ctx, key_node, key)
                fix = Fix("safe", edits=(edit,))
                yield self.finding(ctx, key_node,
                                   f"`{key}` reaches pjit through `**{value.id}`: use `{AXIS_RESOURCES_RENAMES[key]}`", fix,
                                   replacement=AXIS_RESOURCES_RENAMES[key])
            else:
                yield self.finding(
                    ctx,
                    key_node,
                    f"`{key}` reaches pjit through `**{value.id}`, which is also used elsewhere: rename it by hand",
                    suggestion=AXIS_RESOURCES_RENAMES[key],
                )

    def _dynamic_keys(self, ctx: FileContext, handled: set) -> Iterator[Finding]:
        """String keys naming the removed keywords, in modules that use pjit."""
        if not ctx.references(PJIT):
            return
        for const in ctx.nodes(ast.Constant):
            if const.value in AXIS_RESOURCES_RENAMES and not _inside(ctx, const, handled):
                yield self.finding(
                    ctx,
                    const,
                    f"the string {const.value!r} looks like a pjit keyword built at run time: rename it by hand",
                    suggestion=repr(AXIS_RESOURCES_RENAMES[const.value]),
                )
        for call in [ctx.parent(n) for n in ctx.names("dict")]:
            if (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "dict"
                    and id(call) not in handled):
                for kw in call.keywords:
                    if kw.arg in AXIS_RESOURCES_RENAMES:
                        yield self.finding(
                            ctx,
                            kw,
                            f"`dict({kw.arg}=...)` looks like pjit keywords built at run time: rename it by hand",
                            suggestion=f"dict({AXIS_RESOURCES_RENAMES[kw.arg]}=...)",
                        )


def _load_count(ctx: FileContext, name: str, scope) -> int:
    return sum(
        1
        for n in ctx.names_in(name, scope)
        if isinstance(n.ctx, ast.Load) and ctx.resolver.scope_of(n) is scope
    )


def _inside(ctx: FileContext, node: ast.AST, handled: set) -> bool:
    parent: Optional[ast.AST] = ctx.parent(node)
    while parent is not None:
        if id(parent) in handled:
            return True
        parent = ctx.parent(parent)
    return False
