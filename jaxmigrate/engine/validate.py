"""Whether a fix round left a module Python compiles: the last guard before anything is written.

Parsing is not enough (a repeated keyword argument, ``return`` outside a function, a misplaced
``from __future__`` import parse fine), but compiling the whole module again costs most of a
parse for every fixed file. So the new text is parsed whole (the analysis after the round reads
that same tree) and only what the round changed is compiled, each part in its context: a
top-level statement whose text is not among the old module's, and inside a class whose header
is unchanged, a member whose text is not among the old class's (compiled inside ``if 1:``, with
its own indentation; the class body adds nothing a compiler checks). The ``__future__`` flags
of the module go with each part, and their placement is checked on the tree. Compile errors in
statements a round did not touch were there before: they are the user's, not a fix's.
"""

from __future__ import annotations
import __future__

import ast
from typing import Iterator, List, Optional, Sequence, Tuple

from jaxmigrate.analysis.context import FileContext


def check_compiles(old: FileContext, after: str) -> None:
    """Raise SyntaxError (or ValueError) if ``after`` does not parse, or a part of it that differs
    from ``old.source`` does not compile."""
    new = FileContext.of(after)  # the analysis after the round reads this same parse
    flags = _future_flags(new.tree)
    if flags != _future_flags(old.tree):
        compile(after, "<fixed>", "exec", dont_inherit=True)
        return
    _future_placement(new.tree)
    for text in _changed(old, old.tree.body, new, new.tree.body, nested=False):
        compile(text, "<fixed>", "exec", flags=flags, dont_inherit=True)


def _lines(node: ast.stmt) -> Tuple[int, int]:
    """First line (its first decorator's, if any) and last line of a statement."""
    first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))])
    return first, node.end_lineno or node.lineno


def _text(ctx: FileContext, node: ast.stmt) -> str:
    first, last = _lines(node)
    end = ctx.line_start(last) + len(ctx.line_text(last))
    return ctx.source[ctx.line_start(first):end]


def _header(ctx: FileContext, node: ast.ClassDef) -> Optional[str]:
    """A class up to its first body statement (decorators, bases, keywords), or None when the
    body starts on the class's own line."""
    first, _ = _lines(node)
    body_first, _ = _lines(node.body[0])
    return ctx.source[ctx.line_start(first):ctx.line_start(body_first)] if body_first > node.lineno else None


def _changed(old: FileContext, old_body: Sequence[ast.stmt], new: FileContext, new_body: Sequence[ast.stmt],
             nested: bool) -> Iterator[str]:
    """The source of each statement of ``new_body`` that ``old_body`` does not hold as it is,
    ready to compile alone (an indented one inside ``if 1:``)."""
    seen = {_text(old, s) for s in old_body}
    classes = {_header(old, s): s for s in old_body if isinstance(s, ast.ClassDef)}
    classes.pop(None, None)
    for stmt in new_body:
        text = _text(new, stmt)
        if text in seen:
            continue
        if isinstance(stmt, ast.ClassDef):
            header = _header(new, stmt)
            twin = classes.get(header) if header is not None else None
            if twin is not None:
                yield from _changed(old, twin.body, new, stmt.body, nested=True)
                continue
        yield "if 1:\n" + text if nested else text


def _future_flags(tree: ast.Module) -> int:
    flags = 0
    for stmt in tree.body:
        if isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__":
            for alias in stmt.names:
                feature = getattr(__future__, alias.name, None)
                flags |= getattr(feature, "compiler_flag", 0)
    return flags


def _future_placement(tree: ast.Module) -> None:
    """``from __future__`` imports only after the docstring and each other, as Python requires."""
    body: List[ast.stmt] = list(tree.body)
    if (body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)):
        body = body[1:]
    leading = True
    for stmt in body:
        is_future = isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__"
        if is_future and not leading:
            raise SyntaxError("from __future__ imports must occur at the beginning of the file", ("<fixed>", stmt.lineno, 1, ""))
        leading = leading and is_future
