"""JM602: ``jax.experimental.shard_map.shard_map`` → ``jax.shard_map`` (keywords, check_vma, axis_names)."""

from __future__ import annotations

import ast
from typing import Iterator, List, Optional

from jaxmigrate.analysis.context import FileContext
from jaxmigrate.analysis.imports import importer
from jaxmigrate.core.findings import Edit, Finding, Fix
from jaxmigrate.rules.base import Example, Rule, snippet

LEGACY = "jax.experimental.shard_map.shard_map"
MODERN = "jax.shard_map"
POSITIONAL = ("mesh", "in_specs", "out_specs", "check_rep", "auto")


class ExperimentalShardMap(Rule):
    """
    ## What it does
    Rewrites `jax.experimental.shard_map.shard_map(f, mesh, in_specs, out_specs, check_rep=...,
    auto=...)` (also through `functools.partial`, as a decorator) to `jax.shard_map(f, mesh=mesh,
    in_specs=in_specs, out_specs=out_specs, check_vma=..., axis_names=...)`: the options become
    keywords (`jax.shard_map` takes them keyword-only), `check_rep` becomes `check_vma`, and
    `auto=A` becomes `axis_names=frozenset(mesh.axis_names) - A` (the manual axes are the ones
    not left automatic). Applied for targets that have `jax.shard_map` (0.6.1 and later).

    The fix is unsafe: `check_vma`'s varying-manual-axes check is stricter than `check_rep`'s
    replication check and can reject a body the old check accepted; pass `check_vma=False` where
    that happens. Imports of the old module that are left unused are dropped.

    ## Why is this bad?
    `jax.experimental.shard_map.shard_map` is deprecated since JAX 0.8.0, and its `auto=`
    parameter is already gone.
    """

    code = "JM602"
    name = "experimental-shard-map"
    summary = "`jax.experimental.shard_map.shard_map` → `jax.shard_map` (keywords, `check_vma`, `axis_names`)"
    fix_safety = "unsafe"
    unsafe_note = ("`check_vma` is stricter than `check_rep` and may reject a body the old check accepted (pass "
                   "`check_vma=False` there)")
    triggers = (b"shard_map",)
    deprecated_in = "0.8.0"
    replacement_since = "0.6.1"
    history_names = ("jax.experimental.shard_map.shard_map",)
    examples = (
        Example(
            snippet("""
                import jax
                from jax.experimental.shard_map import shard_map
                from jax.sharding import PartitionSpec as P

                def total(mesh, x):
                    f = shard_map(lambda b: jax.lax.psum(b, "x"), mesh, in_specs=P("x"), out_specs=P(), check_rep=False)
                    return f(x)
            """),
            snippet("""
                import jax
                from jax.sharding import PartitionSpec as P

                def total(mesh, x):
                    f = jax.shard_map(lambda b: jax.lax.psum(b, "x"), mesh=mesh, in_specs=P("x"), out_specs=P(), check_vma=False)
                    return f(x)
            """),
            unsafe=True,
        ),
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        if not ctx.target_at_least(self.replacement_since):
            return  # no jax.shard_map in the target, and the experimental one is not deprecated there
        handled = set()
        for call, target, _is_partial in ctx.applications(LEGACY):
            options = call.args[1:]
            handled.add(id(target))
            yield self._rewrite(ctx, call, target, options)
        for node in ctx.references(LEGACY):  # the function used as a value
            # (references are Name and Attribute nodes: they have a ctx)
            if (id(node) not in handled and isinstance(node.ctx, ast.Load)  # type: ignore[attr-defined]
                    and not isinstance(ctx.parent(node), ast.Attribute)):
                yield self.finding(ctx, node, "`jax.experimental.shard_map.shard_map` is deprecated since JAX 0.8.0 and "
                                   "used as a value here: replace it with `jax.shard_map` by hand (options "
                                   "keyword-only, `check_vma`, `axis_names`)", replacement="jax.shard_map")

    def _rewrite(self, ctx: FileContext, call: ast.Call, callee: ast.expr, options: List[ast.expr]) -> Finding:
        message = "`jax.experimental.shard_map.shard_map` is deprecated since JAX 0.8.0: use `jax.shard_map`"
        if len(options) > len(POSITIONAL) or any(isinstance(a, ast.Starred) for a in call.args) or any(
            k.arg is None for k in call.keywords
        ):
            return self.finding(ctx, call, message, suggestion="jax.shard_map(f, mesh=..., in_specs=..., out_specs=..., "
                                                              "check_vma=..., axis_names=frozenset(mesh.axis_names) - auto)")
        ref, imports = importer(ctx).reference(MODERN, at=call)
        edits: List[Edit] = [ctx.replace(callee, ref)]
        given = {name: arg for name, arg in zip(POSITIONAL, options)}
        given.update({k.arg: k.value for k in call.keywords})  # type: ignore[misc]  # no k.arg is None: checked above
        mesh = given.get("mesh")
        if "auto" in given and not isinstance(mesh, (ast.Name, ast.Attribute)):
            why = ("the mesh arrives later" if mesh is None else "the mesh is computed in place (the fix names it twice)")
            return self.finding(ctx, call, f"{message}; `auto=` needs the mesh's axis names and {why}",
                                suggestion="jax.shard_map(f, mesh=mesh, ..., axis_names=frozenset(mesh.axis_names) - auto)")
        for name, arg in zip(POSITIONAL, options):  # keyword-only in jax.shard_map
            edits.append(ctx.replace(arg, self._option(ctx, name, arg, mesh)))
        for kw in call.keywords:
            if kw.arg in ("check_rep", "auto"):
                edits.append(ctx.replace(kw, self._option(ctx, kw.arg, kw.value, mesh)))
        fix = Fix("unsafe", edits=tuple(edits), add_imports=imports, drop_unused_imports=importer(ctx).root_import(callee))
        return self.finding(ctx, call, message, fix, replacement="jax.shard_map")

    @staticmethod
    def _option(ctx: FileContext, name: str, value: ast.expr, mesh: Optional[ast.expr]) -> str:
        text = ctx.text(value)
        if name == "check_rep":
            return f"check_vma={text}"
        if name == "auto":
            return f"axis_names=frozenset({ctx.text(mesh)}.axis_names) - {text}"  # type: ignore[arg-type]  # `auto` is rewritten only with a mesh
        return f"{name}={text}"
