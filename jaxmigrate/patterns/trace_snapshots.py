"""A snapshot of JAX's trace state built from the trace stack (``jax.core.thread_local_state``)
and the sublevel (``jax.core.cur_sublevel()``), both gone with the stackless tracing of JAX
0.4.36: a tuple of values read from them, compared later to tell whether code runs under the
same transformation (haiku's ``JaxTraceLevel``). JAX's opaque trace state,
``jax.extend.core.get_opaque_trace_state()``, is that snapshot now (haiku's own migration), so
the tuple becomes it and the statements that only fed it go; unsafe, since the parts of the old
tuple can no longer be read. A read used for anything else leaves the function reported."""

from __future__ import annotations

import ast
from typing import Dict, List, Optional, Tuple

from jaxmigrate.analysis.context import FileContext
from jaxmigrate.analysis.imports import importer
from jaxmigrate.analysis.statements import delete_statement
from jaxmigrate.catalog.api_history import exists
from jaxmigrate.core.findings import Fix

STATE = "jax.core.thread_local_state"
SUBLEVEL = "jax.core.cur_sublevel"
OPAQUE = "jax.extend.core.get_opaque_trace_state"


def snapshot_fix(ctx: FileContext, read: ast.AST) -> Optional[Fix]:
    """The snapshot rewrite that removes the trace-state read ``read``, if any: that of the
    innermost function around it whose snapshot takes it in (none where the target lacks the
    opaque state: ``jax.extend.core`` has it from JAX 0.10.0)."""
    if not exists(OPAQUE, ctx.target):
        return None
    fixes: Dict[int, Optional[Tuple[List[int], Fix]]] = ctx.memo("trace_snapshots", lambda _: {})
    at = ctx.parent(read)
    while at is not None:
        if isinstance(at, ast.FunctionDef):
            if id(at) not in fixes:
                fixes[id(at)] = _function_fix(ctx, at)
            found = fixes[id(at)]
            if found is not None and id(read) in found[0]:
                return found[1]
        at = ctx.parent(at)
    return None


def _function_fix(ctx: FileContext, func: ast.FunctionDef) -> Optional[Tuple[List[int], Fix]]:
    derived: Dict[str, ast.Assign] = {}
    for stmt in func.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
                and _derived(ctx, stmt.value, derived):
            derived[stmt.targets[0].id] = stmt
    snapshots = [n for n in ast.walk(func) if isinstance(n, ast.Tuple) and n.elts and _derived(ctx, n, derived)
                 and not isinstance(ctx.parent(n), ast.Assign)]
    if not snapshots:
        return None
    removed: List[ast.AST] = [*snapshots, *derived.values()]
    inside = {id(n) for root in removed for n in ast.walk(root)}
    for name, stmt in derived.items():  # every read of a fed name is inside what goes
        if any(id(n) not in inside for n in ctx.names(name) if n is not stmt.targets[0]):
            return None
    reads = [n for root in removed for n in ast.walk(root) if _is_read(ctx, n)]
    if any(_is_read(ctx, n) and id(n) not in inside for n in ast.walk(func)):
        return None  # a read outside the snapshot
    text, imports = importer(ctx).reference(OPAQUE, at=snapshots[0], dotted=True)
    edits = [ctx.replace(t, f"{text}()") for t in snapshots] + [delete_statement(ctx, s) for s in derived.values()]
    drop = tuple(ref for n in reads for ref in importer(ctx).root_import(n))
    return [id(n) for root in removed for n in ast.walk(root)], Fix("unsafe", edits=tuple(edits), add_imports=imports,
                                                                     drop_unused_imports=drop)


def _is_read(ctx: FileContext, node: ast.AST) -> bool:
    if isinstance(node, ast.Attribute):
        return (ctx.qualname(node) or "") in (STATE, SUBLEVEL)
    return False


def _derived(ctx: FileContext, node: ast.AST, derived: Dict[str, ast.Assign]) -> bool:
    """Whether ``node`` is computed from the trace state alone (and constants in subscripts)."""
    if isinstance(node, ast.Name):
        return node.id in derived
    if isinstance(node, ast.Attribute):
        name = ctx.qualname(node) or ""
        return name == STATE or name.startswith(STATE + ".") or _derived(ctx, node.value, derived)
    if isinstance(node, ast.Subscript):
        return _derived(ctx, node.value, derived) and _constant(node.slice)
    if isinstance(node, ast.Call):
        return ctx.qualname(node.func) == SUBLEVEL and not node.args and not node.keywords
    if isinstance(node, ast.Tuple):
        return all(_derived(ctx, e, derived) for e in node.elts)
    return False


def _constant(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) or isinstance(node, ast.UnaryOp) and isinstance(node.operand, ast.Constant)
