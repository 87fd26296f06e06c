"""Whether a fix round left a module Python compiles: the last guard before anything is written.

Parsing is not enough (a repeated keyword argument, ``return`` outside a function, a misplaced
``from __future__`` import parse fine), but compiling the whole module again costs most of a
parse for every fixed file. So the new text is parsed whole (the analysis after the round reads
that same tree) and only what the round changed is compiled, each part in its context: a
top-level statement whose text is not among the old module's, and inside a class whose header
is unchanged, a member whose text is not among the old class's (compiled inside ``if 1:``, with
its own indentation; the class body adds nothing a compiler checks). Statements that share a
line (``a = 1; b = 2``) are one part, their whole lines, compiled once. The ``__future__`` flags
of the module go with each part, and their placement is checked on the tree. Compile errors in
statements a round did not touch were there before: they are the user's, not a fix's.
"""

from __future__ import annotations
import __future__

import ast
from typing import Dict, Iterator, List, Optional, Sequence, Tuple, Union

from jaxmigrate.analysis.context import FileContext


def check_compiles(old: Union[FileContext, "Baseline"], after: str) -> None:
    """Raise SyntaxError (or ValueError) if ``after`` does not parse, or a part of it that differs
    from ``old`` (the text before the round, or its ``Baseline``) does not compile."""
    base = old if isinstance(old, Baseline) else Baseline(old)
    new = FileContext.of(after)  # the analysis after the round reads this same parse
    flags = _future_flags(new.tree)
    if flags != base.flags:
        compile(after, "<fixed>", "exec", dont_inherit=True)
        return
    _future_placement(new.tree)
    for text in _changed(base.body, new, new.tree.body, nested=False):
        compile(text, "<fixed>", "exec", flags=flags, dont_inherit=True)


class Baseline:
    """What ``check_compiles`` needs of the text before a round: its ``__future__`` flags and the
    text of each block's statements, by line groups (``_groups``), with its classes' blocks by
    header. Taken before the fixed text is parsed, it lets the parse of the text before go
    first: a module's tree and analysis are most of the memory of a fix, and two at once took
    560 MB for a module of 50,000 lines."""

    __slots__ = ("flags", "body")

    def __init__(self, old: FileContext) -> None:
        self.flags = _future_flags(old.tree)
        self.body = _Block(old, old.tree.body)


class _Block:
    """The texts of a block's line groups, and for each class in it with a header of its own
    lines (``_header``), its body's ``_Block`` (the last class of a header, as a dict keeps it)."""

    __slots__ = ("texts", "classes")

    def __init__(self, ctx: FileContext, body: Sequence[ast.stmt]) -> None:
        groups = _groups(body)
        self.texts = {_text(ctx, first, last) for first, last, _ in groups}
        classes: Dict[str, ast.ClassDef] = {}
        for _, _, members in groups:
            stmt = members[0]
            if len(members) == 1 and isinstance(stmt, ast.ClassDef):
                header = _header(ctx, stmt)
                if header is not None:
                    classes[header] = stmt
        self.classes = {header: _Block(ctx, stmt.body) for header, stmt in classes.items()}


def _lines(node: ast.stmt) -> Tuple[int, int]:
    """First line (its first decorator's, if any) and last line of a statement."""
    first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))])
    return first, node.end_lineno or node.lineno


def _text(ctx: FileContext, first: int, last: int) -> str:
    return ctx.source[ctx.line_start(first):ctx.line_start(last) + len(ctx.line_text(last))]


def _header(ctx: FileContext, node: ast.ClassDef) -> Optional[str]:
    """A class up to its first body statement (decorators, bases, keywords), or None when the
    body starts on the class's own line."""
    first, _ = _lines(node)
    body_first, _ = _lines(node.body[0])
    return ctx.source[ctx.line_start(first):ctx.line_start(body_first)] if body_first > node.lineno else None


def _groups(body: Sequence[ast.stmt]) -> List[Tuple[int, int, List[ast.stmt]]]:
    """The statements of ``body`` with the lines they span, those that share a line as one
    (``a = 1; b = 2``): the text of each group, its whole lines, is compiled once, not once for
    each of its statements (2,500 statements on one line: 2,500 compiles of the whole line)."""
    groups: List[Tuple[int, int, List[ast.stmt]]] = []
    for stmt in body:
        first, last = _lines(stmt)
        if groups and first <= groups[-1][1]:
            top, bottom, members = groups[-1]
            members.append(stmt)
            groups[-1] = (top, max(bottom, last), members)
        else:
            groups.append((first, last, [stmt]))
    return groups


def _changed(old: _Block, new: FileContext, new_body: Sequence[ast.stmt], nested: bool) -> Iterator[str]:
    """The source of each statement (or statements sharing lines) of ``new_body`` that the block
    before (``old``) does not hold as it is, ready to compile alone (an indented one inside
    ``if 1:``)."""
    for first, last, members in _groups(new_body):
        text = _text(new, first, last)
        if text in old.texts:
            continue
        if len(members) == 1 and isinstance(members[0], ast.ClassDef):
            header = _header(new, members[0])
            twin = old.classes.get(header) if header is not None else None
            if twin is not None:
                yield from _changed(twin, new, members[0].body, nested=True)
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
