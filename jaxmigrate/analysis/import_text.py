"""The text of import statements: one without some of its names, the comments on its names' lines,
a new ``from ... import`` that carries such comments along."""

from __future__ import annotations

import re
from typing import Any, Dict, List, Optional, Tuple, cast

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
