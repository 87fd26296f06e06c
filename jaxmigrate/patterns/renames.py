"""Fixes for references to renamed JAX names: the new name at each use, or in the import.

A use spelled through the old name's module (``jnp.product``) keeps that module (``jnp.prod``);
another use gets the new name through what the file already imports, else a new import. A bare
name bound by ``from m import old`` is fixed in its import, keeping the local name
(``from m import new as old``), so its uses stay as they are.
"""

from __future__ import annotations

import ast
from typing import List, Optional, Tuple

from jaxmigrate.analysis.context import FileContext
from jaxmigrate.analysis.import_text import render_import_from, render_without_names
from jaxmigrate.analysis.imports import importer
from jaxmigrate.analysis.statements import newline, replace_statement, statement_prefix
from jaxmigrate.core.findings import Fix, FixSafety, ImportRef
from jaxmigrate.patterns.api_references import Reference


def rename_fix(ctx: FileContext, ref: Reference, new: str, safety: FixSafety) -> Optional[Fix]:
    if ref.status.qualname != ref.spelled:
        return None  # an attribute of a removed name: no rename of the whole chain is known
    if ref.is_import:
        return _import_fix(ctx, ref, new, safety)
    if ref.via_import is not None:
        return None  # fixed in its import
    node = ref.node
    old_module, _, _ = ref.spelled.rpartition(".")
    new_module, _, new_name = new.rpartition(".")
    if isinstance(node, ast.Attribute) and old_module == new_module:
        return Fix(safety, edits=(ctx.replace(node, f"{ctx.text(node.value)}.{new_name}"),))
    text, imports = importer(ctx).reference(new, at=node)
    return Fix(safety, edits=(ctx.replace(node, text),), add_imports=imports, drop_unused_imports=importer(ctx).root_import(node))


def _import_fix(ctx: FileContext, ref: Reference, new: str, safety: FixSafety) -> Optional[Fix]:
    statement, alias = ref.statement, ref.node
    if not isinstance(statement, ast.ImportFrom) or not isinstance(alias, ast.alias):
        return None  # `import jax.x.y`: a module path, no rename known
    new_module, _, new_name = new.rpartition(".")
    local = alias.asname or alias.name
    text = new_name if new_name == local else f"{new_name} as {local}"
    if new_module == statement.module:
        return Fix(safety, edits=(ctx.replace(alias, text),))
    lines: List[str] = [render_import_from(new_module, [(text, None)], True, statement_prefix(ctx, statement), newline(ctx))]
    others = [a for a in statement.names if a is not alias]
    if others:
        lines.append(render_without_names(ctx.text(statement), {(alias.name, alias.asname)}))
    return Fix(safety, edits=(replace_statement(ctx, statement, lines),))


def in_type_test(ctx: FileContext, node: ast.AST) -> bool:
    """Whether ``node`` is (in) the class argument of ``isinstance``/``issubclass``."""
    parent = ctx.parent(node)
    if isinstance(parent, ast.Tuple):
        node, parent = parent, ctx.parent(parent)
    return (isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name)
            and parent.func.id in ("isinstance", "issubclass") and len(parent.args) == 2 and parent.args[1] is node)


def call_fix(ctx: FileContext, ref: Reference, transform: str) -> Optional[Fix]:
    """The call transforms of ``catalog.renames.CALLS`` on a use that is called."""
    call = ctx.parent(ref.node)
    if not isinstance(call, ast.Call) or call.func is not ref.node or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    if transform == "second-argument":  # tie_in(x, y) -> y
        if len(call.args) != 2 or call.keywords:
            return None
        first, second = call.args
        pure = isinstance(first, (ast.Name, ast.Constant, ast.Attribute))  # dropping it drops no call
        text = f"({ctx.text(second)})" if _needs_parens(second) else ctx.text(second)
        return Fix("safe" if pure else "unsafe", edits=(ctx.replace(call, text),))
    if transform == "jax.random.permutation/independent":  # shuffle(key, x, axis=0)
        if len(call.args) not in (2, 3) or any(k.arg not in ("axis",) for k in call.keywords):
            return None
        imports: Tuple[ImportRef, ...]
        if isinstance(call.func, ast.Attribute):  # `random.shuffle` -> `random.permutation`
            text, imports = f"{ctx.text(call.func.value)}.permutation", ()
        else:
            text, imports = importer(ctx).reference("jax.random.permutation", at=call.func)
        args = [ctx.text(a) for a in call.args] + [f"{k.arg}={ctx.text(k.value)}" for k in call.keywords]
        return Fix("unsafe", edits=(ctx.replace(call, f"{text}({', '.join(args)}, independent=True)"),), add_imports=imports)
    if transform.startswith("jax.enable_x64/with"):  # a `with` item: the option's context manager
        if not isinstance(ctx.parent(call), ast.withitem):
            return None  # a decorator, or kept for later: the old context manager's other uses
        if transform.endswith("False") and (call.args or call.keywords):
            return None
        if call.keywords or len(call.args) > 1:
            return None
        text, imports = importer(ctx).reference("jax.enable_x64", at=call.func)
        arg = "False" if transform.endswith("False") else ", ".join(ctx.text(a) for a in call.args)
        return Fix("safe", edits=(ctx.replace(call, f"{text}({arg})"),), add_imports=imports,
                   drop_unused_imports=importer(ctx).root_import(call.func))
    return None


def _needs_parens(node: ast.AST) -> bool:
    return not isinstance(node, (ast.Name, ast.Constant, ast.Attribute, ast.Call, ast.Subscript, ast.Tuple, ast.List, ast.Dict))


