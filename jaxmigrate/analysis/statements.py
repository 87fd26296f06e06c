"""Text edits shared by rules: replace or delete a statement, insert one before another, drop an argument
(import statements are analysis/imports.py's)."""

from __future__ import annotations

import ast
import re
from typing import List

from jaxmigrate.analysis.context import FileContext
from jaxmigrate.core.findings import Edit

#: statements after which the rest of their block cannot run
EXITS = (ast.Return, ast.Raise, ast.Continue, ast.Break)


def is_elif(ctx: FileContext, node: ast.If) -> bool:
    """Whether an ``If`` node is an ``elif`` branch (ast starts its node at the ``elif`` keyword)."""
    return ctx.source.startswith("elif", ctx.span(node)[0])


def statement_prefix(ctx: FileContext, node: ast.stmt) -> str:
    line = ctx.line_text(node.lineno)
    return line[: ctx.offset(node.lineno, node.col_offset) - ctx.line_start(node.lineno)]


def replace_statement(ctx: FileContext, node: ast.stmt, lines: List[str]) -> Edit:
    prefix = statement_prefix(ctx, node)
    joiner = newline(ctx) + prefix if prefix.strip() == "" else "; "
    return ctx.replace(node, joiner.join(lines))


def newline(ctx: FileContext) -> str:
    m = re.search(r"\r\n|\r|\n", ctx.source)
    return m.group(0) if m else "\n"


def trailing_text(ctx: FileContext, node: ast.stmt) -> str:
    """What follows a statement on its last line (a comment, or another statement after ``;``)."""
    end_line = node.end_lineno or node.lineno
    end = ctx.span(node)[1]
    return ctx.line_text(end_line)[end - ctx.line_start(end_line):].strip()


def delete_statement(ctx: FileContext, node: ast.stmt) -> Edit:
    """Delete a statement: its whole lines (a comment after it on the last line goes too, e.g.
    ``# noqa``) when it stands alone on them and is not the only statement of its block;
    otherwise replace it by ``pass``. The blank lines above and below it become one run as long
    as the longer of the two (none at the end of the file or the start of a block), so the
    deletion adds no E303 (too many blank lines) and keeps the two lines before a ``def``."""
    start, end = ctx.span(node)
    end_line = node.end_lineno or node.lineno
    parent = ctx.parent(node)
    block = enclosing_block(ctx, node)
    rest = trailing_text(ctx, node)
    alone = statement_prefix(ctx, node).strip() == "" and (rest == "" or rest.startswith("#"))
    if alone and (len(block) > 1 or isinstance(parent, ast.Module)):
        # the blank lines to delete with it: above it and below it, then keep the longer run
        above = _blank_run(ctx, node.lineno - 1, -1)
        below = _blank_run(ctx, end_line + 1, 1)
        if ctx.line_text(end_line + below + 1) == "":  # the end of the file: no blank line is left
            pass
        elif (not isinstance(parent, ast.Module) and node is block[0]) or above > below:
            above = 0
        else:
            below = 0
        last = end_line + below
        return Edit(ctx.line_start(node.lineno - above), ctx.line_start(last) + len(ctx.line_text(last)), "")
    return Edit(start, end, "pass")


def enclosing_block(ctx: FileContext, node: ast.stmt) -> List[ast.stmt]:
    """The statements of the block ``node`` is in (a body, an ``else``, a ``finally``)."""
    parent = ctx.parent(node)
    return next((getattr(parent, f) for f in ("body", "orelse", "finalbody") if node in (getattr(parent, f, None) or [])), [])


def _blank_run(ctx: FileContext, line: int, step: int) -> int:
    """How many blank lines there are from ``line`` on, going by ``step`` (-1 up, 1 down)."""
    count = 0
    while ctx.line_text(line).strip() == "" and ctx.line_text(line) != "":
        count, line = count + 1, line + step
    return count


def insert_before(ctx: FileContext, node: ast.stmt, lines: List[str]) -> Edit:
    """Insert statements (each a line of text, continuation lines already indented relative to
    the statement) on their own lines just before ``node``, at its indentation."""
    start = ctx.span(node)[0]
    prefix = statement_prefix(ctx, node)
    nl = newline(ctx)
    text = "".join(line.replace("\n", nl + prefix) + nl + prefix for line in lines)
    return Edit(start, start, text)


def drop_argument(ctx: FileContext, call: ast.Call, arg: ast.AST) -> Edit:
    """Delete one argument (positional or keyword) of a call with its separating comma."""
    return drop_arguments(ctx, call, [arg])[0]


def drop_arguments(ctx: FileContext, call: ast.Call, args: List[ast.AST]) -> List[Edit]:
    """Delete arguments (positional or keyword) of a call with their separating commas: one edit
    for each run of neighbours, which do not overlap."""
    items = sorted([*call.args, *call.keywords], key=lambda n: ctx.span(n)[0])
    dropped = {id(a) for a in args}
    edits, i = [], 0
    while i < len(items):
        if id(items[i]) not in dropped:
            i += 1
            continue
        j = i
        while j + 1 < len(items) and id(items[j + 1]) in dropped:
            j += 1
        start, end = ctx.span(items[i])[0], ctx.span(items[j])[1]
        if j + 1 < len(items):
            edits.append(Edit(start, ctx.span(items[j + 1])[0], ""))
        elif i > 0:
            edits.append(Edit(ctx.span(items[i - 1])[1], end, ""))
        else:
            edits.append(Edit(start, end, ""))
        i = j + 1
    return edits
