"""Module globals fed by live-buffer counts, which the emulated legacy side cannot reproduce.

``Device.live_buffers()``, a backend's ``live_buffers()`` and ``jax.live_arrays()`` list what the
process holds at that moment: on the legacy runtime that includes what the emulation itself
keeps (a GDA's global array, the shards it views) and what today's JAX keeps where JAX 0.4 did
not, so a count the program keeps in a global differs from the original's without the migration
being wrong (7 vs 13, 20 vs 32 on programs in the migration guide's style). Such a global is
found in the source of either side: bound at module level (also inside ``if``/``for``/``with``/
``try`` blocks) from an expression calling ``live_buffers``/``live_arrays``, from a function whose
body calls one, or from another such global (``leaked = after - before``); a global a statement
mutates with such a value (``counts.append(len(d.live_buffers()))``) too. Read with ``ast`` only.

Such a global is set apart only when the after side counts with today's API (``jax.live_arrays()``)
and not with ``live_buffers()``: on today's JAX ``Device.live_buffers()`` lists nothing, so a
migration that kept it computes a wrong count, and that difference stands.
"""

from __future__ import annotations

import ast
from typing import AbstractSet, Iterator, List, Set

LIVE = frozenset({"live_buffers", "live_arrays"})


def _module_statements(body: List[ast.stmt]) -> Iterator[ast.stmt]:
    """Statements that run at module level: through compound blocks, not into def/class bodies."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for field in ("body", "orelse", "finalbody"):
            yield from _module_statements(getattr(stmt, field, None) or [])
        for handler in getattr(stmt, "handlers", None) or []:
            yield from _module_statements(handler.body)


def _names(target: ast.AST) -> Set[str]:
    """The global names a target binds or mutates (``x``, ``a, b``, ``x[i]``, ``x.attr``)."""
    if isinstance(target, ast.Name):
        return {target.id}
    if isinstance(target, (ast.Tuple, ast.List)):
        return set().union(*(_names(t) for t in target.elts)) if target.elts else set()
    if isinstance(target, ast.Starred):
        return _names(target.value)
    if isinstance(target, (ast.Subscript, ast.Attribute)):
        return _names(target.value)
    return set()


def _feeds(stmt: ast.stmt):
    """``(names bound or mutated, expressions their value comes from)`` of a statement."""
    if isinstance(stmt, ast.Assign):
        return set().union(*(_names(t) for t in stmt.targets)), [stmt.value]
    if isinstance(stmt, (ast.AugAssign, ast.AnnAssign)) and stmt.value is not None:
        return _names(stmt.target), [stmt.value]
    if isinstance(stmt, (ast.For, ast.AsyncFor)):
        return _names(stmt.target), [stmt.iter]
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        bound = [(_names(item.optional_vars), item.context_expr) for item in stmt.items if item.optional_vars]
        return set().union(*(n for n, _ in bound)) if bound else set(), [e for _, e in bound]
    call = stmt.value if isinstance(stmt, ast.Expr) else None
    if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute):
        # counts.append(...), counts.update(...): the receiver takes the arguments
        return _names(call.func.value), [*call.args, *(k.value for k in call.keywords)]
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return {stmt.name}, [stmt]
    return set(), []


def _uses(node: ast.AST, fed: Set[str], calls: AbstractSet[str]) -> bool:
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call):
            func = sub.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if name in calls:
                return True
        elif isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load) and sub.id in fed:
            return True
    return False


def fed_by_live_counts(source: str, calls: AbstractSet[str] = LIVE) -> Set[str]:
    """The module globals of ``source`` whose value comes from a call of one of ``calls``."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return set()
    feeds = [_feeds(stmt) for stmt in _module_statements(tree.body)]
    fed: Set[str] = set()
    changed = True
    while changed:
        changed = False
        for names, sources in feeds:
            if names - fed and any(_uses(s, fed, calls) for s in sources):
                fed |= names
                changed = True
    return fed


def _source(path: str) -> str:
    try:
        with open(path, "rb") as handle:
            return handle.read().decode("utf-8", errors="replace")
    except OSError:
        return ""


def not_reproduced(before: str, after: str) -> Set[str]:
    """The globals the emulated before side cannot reproduce: fed by a live-buffer count in the
    file ``before``, and in the file ``after`` by ``jax.live_arrays()`` and not ``live_buffers()``."""
    old, new = _source(before), _source(after)
    return (fed_by_live_counts(old)
            & (fed_by_live_counts(new, {"live_arrays"}) - fed_by_live_counts(new, {"live_buffers"})))
