"""The positional semantics of ``jax.experimental.maps`` (removed with GlobalDeviceArray in JAX
0.4.7): ``maps._positional_semantics.val`` said whether pjit read its inputs' positions as
process-local or global, and code that needed global positions (GDA-era code: haiku's jaxpr_info
set it around ``make_jaxpr``) saved it, set ``_PositionalSemantics.GLOBAL`` and put it back. With
jax.Array positions are always global, so those statements are no-ops at the target: each is
deleted, which takes the removed module's import with it once nothing else uses it. A statement
that sets anything but ``GLOBAL`` (or the value saved from it) is left reported."""

from __future__ import annotations

import ast
from typing import Dict, List, Optional

from jaxmigrate.analysis.context import FileContext

STATE = "jax.experimental.maps._positional_semantics"
GLOBAL = "jax.experimental.maps._PositionalSemantics.GLOBAL"


def deletable(ctx: FileContext) -> Dict[int, ast.stmt]:
    """id of each node under a deletable statement's ``_positional_semantics`` or
    ``_PositionalSemantics`` reference -> that statement."""
    if "_positional_semantics" not in ctx.source:
        return {}
    saves: Dict[int, ast.Assign] = {}  # `prev = maps._positional_semantics.val`, by id of the statement
    sets: List[ast.Assign] = []
    for node in ctx.nodes(ast.Assign):
        if len(node.targets) != 1:
            continue
        target, value = node.targets[0], node.value
        if _is_state(ctx, target):
            sets.append(node)
        elif isinstance(target, ast.Name) and _is_state(ctx, value):
            saves[id(node)] = node
    restored = {}  # the saves whose every read puts the value back
    for save in saves.values():
        name = save.targets[0]
        assert isinstance(name, ast.Name)
        reads = [n for n in ctx.names(name.id) if isinstance(n.ctx, ast.Load) and _bound_by(ctx, n, save)]
        if all(_put_back(ctx, n, sets) for n in reads):
            restored[id(save)] = save
    keep = [s for s in sets if not (_names(ctx, s.value) == GLOBAL or _saved(ctx, s.value, restored))]
    out: Dict[int, ast.stmt] = {}
    for stmt in [*restored.values(), *(s for s in sets if s not in keep)]:
        for inner in ast.walk(stmt):
            out[id(inner)] = stmt
    return out


def _is_state(ctx: FileContext, node: ast.AST) -> bool:
    """``maps._positional_semantics.val``."""
    return isinstance(node, ast.Attribute) and node.attr == "val" and _names(ctx, node.value) == STATE


def _names(ctx: FileContext, node: ast.AST) -> Optional[str]:
    return ctx.qualname(node) if isinstance(node, (ast.Name, ast.Attribute)) else None


def _bound_by(ctx: FileContext, name: ast.Name, save: ast.Assign) -> bool:
    return any(b.node is save for b in ctx.bindings(name))


def _put_back(ctx: FileContext, read: ast.Name, sets: List[ast.Assign]) -> bool:
    return any(s.value is read for s in sets)


def _saved(ctx: FileContext, value: ast.AST, restored: Dict[int, ast.Assign]) -> bool:
    """``value`` is a name whose only binding is one of the ``restored`` saves."""
    if not isinstance(value, ast.Name):
        return False
    bindings = ctx.bindings(value)
    return bool(bindings) and all(id(b.node) in restored for b in bindings)
