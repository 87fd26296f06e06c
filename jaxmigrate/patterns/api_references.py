"""Every reference a file makes to a JAX name, judged by the API history at the target release.

A reference is an import (``from jax.numpy import product``, ``import jax.lib.xla_bridge``), a
use: the longest attribute chain that resolves (``jnp.product``, ``hcb.id_print``), or a name a
``from`` import bound, or an option named to ``jax.config.update``. Names are taken as spelled
(``jax.lib.xla_bridge``, not the internal path the resolver maps it to for the hand-written rules).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import List, Optional

from jaxmigrate.analysis.context import FileContext
from jaxmigrate.analysis.names import CANONICAL
from jaxmigrate.catalog.api_history import Status, status

#: the paths the resolver maps other spellings to (``jax.lib.xla_bridge`` -> ``jax._src.lib...``):
#: a name resolved under one of them is judged as spelled
_REWRITTEN = tuple(sorted({path for raw, path in CANONICAL.items() if raw != path}))


@dataclass(frozen=True)
class Reference:
    node: ast.AST  # the alias of an import, or the Name / Attribute chain of a use
    spelled: str  # the qualified name as the file spells it
    status: Status
    statement: Optional[ast.stmt] = None  # the import statement, for imports
    via_import: Optional[ast.alias] = None  # a use of a name bound by this `from` import alias

    @property
    def is_import(self) -> bool:
        return self.statement is not None


def references(ctx: FileContext) -> List[Reference]:
    """The file's references that the target lacks or deprecates, in source order (memoised)."""
    return ctx.memo("api_references", _references)


def _references(ctx: FileContext) -> List[Reference]:
    found: List[Reference] = []
    for frm in ctx.nodes(ast.ImportFrom):
        if frm.level or not frm.module or not _is_jax(frm.module):
            continue
        for alias in frm.names:
            if alias.name != "*":
                _add(found, ctx, alias, f"{frm.module}.{alias.name}", statement=frm)
    for imp in ctx.nodes(ast.Import):
        for alias in imp.names:
            if _is_jax(alias.name):
                _add(found, ctx, alias, alias.name, statement=imp)
    parents = ctx.parents
    heads: dict = {}  # (id(binding scope), root name) -> what `_head` says: roots repeat in every chain
    target = ctx.target
    for node, resolved in ctx.qualified():
        if status(resolved, target) is None and not resolved.startswith(_REWRITTEN):
            continue  # as the resolver reads it, the name is fine, and no spelling of it differs
        parent = parents.get(id(node))
        if parent.__class__ is ast.Attribute and parent.value is node:
            continue  # part of a longer chain: the chain is the reference
        if node.__class__ is ast.Name and not isinstance(node.ctx, ast.Load):
            continue  # `mesh_type = pxla.Mesh` binds a name: the value is the reference
        spelled, via = _spelled(ctx, node, heads)
        if spelled is not None:
            _add(found, ctx, node, spelled, via_import=via)
    for call, _ in ctx.calls_to("jax.config.update"):  # `jax.config.update("jax_option", value)`
        if call.args and isinstance(call.args[0], ast.Constant) and isinstance(call.args[0].value, str):
            _add(found, ctx, call.args[0], f"jax.config.{call.args[0].value}")
    found.sort(key=lambda r: (r.node.lineno, r.node.col_offset))  # type: ignore[attr-defined]  # Name/Attribute/alias/Constant nodes: all have positions
    return found


def _is_jax(qualname: str) -> bool:
    """``jax`` and names in it (not ``jaxtyping`` or ``jaxlib``)."""
    return qualname == "jax" or qualname.startswith("jax.")


def _add(found: List[Reference], ctx: FileContext, node: ast.AST, spelled: str, **where) -> None:
    if not _is_jax(spelled):
        return
    judged = status(spelled, ctx.target)
    if judged is not None:
        found.append(Reference(node, spelled, judged, **where))


def _spelled(ctx: FileContext, node: ast.AST, heads: dict, depth: int = 0):
    """(qualified name as spelled through the imports or assignments that bind the chain's root,
    the `from` import alias that bound a bare name). (None, None) for a bare name bound by an
    assignment (its value is the reference) or a root bound to more than one thing."""
    root = node
    parts: List[str] = []
    while isinstance(root, ast.Attribute):
        parts.append(root.attr)
        root = root.value
    if not isinstance(root, ast.Name) or depth > 8:
        return None, None
    resolver = ctx.resolver
    owner = resolver.lookup(root.id, resolver.scope_of(root))  # the scope that binds it: chains share it
    key = (id(owner), root.id)
    if key not in heads:
        heads[key] = _head(ctx, root, heads, depth)
    head, alias_value, via = heads[key]
    if head is None or (alias_value and not parts):
        return None, None
    return ".".join([head, *reversed(parts)]), (via if not parts else None)


def _head(ctx: FileContext, root: ast.Name, heads: dict, depth: int):
    """(the spelled name a root stands for, whether it is bound by an assignment, the `from`
    import alias that bound it)."""
    bindings = [b for b in ctx.bindings(root) if b.kind != "none"]
    kinds = {b.kind for b in bindings}
    if kinds == {"alias"} and len({ast.dump(b.value) for b in bindings}) == 1:  # `xb = jax.lib.xla_bridge`
        head, _ = _spelled(ctx, bindings[0].value, heads, depth + 1)
        return head, True, None
    raws = {b.qualname for b in bindings}
    if kinds != {"import"} or len(raws) != 1:
        return None, False, None
    statement = bindings[0].node
    via = None
    if isinstance(statement, ast.ImportFrom):
        via = next((a for a in statement.names if (a.asname or a.name) == root.id), None)
    return raws.pop() or None, False, via
