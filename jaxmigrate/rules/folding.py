"""Fold a condition that is now always true: ``if X:`` keeps its body, ``if not X:`` its ``else``.

Shared by the rules whose legacy condition has a constant answer on current JAX (the
``jax_array`` flag, ``hasattr(backend, "live_buffers")``). The statement surgery runs in LibCST
so that the kept block is re-indented correctly, multi-line strings and comments included.
"""

from __future__ import annotations

import ast
from functools import partial
from typing import TYPE_CHECKING, List, Optional, Union

if TYPE_CHECKING:  # pragma: no cover - LibCST is imported only when a fix runs
    import libcst as cst


from jaxmigrate.rules.base import Edit, StatementEdit
from jaxmigrate.rules.context import FileContext


def _statements(block: "Union[cst.IndentedBlock, cst.SimpleStatementSuite]") -> "List[cst.BaseStatement]":
    import libcst as cst

    if isinstance(block, cst.IndentedBlock):
        return list(block.body)
    # `if X: a; b` on one line
    return [cst.SimpleStatementLine(body=list(block.body))]


def _splice(node: "cst.If", stmts: "List[cst.BaseStatement]"):
    import libcst as cst

    if not stmts:
        return cst.RemovalSentinel.REMOVE
    first = stmts[0]
    stmts[0] = first.with_changes(leading_lines=[*node.leading_lines, *first.leading_lines])
    return cst.FlattenSentinel(stmts)


def keep_body(node: "cst.If"):
    return _splice(node, _statements(node.body))


def keep_orelse(node: "cst.If"):
    import libcst as cst

    orelse = node.orelse
    if orelse is None:
        return _splice(node, [])
    if isinstance(orelse, cst.If):  # `elif` becomes the `if`
        return orelse.with_changes(leading_lines=[*node.leading_lines, *orelse.leading_lines])
    return _splice(node, _statements(orelse.body))


def fold_true(ctx: FileContext, expr: ast.expr) -> Optional[tuple]:
    """Edits that drop a condition known to be true, or None if its context is not simple.

    Handles ``if expr:`` and ``if not expr:`` (not as an ``elif``), ``a if expr else b``, and
    ``expr`` as one operand of an ``and`` that is itself a condition (``if ready and expr:``
    becomes ``if ready:``). Returns ``(statement_edits, text_edits)``.
    """
    parent = ctx.parent(expr)
    negated = isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not)
    test = parent if negated else expr
    holder = ctx.parent(test)
    if isinstance(holder, ast.If) and holder.test is test and not _is_elif(ctx, holder):
        line, col = ctx.line_col(ctx.span(holder)[0])
        transform = keep_orelse if negated else keep_body
        return (StatementEdit(line, col, partial(transform)),), ()
    if isinstance(holder, ast.IfExp) and holder.test is test:
        kept = holder.orelse if negated else holder.body
        start, end = ctx.span(holder)
        text = ctx.text(kept)
        return (), (Edit(start, end, text if _is_atom(kept) or not _needs_parens(ctx, holder) else f"({text})"),)
    if not negated and isinstance(holder, ast.BoolOp) and isinstance(holder.op, ast.And) and _is_condition(ctx, holder):
        return (), (_drop_operand(ctx, holder, expr),)
    return None


def _is_condition(ctx: FileContext, node: ast.expr) -> bool:
    """Only the truth value of ``node`` is used, so ``a and True`` may become ``a``."""
    holder = ctx.parent(node)
    return isinstance(holder, (ast.If, ast.While, ast.IfExp, ast.Assert)) and holder.test is node


def _drop_operand(ctx: FileContext, boolop: ast.BoolOp, operand: ast.expr) -> Edit:
    values = boolop.values
    i = values.index(operand)
    if i + 1 < len(values):
        return Edit(ctx.span(operand)[0], ctx.span(values[i + 1])[0], "")
    return Edit(ctx.span(values[i - 1])[1], ctx.span(operand)[1], "")


def _is_atom(node: ast.expr) -> bool:
    return isinstance(node, (ast.Name, ast.Constant, ast.Call, ast.Attribute, ast.Subscript, ast.List, ast.Tuple,
                             ast.Dict, ast.Set, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.JoinedStr))


def _is_elif(ctx: FileContext, node: ast.If) -> bool:
    # ast starts an `elif` branch's If node at the `elif` keyword
    return ctx.source.startswith("elif", ctx.span(node)[0])


def _needs_parens(ctx: FileContext, node: ast.IfExp) -> bool:
    return not isinstance(ctx.parent(node), (ast.Expr, ast.Assign, ast.Return, ast.keyword, ast.Call, ast.Tuple, ast.List))
