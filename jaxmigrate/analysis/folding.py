"""Fold a condition that is now always true: ``if X:`` keeps its body, ``if not X:`` its ``else``.

Shared by the rules whose legacy condition has a constant answer on current JAX (the
``jax_array`` flag, ``hasattr(backend, "live_buffers")``). The statement surgery runs in LibCST
so that the kept block is re-indented correctly, multi-line strings and comments included.
"""

from __future__ import annotations

import ast
import io
import itertools
import re
import tokenize
from functools import partial
from typing import TYPE_CHECKING, List, Optional, Tuple, cast

if TYPE_CHECKING:  # pragma: no cover - LibCST is imported only when a fix runs
    import libcst as cst


from jaxmigrate.analysis.context import FileContext
from jaxmigrate.analysis.statements import EXITS, delete_statement, enclosing_block, is_elif, newline
from jaxmigrate.core.findings import Edit, StatementEdit


def _statements(block: "cst.BaseSuite") -> "List[cst.BaseStatement]":
    import libcst as cst

    if isinstance(block, cst.IndentedBlock):
        return list(block.body)
    # `if X: a; b` on one line (the other kind of suite)
    return [cst.SimpleStatementLine(body=list(cast("cst.SimpleStatementSuite", block).body))]


def _splice(node: "cst.If", stmts: "List[cst.BaseStatement]"):
    import libcst as cst

    if not stmts:
        return cst.RemovalSentinel.REMOVE
    first = stmts[0]
    # every statement class has leading_lines, their base class does not declare it
    stmts[0] = first.with_changes(leading_lines=[*node.leading_lines, *first.leading_lines])  # type: ignore[attr-defined]
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


def remove(node: "cst.BaseStatement"):
    import libcst as cst

    return cst.RemovalSentinel.REMOVE


# statements whose removal changes nothing when they cannot run: they bind no name (a binding
# anywhere in a function makes the name local) and hold no `yield` (which makes a generator)
_INERT = (ast.Return, ast.Expr, ast.Pass, ast.Raise, ast.Assert)


def _unreachable_after(ctx: FileContext, node: ast.If) -> List[ast.stmt]:
    """The statements after ``node`` in its block that cannot run once the ``if`` keeps its body,
    which ends the block (``return``, ``raise``, ``continue``, ``break``); none unless all of them
    can go without changing anything (see ``_INERT``)."""
    if not isinstance(node.body[-1], EXITS):
        return []
    block = enclosing_block(ctx, node)
    after = block[block.index(node) + 1:]
    inert = all(isinstance(s, _INERT) and not any(isinstance(n, (ast.Yield, ast.YieldFrom, ast.NamedExpr, ast.Await))
                                                   for n in ast.walk(s)) for s in after)
    # (not the last line of a file without a final newline, whose removal the region edit renders
    # with a newline where LibCST on the whole module does not)
    unterminated = not ctx.source.endswith(("\n", "\r")) and bool(after) and ctx.span(after[-1])[1] >= len(
        ctx.source.rstrip(" \t"))
    return after if inert and not unterminated else []


def fold_true(ctx: FileContext, expr: ast.expr) -> Optional[tuple]:
    """Edits that drop a condition known to be true, or None if its context is not simple.

    Handles ``if expr:`` and ``if not expr:`` (not as an ``elif``), ``a if expr else b``, and
    ``expr`` as one operand of an ``and`` that is itself a condition (``if ready and expr:``
    becomes ``if ready:``). Returns ``(statement_edits, text_edits)``. Statements after an
    ``if expr:`` whose body ends the block cannot run once it is folded: they go too (when
    nothing depends on them, see ``_unreachable_after``). An ``if not expr:`` with
    no ``else`` keeps nothing: it is deleted as a statement (``pass`` if its block has no other),
    so the comment lines above it stay.
    """
    parent = ctx.parent(expr)
    negated = isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not)
    test = parent if negated and parent is not None else expr  # (negated: parent is the `not`)
    holder = ctx.parent(test)
    if isinstance(holder, ast.If) and holder.test is test and not is_elif(ctx, holder):
        if negated and not holder.orelse:  # nothing is kept: the whole lines go, or `pass` in a block left empty
            return (), (delete_statement(ctx, holder),)
        line, col = ctx.line_col(ctx.span(holder)[0])
        if not negated and holder.orelse and _comments_closing_body(ctx, holder, col):
            return None  # LibCST holds them in the body's footer, which a spliced body cannot carry
        transform = keep_orelse if negated else keep_body
        edits: Tuple[StatementEdit, ...] = (StatementEdit(line, col, partial(transform)),)
        if not negated and not holder.orelse:
            edits += tuple(StatementEdit(*ctx.line_col(ctx.span(s)[0]), remove) for s in _unreachable_after(ctx, holder))
        return edits, ()
    if isinstance(holder, ast.IfExp) and holder.test is test:
        kept = holder.orelse if negated else holder.body
        text = ctx.text(kept)
        text = text if _is_atom(kept) or not _needs_parens(ctx, holder) else f"({text})"
        return (), (_replace_keeping_comments(ctx, holder, kept, text),)
    if not negated and isinstance(holder, ast.BoolOp) and isinstance(holder.op, ast.And) and _is_condition(ctx, holder):
        others = [v for v in holder.values if v is not expr]
        start, end = ctx.span(holder)
        grouped = ctx.source[start - 1:start] == "(" and ctx.source[end:end + 1] == ")"
        if len(others) == 1 and grouped and _is_atom(others[0]) and "#" not in ctx.source[start:end]:
            return (), (Edit(start - 1, end + 1, ctx.text(others[0])),)  # `a or (b and flag)`: `a or b`
        return (), (_drop_operand(ctx, holder, expr),)
    return None


def fold_false(ctx: FileContext, expr: ast.expr) -> Optional[tuple]:
    """Edits that drop a condition known to be false, or None if its context is not simple:
    ``if expr:`` keeps its ``else`` (without one the statement goes), ``if not expr:`` its body
    (``fold_true`` of the ``not``), ``a if expr else b`` becomes ``b``, and ``expr`` as one
    operand of an ``or`` that is itself a condition goes. Returns ``(statement_edits, text_edits)``."""
    parent = ctx.parent(expr)
    if isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not):
        return fold_true(ctx, parent)
    if isinstance(parent, ast.If) and parent.test is expr and not is_elif(ctx, parent):
        if not parent.orelse:
            return (), (delete_statement(ctx, parent),)
        line, col = ctx.line_col(ctx.span(parent)[0])
        return (StatementEdit(line, col, partial(keep_orelse)),), ()
    if isinstance(parent, ast.IfExp) and parent.test is expr:
        kept = parent.orelse
        text = ctx.text(kept)
        text = text if _is_atom(kept) or not _needs_parens(ctx, parent) else f"({text})"
        return (), (_replace_keeping_comments(ctx, parent, kept, text),)
    if isinstance(parent, ast.BoolOp) and isinstance(parent.op, ast.Or) and _is_condition(ctx, parent):
        return (), (_drop_operand(ctx, parent, expr),)
    return None


def _comments_closing_body(ctx: FileContext, node: ast.If, column: int) -> bool:
    """Whether comment lines indented deeper than the ``if`` follow the last statement of its
    body, before the ``else``/``elif`` line (comments of the body, not of the ``else``)."""
    line = (node.body[-1].end_lineno or node.body[-1].lineno) + 1
    while line < node.orelse[0].lineno:
        text = ctx.line_text(line)
        stripped = text.lstrip()
        if stripped and not stripped.startswith("#"):
            return False  # the `else:` line
        if stripped and len(text) - len(stripped) > column:
            return True
        line += 1
    return False


def _replace_keeping_comments(ctx: FileContext, holder: ast.expr, kept: ast.expr, text: str) -> Edit:
    """Replace ``holder`` by ``text`` (``kept``'s); the comments of ``holder`` outside ``kept``
    stay, as ruff's fixes keep them: at the end of the line if only closing brackets and commas
    follow ``holder`` there, else each at the end of a line of its own, the rest continuing on
    the next (a multi-line expression is inside brackets) aligned with where ``holder`` started."""
    start, end = ctx.span(holder)
    comments = _comments_outside(ctx, start, end, ctx.span(kept))
    if not comments:
        return Edit(start, end, text)
    end_line = ctx.line_col(end)[0]
    rest = ctx.source[end:ctx.line_start(end_line) + len(ctx.line_text(end_line))].rstrip("\r\n")
    closers = re.match(r"[\s)\]},]*", rest).group(0)  # type: ignore[union-attr]  # the pattern matches any text
    tail = rest[len(closers):].rstrip()
    if tail == "" or tail.startswith("#"):
        return Edit(start, end + len(rest), text + closers.rstrip() + "  " + "  ".join([*comments, tail]).rstrip())
    line, col = ctx.line_col(start)
    align = "".join(c if c == "\t" else " " for c in ctx.line_text(line)[:col])
    return Edit(start, end, text + "".join(f"  {comment}{newline(ctx)}{align}" for comment in comments))


def _comments_outside(ctx: FileContext, start: int, end: int, kept: tuple) -> list:
    """The comments in the expression ``source[start:end]`` that do not lie in the span ``kept``."""
    lines = io.StringIO("(" + ctx.source[start:end] + ")", newline="").readlines()
    try:
        tokens = list(tokenize.generate_tokens(iter(lines).__next__))
    except (tokenize.TokenError, SyntaxError):  # pragma: no cover - the span is an expression
        return []
    offsets = [0, *itertools.accumulate(map(len, lines))]  # "(" is the first character
    return [tok.string for tok in tokens if tok.type == tokenize.COMMENT
            and not kept[0] <= start + offsets[tok.start[0] - 1] + tok.start[1] - 1 < kept[1]]


def _is_condition(ctx: FileContext, node: ast.expr) -> bool:
    """Only the truth value of ``node`` is used, so ``a and True`` may become ``a``: the test of an
    ``if``/``while``/``assert``/conditional expression, or an operand of an ``and``/``or``/``not``
    that is one (``if ready or (legacy and flag):``)."""
    holder = ctx.parent(node)
    if isinstance(holder, (ast.BoolOp, ast.UnaryOp)) and (isinstance(holder, ast.BoolOp) or isinstance(holder.op, ast.Not)):
        return _is_condition(ctx, holder)
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


def _needs_parens(ctx: FileContext, node: ast.IfExp) -> bool:
    return not isinstance(ctx.parent(node), (ast.Expr, ast.Assign, ast.Return, ast.keyword, ast.Call, ast.Tuple, ast.List))
