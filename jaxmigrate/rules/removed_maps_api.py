"""JM203: `jax.experimental.maps` APIs without a direct replacement (xmap, thread_resources, ...)."""

from __future__ import annotations

import ast
from typing import ClassVar, Iterator, Tuple

from jaxmigrate.analysis.context import FileContext
from jaxmigrate.analysis.imports import importer
from jaxmigrate.analysis.statements import delete_statement
from jaxmigrate.catalog.moves import BY_OLD, REMOVED_MODULES
from jaxmigrate.core.findings import Finding, Fix
from jaxmigrate.patterns.positional_semantics import deletable
from jaxmigrate.patterns.xmap_advice import XMAP, shard_map_advice
from jaxmigrate.prefilter import name_triggers
from jaxmigrate.rules.base import Example, Rule, snippet
from jaxmigrate.rules.moved_name_base import module_path_used, uses_of_local


class RemovedMapsApi(Rule):
    """
    ## What it does
    Reports uses of `jax.experimental.maps` other than `Mesh`/`mesh` (which JM201 rewrites):
    `xmap`, `thread_resources`, `ResourceEnv`, `SerialLoop` and the rest. They have no
    mechanical replacement. An `xmap` call whose `in_axes`, `out_axes` and `axis_resources` are
    literals is reported with the `jax.shard_map` call to write: the same dimensions partitioned
    over the same mesh axes (`["batch", ...]` with `{"batch": "dp"}` → `P("dp")`), with a note
    on what changes inside the function (collectives name mesh axes; named dimensions become
    blocks).

    The positional semantics (`maps._positional_semantics.val`, removed with GlobalDeviceArray in
    JAX 0.4.7) are always global with jax.Array: a statement that saves it, sets it to
    `_PositionalSemantics.GLOBAL` or puts the saved value back does nothing at the target, and the
    safe fix deletes it (the module's import goes with its last use). Setting anything else stays
    reported.

    ## Why is this bad?
    The `jax.experimental.maps` module was deprecated in JAX 0.4.26 and is gone in current
    releases. `xmap` is replaced by `jax.shard_map` (or `jax.jit` with shardings);
    `thread_resources.env = ResourceEnv(mesh)` by entering the mesh (`with mesh:`, or
    `jax.set_mesh(mesh)` on JAX 0.7.1 and later) and passing it where it is needed.
    """

    code = "JM203"
    name = "removed-maps-api"
    summary = "`jax.experimental.maps` APIs without a direct replacement (xmap, thread_resources, ...)"
    fix_safety = "safe"
    triggers, _module_parts = name_triggers(REMOVED_MODULES)
    requires: ClassVar[Tuple[Tuple[bytes, ...], ...]] = (_module_parts,)
    deprecated_in = "0.4.26"
    removed_in = "0.4.31"
    history_names = ("jax.experimental.maps.xmap",)
    examples = (
        Example(
            snippet("""
                from jax.experimental.maps import xmap

                f = xmap(lambda x: x, in_axes=["i"], out_axes=["i"])
            """),
            snippet("""
                from jax.experimental.maps import xmap

                f = xmap(lambda x: x, in_axes=["i"], out_axes=["i"])
            """),
            flagged=True,
        ),
        Example(
            snippet("""
                from jax.experimental import maps

                step = maps.xmap(lambda p, b: p * b, in_axes=(["shard", ...], ["batch", ...]), out_axes=["batch", ...],
                                 axis_resources={"shard": "mp", "batch": "dp"})
            """),
            snippet("""
                from jax.experimental import maps

                step = maps.xmap(lambda p, b: p * b, in_axes=(["shard", ...], ["batch", ...]), out_axes=["batch", ...],
                                 axis_resources={"shard": "mp", "batch": "dp"})
            """),
            flagged=True,
            title="an xmap call with literal axes is reported with the shard_map call to write",
        ),
        Example(
            snippet("""
                import jax
                from jax.experimental import maps


                def trace_globally(f):
                    saved = maps._positional_semantics.val
                    maps._positional_semantics.val = maps._PositionalSemantics.GLOBAL
                    try:
                        return f()
                    finally:
                        maps._positional_semantics.val = saved
            """),
            snippet("""
                import jax


                def trace_globally(f):
                    try:
                        return f()
                    finally:
                        pass
            """),
            title="saving and setting global positional semantics does nothing with jax.Array",
        ),
    )

    ADVICE = {
        "xmap": "rewrite with `jax.shard_map` (named axes become mesh axes) or `jax.jit` with shardings",
        "thread_resources": "enter the mesh with `jax.set_mesh(mesh)` (JAX >= 0.7.1; `with mesh:` before) and read it "
                            "with `jax.sharding.get_abstract_mesh()` (JAX >= 0.5.3), or its devices with "
                            "`jax.sharding.get_mesh()` (JAX >= 0.8.1), as JAX's deprecation message says; or pass the "
                            "mesh explicitly",
        "ResourceEnv": "enter the mesh with `with mesh:` (or `jax.set_mesh(mesh)` on JAX >= 0.7.1) "
                       "instead of building a ResourceEnv",
    }

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        self._no_ops = deletable(ctx)
        for node in ctx.nodes(ast.ImportFrom):
            if node.level == 0 and node.module in REMOVED_MODULES:
                for alias in node.names:
                    if f"{node.module}.{alias.name}" not in BY_OLD:
                        yield self._report(ctx, alias, node.module, alias.name)
            elif node.level == 0 and node.module:
                for alias in node.names:
                    module = f"{node.module}.{alias.name}"
                    if module in REMOVED_MODULES and uses_of_local(ctx, alias.asname or alias.name, module):
                        yield self._module_import(ctx, alias, module)
        for imp in ctx.nodes(ast.Import):
            for alias in imp.names:
                if alias.name in REMOVED_MODULES and (
                    uses_of_local(ctx, alias.asname, alias.name) if alias.asname else module_path_used(ctx, alias.name)
                ):
                    yield self._module_import(ctx, alias, alias.name)
        advice = {}  # xmap calls with literal axes: the shard_map call to write
        for call, _ in ctx.calls_to(XMAP):
            suggestion = shard_map_advice(call, ctx.text)
            if suggestion is not None:
                advice[id(call.func)] = suggestion
                if isinstance(call.func, ast.Name):  # `from ... import xmap`: the import is reported, the call too
                    yield self.finding(ctx, call, "`xmap` was removed from JAX: rewrite this call with `jax.shard_map`",
                                       suggestion=suggestion)
        for attr, qual in ctx.qualified(ast.Attribute):
            module, _, name = qual.rpartition(".")
            if module in REMOVED_MODULES and qual not in BY_OLD:
                if id(attr) in advice:
                    yield self.finding(ctx, attr, f"`{qual}` was removed from JAX: rewrite this call with `jax.shard_map`",
                                       suggestion=advice[id(attr)])
                else:
                    yield self._report(ctx, attr, module, name)

    def _module_import(self, ctx: FileContext, node: ast.AST, module: str) -> Finding:
        local = str(getattr(node, "asname", None) or getattr(node, "name", "")).split(".")[0]
        uses = [n for n in ctx.names(local) if isinstance(n.ctx, ast.Load)]
        if uses and all(id(n) in self._no_ops for n in uses):
            return self.finding(ctx, node, f"`{module}` no longer exists: this import fails on current JAX; the "
                                "statements that use it do nothing at the target and go, and it with them")
        return self.finding(ctx, node, f"`{module}` no longer exists: this import fails on current JAX; the uses "
                            "reported below it need a manual migration")

    def _report(self, ctx: FileContext, node: ast.AST, module: str, name: str) -> Finding:
        statement = self._no_ops.get(id(node))
        if statement is not None:  # positional semantics: always global with jax.Array
            fix = Fix("safe", edits=(delete_statement(ctx, statement),), drop_unused_imports=importer(ctx).root_import(node))
            return self.finding(ctx, node, f"`{module}.{name}` was removed from JAX: with jax.Array positions are "
                                "always global, so this statement does nothing at the target", fix=fix)
        advice = self.ADVICE.get(name, "it has no replacement in current JAX; see the JAX changelog")
        return self.finding(ctx, node, f"`{module}.{name}` was removed from JAX: {advice}",
                            replacement="jax.shard_map" if name == "xmap" else None)
