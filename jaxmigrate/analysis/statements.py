"""Text edits shared by rules: replace or delete a statement, insert one before another, drop an argument."""

from __future__ import annotations

import ast
import re
from typing import Any, Dict, List, Optional, Tuple, cast

from jaxmigrate.analysis.context import FileContext
from jaxmigrate.core.findings import Edit


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
    block: List[ast.stmt] = next((getattr(parent, f) for f in ("body", "orelse", "finalbody")
                                  if node in (getattr(parent, f, None) or [])), [])
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


def _blank_run(ctx: FileContext, line: int, step: int) -> int:
    """How many blank lines there are from ``line`` on, going by ``step`` (-1 up, 1 down)."""
    count = 0
    while ctx.line_text(line).strip() == "" and ctx.line_text(line) != "":
        count, line = count + 1, line + step
    return count


_PLAIN_IMPORT = re.compile(r"(from [\w.]+ import |import )([\w.]+(?: as \w+)?(?:, [\w.]+(?: as \w+)?)*)")


def render_without_names(statement: str, names: set) -> str:
    """``names`` holds (name, asname) pairs to drop from an ``import``/``from ... import``.

    A one-line import spelled the usual way (``from m import a, b as c``) is rebuilt from its
    text; any other layout (parentheses, comments, backslashes) is rendered by LibCST, which
    costs 0.17 s to import: ``check`` builds these fixes too, and most never need it."""
    plain = _PLAIN_IMPORT.fullmatch(statement)
    if plain is not None:
        head, items = plain.groups()
        kept_items = [item for item in items.split(", ") if tuple((item.split(" as ") + [None])[:2]) not in names]
        if kept_items:
            return head + ", ".join(kept_items)
    import libcst as cst

    found = re.search(r"\r\n|\r|\n", statement)
    nl = found.group(0) if found else "\n"  # the statement's line ending, not LibCST's default
    # an Import or ImportFrom (the text is one): typed Any, as LibCST's types cannot know that
    line = cast("cst.SimpleStatementLine", cst.parse_statement(statement, cst.PartialParserConfig(default_newline=nl)))
    imp: Any = line.body[0]
    kept = [a for a in imp.names if _alias_key(cst, a) not in names]
    changes = {}
    if getattr(imp, "lpar", None) is None:  # a trailing comma is only allowed inside parentheses
        kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    elif (kept[-1] is not imp.names[-1] and not isinstance(imp.names[-1].comma, cst.Comma)
          and _comment_of(cst, imp, imp.names[-1]) is not None and not imp.rpar.whitespace_before.empty_lines):
        # the dropped last name's comment sits before the `)`: it goes with the name
        changes["rpar"] = imp.rpar.with_changes(whitespace_before=cst.SimpleWhitespace(""))
    text = cst.Module(body=[], default_newline=nl).code_for_node(imp.with_changes(names=kept, **changes))
    # the closing parenthesis keeps the indentation it had on its own line
    close = re.search(r"\n([ \t]*)\)$", statement)
    if close is not None:
        text = re.sub(r"\n[ \t]*\)$", "\n" + close.group(1) + ")", text)
    return text


def _alias_key(cst, alias) -> tuple:
    asname = alias.asname.name.value if alias.asname and isinstance(alias.asname.name, cst.Name) else None
    return (cst.helpers.get_full_name_for_node(alias.name), asname)


def _comment_of(cst, imp, alias) -> Optional[str]:
    """The comment on the line of ``alias`` in a parenthesized import: after its comma, or after
    the last name when the ``)`` is on a later line."""
    if isinstance(alias.comma, cst.Comma):
        ws = alias.comma.whitespace_after
    elif alias is imp.names[-1] and getattr(imp, "rpar", None) is not None:
        ws = imp.rpar.whitespace_before
    else:
        return None
    if isinstance(ws, cst.ParenthesizedWhitespace) and ws.first_line.comment is not None:
        return ws.first_line.comment.value
    return None


def alias_comments(statement: str, names: set) -> Dict[tuple, str]:
    """The comments on the lines of the aliases ``names`` ((name, asname) pairs) of an import
    statement's text, for the aliases that have one (``render_without_names`` drops them with
    their names; a rule that moves a name to another import takes its comment along)."""
    if "#" not in statement:
        return {}
    import libcst as cst

    imp: Any = cast("cst.SimpleStatementLine", cst.parse_statement(statement)).body[0]  # an Import or ImportFrom, as above
    out = {}
    for alias in imp.names:
        key = _alias_key(cst, alias)
        comment = _comment_of(cst, imp, alias) if key in names else None
        if comment is not None:
            out[key] = comment
    return out


def render_import_from(module: str, items: List[Tuple[str, Optional[str]]], one_line: bool, indent: str, nl: str) -> str:
    """``from module import ...`` for ``items``, each an alias's text and its comment (or None).
    A single commented alias keeps its comment at the end of the line when ``one_line`` allows
    text after the statement; otherwise commented aliases go one a line inside parentheses
    (continuation lines start with ``indent``)."""
    comments = [c for _, c in items if c]
    if not comments:
        return f"from {module} import {', '.join(text for text, _ in items)}"
    if len(items) == 1 and one_line:
        return f"from {module} import {items[0][0]}  {items[0][1]}"
    lines = [f"{indent}    {text}," + (f"  {c}" if c else "") for text, c in items]
    return f"from {module} import (" + nl + nl.join(lines) + nl + indent + ")"


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
    items = sorted([*call.args, *call.keywords], key=lambda n: ctx.span(n)[0])
    i = next(k for k, item in enumerate(items) if item is arg)
    start, end = ctx.span(arg)
    if i + 1 < len(items):
        return Edit(start, ctx.span(items[i + 1])[0], "")
    if i > 0:
        return Edit(ctx.span(items[i - 1])[1], end, "")
    return Edit(start, end, "")


def needs_root(ctx: FileContext, node: ast.Import, root: str) -> bool:
    """Whether dropping ``import root.x.y`` would leave uses of ``root`` with no other import."""
    used = bool(ctx.loads_of(root, root))
    if not used:
        return False
    for other in ctx.resolver.imports:
        if other is node or not isinstance(other, ast.Import):
            continue
        if any(a.asname is None and a.name.split(".")[0] == root for a in other.names):
            return False
    return True


def drop_import_alias(ctx: FileContext, node: ast.Import, alias: ast.alias) -> Edit:
    """The edit that drops one name of an ``import`` statement (the statement, if it was the only
    one), keeping ``import jax`` if ``jax`` is still used through it."""
    others = [a for a in node.names if a is not alias]
    needs_jax = not alias.asname and needs_root(ctx, node, alias.name.split(".")[0])
    if others:
        return ctx.replace(node, "import " + ", ".join(ctx.text(a) for a in others) + (", jax" if needs_jax else ""))
    if needs_jax:
        return ctx.replace(node, "import jax")
    return delete_statement(ctx, node)
