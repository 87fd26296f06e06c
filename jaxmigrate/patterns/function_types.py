"""jaxlib's removed types of jitted and pmapped functions (``jax.xla.xe.CompiledFunction``, ...):
the type every ``jax.jit`` function has at the target, or, for a pmapped function, which has no
type of its own now, the class dropped from a tuple of classes (``catalog/renames.FUNCTION_TYPES``)."""

from __future__ import annotations

import ast
from typing import List, Optional, Tuple

from jaxmigrate.analysis.context import FileContext
from jaxmigrate.analysis.imports import importer
from jaxmigrate.catalog.renames import FUNCTION_TYPES
from jaxmigrate.core.findings import Edit, Fix

PMAP_AS_JIT = (0, 8, 0)  # pmap returns a plain function (jax_pmap_shmap_merge's default)

#: (what to use instead, as message text; the code to write; the fix)
Advice = Tuple[Optional[str], Optional[str], Optional[Fix]]


def function_type_advice(ctx: FileContext, node: ast.expr, spelled: str) -> Advice:
    template = FUNCTION_TYPES[spelled]
    drop = importer(ctx).root_import(node)
    if template is None and ctx.target is not None and ctx.target < PMAP_AS_JIT:
        template = "type({pmap}(lambda x: x))"  # still jaxlib's PmapFunction there
    if template is not None:
        name = "pmap" if "{pmap}" in template else "jit"
        spelt, imports = importer(ctx).reference(f"jax.{name}", at=node, dotted=True)
        code = template.format(**{name: spelt})
        if name == "pmap":
            return (f"`{code}`, unsafe: the type of every function `jax.pmap` returns at the target", code,
                    Fix("unsafe", edits=(ctx.replace(node, code),), add_imports=imports, drop_unused_imports=drop))
        fix = Fix("unsafe", edits=(ctx.replace(node, code),), add_imports=imports, drop_unused_imports=drop)
        return (f"`{code}`, unsafe: the type of every function `jax.jit` returns (jaxlib's PjitFunction; "
                "CompiledFunction was that of the older C++ jit)", code, fix)
    edits = _without_element(ctx, node)
    why = ("a pmapped function is a plain Python function (pmap runs as `jax.jit` of `jax.shard_map`: the default "
           "since JAX 0.8.0, the only way since 0.10.0)")
    if edits is None:
        return f"there is no type to test for: {why}", None, None
    return (f"there is no type to test for: {why}; unsafe: dropped from this tuple of classes", None,
            Fix("unsafe", edits=tuple(edits), drop_unused_imports=drop))


def _without_element(ctx: FileContext, node: ast.expr) -> Optional[List[Edit]]:
    """The edits that drop ``node`` from the tuple of classes it is in (one class stays a tuple), or None."""
    tup = ctx.parent(node)
    if not isinstance(tup, ast.Tuple) or len(tup.elts) < 2 or any(isinstance(e, ast.Starred) for e in tup.elts):
        return None
    elts, at = tup.elts, tup.elts.index(node)
    start, end = ctx.span(node)
    close = ctx.span(tup)[1]
    if at + 1 < len(elts):  # up to the next class
        edits = [Edit(start, ctx.span(elts[at + 1])[0], "")]
        last = ctx.span(elts[-1])[1]
        if len(elts) == 2 and "," not in ctx.source[last:close]:  # `(a, b)` -> `(b,)`
            edits.append(Edit(last, last, ","))
        return edits
    single = len(elts) == 2 and "," not in ctx.source[end:close]  # `(a, b)` -> `(a,)`
    return [Edit(ctx.span(elts[at - 1])[1], end, "," if single else "")]
