"""Where an import that a fix needs goes, as isort or ruff's ``I`` rules would put it.

``from m import x`` joins the leading import block's ``from m import ...`` when there is one
that can take it (``from m import a, x``). Otherwise the new statement goes into the leading
import block: into the group (imports between blank lines) that already imports from the same
package, else the first group of its section (standard library, or other), else a group of its
own; inside the group before the first statement that sorts after it (``import`` statements
before ``from`` ones, then by module name) if the group is in that order, else next to the
imports of the same package. ``join_written_imports`` then joins the one-line ``from`` imports
that rules rewrote (``from jax.experimental import PartitionSpec`` and ``from
jax.experimental.maps import Mesh`` both become ``from jax.sharding import ...``). Where the
module's imports were in isort's order, a tree kept clean by isort or ruff's ``I`` rules stays
clean: the statements the fixes rewrote move to their place in that order, a ``from`` import the
joining made too long is wrapped, and a name imported with an alias (``PartitionSpec as P``)
keeps a statement of its own, as isort and ruff write it by default, unless the module already
combines an aliased name with others in one statement.
"""

from __future__ import annotations

import ast
import re
import sys
from typing import Dict, List, Optional, Tuple, cast

from jaxmigrate.analysis.context import FileContext
from jaxmigrate.analysis.statements import delete_statement, newline, statement_prefix, trailing_text
from jaxmigrate.core.findings import Edit, ImportRef

_STDLIB = frozenset(sys.stdlib_module_names)
FUTURE, STDLIB, OTHER, LOCAL = range(4)


def import_edits(ctx: FileContext, refs: List[ImportRef]) -> Optional[List[Edit]]:
    """The edits that add ``refs`` (imports the module lacks); None when the leading import
    block is empty or has a statement sharing its lines with other code, where the caller's
    plain placement is kept."""
    block = leading_imports(ctx)
    if not block or not all(_alone(ctx, s) for s in block):
        return None
    edits: List[Edit] = []
    new: Dict[str, List[ImportRef]] = {}  # the statements to write: one per module for `from` imports
    for ref in sorted(refs, key=_ref_key):
        new.setdefault(f"from {ref.module}" if ref.name else f"import {ref.module} as {ref.asname}", []).append(ref)
    for head, group in new.items():
        into = _merge_target(ctx, block, group) if head.startswith("from ") else None
        if into is not None:
            edits += _add_aliases(ctx, into, group)
        else:
            edits.append(_place(ctx, block, group))
    return edits


def leading_imports(ctx: FileContext) -> List[ast.stmt]:
    """The module-level imports before any other code (a docstring may come first)."""
    out: List[ast.stmt] = []
    for i, stmt in enumerate(ctx.tree.body):
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            out.append(stmt)
        elif out or not (i == 0 and is_docstring(stmt)):
            break
    return out


def is_docstring(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)


def _alone(ctx: FileContext, stmt: ast.stmt) -> bool:
    rest = trailing_text(ctx, stmt)
    return statement_prefix(ctx, stmt) == "" and (rest == "" or rest.startswith("#"))


def _module(stmt: ast.stmt) -> str:
    if isinstance(stmt, ast.Import):
        return stmt.names[0].name
    return "." * stmt.level + (stmt.module or "")  # type: ignore[attr-defined]  # not an Import: an ImportFrom


def _section(module: str) -> int:
    root = module.split(".")[0]
    return LOCAL if module.startswith(".") else FUTURE if root == "__future__" else STDLIB if root in _STDLIB else OTHER


def _key(module: str, is_from: bool) -> Tuple[int, int, str]:
    return (_section(module), int(is_from), module.lower())


def _stmt_key(stmt: ast.stmt) -> Tuple[int, int, str]:
    return _key(_module(stmt), isinstance(stmt, ast.ImportFrom))


def _ref_key(ref: ImportRef) -> tuple:
    return (*_key(ref.module, ref.name is not None), name_key(ref.name or ""))


def name_key(name: str) -> Tuple[int, str]:
    """isort's order of imported names: CONSTANTS, then Classes, then the rest."""
    kind = 0 if name.isupper() and len(name) > 1 else 1 if name[:1].isupper() else 2
    return (kind, name.lower())


def _alias(ref: ImportRef) -> str:
    return (ref.name or ref.module) + (f" as {ref.asname}" if ref.asname else "")


# joining `from m import ...` ----------------------------------------------------------------
def _merge_target(ctx: FileContext, block: List[ast.stmt], refs: List[ImportRef]) -> Optional[ast.ImportFrom]:
    """A ``from m import ...`` of the block that can take the names of ``refs`` (all from ``m``):
    not ``*``, not importing one of those names already (under another alias), no comment after it;
    in a block in isort's order, an aliased name on either side only where the block combines such
    names (``combines_aliases``), as isort and ruff keep them apart by default."""
    wanted = {ref.name for ref in refs}
    apart = not combines_aliases(block) and imports_in_order(ctx)
    if apart and any(ref.asname for ref in refs):
        return None
    for stmt in block:
        if isinstance(stmt, ast.ImportFrom) and stmt.level == 0 and stmt.module == refs[0].module:
            if apart and _aliased(stmt):
                continue
            if not any(a.name == "*" or a.name in wanted for a in stmt.names) and not trailing_text(ctx, stmt):
                return stmt  # (a comment after the statement speaks of its line's names)
    return None


def combines_aliases(stmts) -> bool:
    """Whether one of these statements imports an aliased name with others (``from m import a, b
    as c``: isort's ``combine_as_imports``, off by default, as in ruff)."""
    return any(isinstance(s, ast.ImportFrom) and len(s.names) > 1 and _aliased(s) for s in stmts)


def _aliased(stmt: ast.stmt) -> bool:
    return any(a.asname for a in stmt.names)  # type: ignore[attr-defined]  # an Import or ImportFrom


def _add_aliases(ctx: FileContext, stmt: ast.ImportFrom, refs: List[ImportRef]) -> List[Edit]:
    """Insert the names of ``refs`` (in order) among the statement's: each before the first
    name that sorts after it if the names are in order, else all last; on lines of their own
    where the statement is parenthesized with its names one a line."""
    names = stmt.names
    keys = [name_key(a.name) for a in names]
    slots: Dict[int, List[str]] = {}
    for ref in refs:
        at = next((i for i, k in enumerate(keys) if k > name_key(ref.name or "")), len(names))
        slots.setdefault(at if keys == sorted(keys) else len(names), []).append(_alias(ref))
    parens = re.match(r"from\s+[\w.]+\s+import\s*\(", ctx.text(stmt)) is not None
    nl = newline(ctx)
    edits = []
    for at, texts in slots.items():
        near = names[min(at, len(names) - 1)]  # the name the new ones go before, or the last
        start, end = ctx.span(near)
        indent = ctx.line_text(near.lineno)[: start - ctx.line_start(near.lineno)]
        own_line = parens and indent.strip() == "" and near.lineno != stmt.lineno
        if at < len(names):
            sep = f",{nl}{indent}" if own_line else ", "
            edits.append(Edit(start, start, sep.join(texts) + sep))
            continue
        last = cast(int, near.end_lineno)  # set on every parsed statement
        line_end = ctx.line_start(last) + len(ctx.line_text(last).rstrip("\r\n"))
        tail = re.fullmatch(r"([ \t]*,)?([ \t]*#.*)?", ctx.source[end:line_end])
        if own_line and tail is not None:  # after the last name's line, which keeps its comment
            added = "".join(f"{nl}{indent}{t}," for t in texts)
            edits.append(Edit(end, line_end, ("" if tail.group(1) else ",") + ctx.source[end:line_end] + added))
            continue
        comma = re.match(r"[ \t]*,", ctx.source[end:])  # `(a, b,)`
        if comma:
            edits.append(Edit(end + comma.end(), end + comma.end(), "".join(f" {t}," for t in texts)))
        else:
            edits.append(Edit(end, end, "".join(f", {t}" for t in texts)))
    return edits


# joining the imports the fixes wrote -------------------------------------------------------
def join_written_imports(original: str, text: str, in_order: bool = False) -> str:
    """``text`` with the ``from m import ...`` statements that fixes wrote in an import block of
    the module's own statements (one line, no comment, not a line of ``original``) joined to the block's first other
    import from ``m``: ``from m import b`` written beside ``from m import a`` (written too, or
    the file's own) gives ``from m import a, b``. ``in_order``: the leading import block of
    ``original`` was in isort's order (``imports_in_order``); then an aliased name joins only where
    the block's own statements combine such names, each group with a statement not of
    ``original`` is put in that order too, and a ``from`` import made too long is wrapped."""
    try:
        ctx = FileContext.of(text)
    except SyntaxError:
        return text
    lines = {line.strip() for line in original.splitlines()}
    edits: List[Edit] = []
    for block in _module_blocks(ctx):
        if all(_alone(ctx, s) for s in block):
            edits += _joins(ctx, block, lines, in_order)
    ordered = sorted(edits, key=lambda e: e.start)
    if any(a.end > b.start for a, b in zip(ordered, ordered[1:])):
        return text
    joined = splice(text, edits) if edits else text
    # parsed once, for this check and for the analysis of the joined text, which reads this
    # parse; the parse of ``text`` goes first (a large module's two trees at once: 1.5x the memory)
    if edits:
        del ctx
        FileContext.forget()
    if in_order:
        joined = _ordered(joined, lines, None if edits else ctx)
    if joined == text:
        return text
    FileContext.forget()
    try:
        FileContext.of(joined)
    except SyntaxError:  # not expected: keep the fixes' text
        return text
    return joined


def _module_blocks(ctx: FileContext) -> List[List[ast.stmt]]:
    """The runs of consecutive imports of the module's own statement list (not a function's or a
    branch's: no walk of the tree)."""
    blocks: List[List[ast.stmt]] = []
    run: List[ast.stmt] = []
    for stmt in [*ctx.tree.body, None]:
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            run.append(stmt)
            continue
        if run:
            blocks.append(run)
        run = []
    return blocks


def _joins(ctx: FileContext, block: List[ast.stmt], lines: set, in_order: bool) -> List[Edit]:
    """The edits that join the one-line ``from`` imports fixes wrote in ``block`` to the block's
    first other import of the same module (see ``join_written_imports``)."""
    combine = not in_order or combines_aliases([s for s in block if ctx.text(s) in lines])
    by_module: Dict[str, List[ast.ImportFrom]] = {}
    for stmt in block:
        if isinstance(stmt, ast.ImportFrom) and stmt.level == 0 and all(a.name != "*" for a in stmt.names) \
                and (combine or not _aliased(stmt)):
            by_module.setdefault(stmt.module or "", []).append(stmt)
    edits: List[Edit] = []
    for module, stmts in by_module.items():
        written = [s for s in stmts if s.lineno == s.end_lineno and "(" not in ctx.text(s)
                   and not trailing_text(ctx, s) and ctx.text(s) not in lines]
        into = next((s for s in stmts if all(s is not w for w in written)), stmts[0])
        if trailing_text(ctx, into):  # its comment speaks of its line's names
            continue
        names = {a.name for a in into.names}
        moving = []
        for stmt in written:
            if stmt is not into and not any(a.name in names for a in stmt.names):
                names |= {a.name for a in stmt.names}
                moving.append(stmt)
        if moving:
            refs = sorted((ImportRef(module, a.name, a.asname) for s in moving for a in s.names), key=_ref_key)
            edits += _add_aliases(ctx, into, refs) + [delete_statement(ctx, s) for s in moving]
    return edits


# isort's order -------------------------------------------------------------------------------
def _order_key(stmt: ast.stmt) -> tuple:
    """Where isort and ruff (their defaults) put a statement within its section: ``import``
    statements first, then ``from`` ones, by module (without case, then with); of one module by
    the first name imported (constants, classes, then the rest: ``_name_key``)."""
    module = _module(stmt)
    first = stmt.names[0]  # type: ignore[attr-defined]  # an Import or ImportFrom
    return (int(isinstance(stmt, ast.ImportFrom)), module.lower(), module, name_key(first.name), first.asname or "")


def import_blocks(ctx: FileContext) -> List[List[ast.stmt]]:
    """The module's import blocks as isort and ruff see them: the runs of consecutive import
    statements of each statement list (the module's, a function's, a branch's), each on lines of
    its own (a block with ``import pdb; pdb.set_trace()`` is not one they reorder)."""
    blocks: List[List[ast.stmt]] = []
    stack: List[ast.AST] = [ctx.tree]
    while stack:  # statements and their handlers and cases only: no expression holds an import
        node = stack.pop()
        for field in ("handlers", "cases"):
            stack.extend(getattr(node, field, None) or ())
        for field in ("body", "orelse", "finalbody"):
            stmts = getattr(node, field, None)
            if not isinstance(stmts, list):
                continue
            stack.extend(stmts)
            run: List[ast.stmt] = []
            for stmt in [*stmts, None]:
                if isinstance(stmt, (ast.Import, ast.ImportFrom)):
                    run.append(stmt)
                    continue
                if run and all(_own_lines(ctx, s) for s in run):
                    blocks.append(run)
                run = []
    return blocks


def _own_lines(ctx: FileContext, stmt: ast.stmt) -> bool:
    """Whether the statement has its lines to itself (but for its indentation and a comment)."""
    rest = trailing_text(ctx, stmt)
    return statement_prefix(ctx, stmt).strip() == "" and (rest == "" or rest.startswith("#"))


def imports_in_order(ctx: FileContext) -> bool:
    """Whether every import block of the module is in isort's order: each group (statements
    between blank lines) sorted by ``_order_key``."""
    for block in import_blocks(ctx):
        for group in _groups(ctx, block):
            keys = [_order_key(s) for s in group]
            if keys != sorted(keys):
                return False
    return True


def _ordered(text: str, lines: set, ctx: Optional[FileContext] = None) -> str:
    """``text`` with each group of its import blocks that holds a statement not among ``lines``
    (the original's, stripped) put in isort's order, after the leading block's ``from`` imports
    made too long are wrapped (``_wrapped``): each statement moves with the comment lines right
    above it (the group's first statement's stay: they head the group)."""
    try:
        ctx = ctx or FileContext.of(text)
    except SyntaxError:
        return text
    block = leading_imports(ctx)
    edits: List[Edit] = _wrapped(ctx, block, lines) if block and all(_alone(ctx, s) for s in block) else []
    if edits:  # the long lines first: the order below moves whole statements
        text = splice(text, edits)
        try:
            ctx = FileContext.of(text)
        except SyntaxError:
            return text
        edits = []
    for group in (g for b in import_blocks(ctx) for g in _groups(ctx, b)):
        keys = [_order_key(s) for s in group]
        if keys == sorted(keys) or all(ctx.text(s) in lines for s in group):
            continue
        last = group[-1].end_lineno or group[-1].lineno
        if not ctx.line_text(last).endswith(("\n", "\r")):
            continue  # the file's last line: a moved statement would run into the next
        units = []
        for n, stmt in enumerate(group):
            start = stmt.lineno
            while n and ctx.line_text(start - 1).lstrip().startswith("#"):
                start -= 1
            end = stmt.end_lineno or stmt.lineno
            units.append((_order_key(stmt), ctx.source[ctx.line_start(start):ctx.line_start(end) + len(ctx.line_text(end))]))
        begin = ctx.line_start(group[0].lineno)
        finish = ctx.line_start(last) + len(ctx.line_text(last))
        edits.append(Edit(begin, finish, "".join(text for _, text in sorted(units, key=lambda u: u[0]))))
    return splice(text, edits) if edits else text


#: isort's default line length: a ``from`` import the fixes made longer than this (and than every
#: import line of the module's own) is wrapped as ruff's isort wraps it
LINE_LENGTH = 79


def _wrapped(ctx: FileContext, block: List[ast.stmt], lines: set) -> List[Edit]:
    """The edits that wrap each one-line ``from`` import not among ``lines`` (the original's) that
    is longer than the module's own import lines and ``LINE_LENGTH``: its names in parentheses,
    one a line with a comma after each (which keeps ruff from joining them again, whatever its
    line length), indented as the module's wrapped imports are (else 4 spaces)."""
    own = [s for s in block if ctx.text(s) in lines]
    limit = max([LINE_LENGTH, *(len(ctx.line_text(n).rstrip("\r\n")) for s in own
                                for n in range(s.lineno, (s.end_lineno or s.lineno) + 1))])
    indent = next((m.group(1) for s in block if (s.end_lineno or s.lineno) > s.lineno  # fixes wrote one-line ones
                   for m in [re.match(r"([ \t]+)\S", ctx.line_text(s.lineno + 1))] if m), "    ")
    nl = newline(ctx)
    edits = []
    for stmt in block:
        if not isinstance(stmt, ast.ImportFrom) or stmt.end_lineno != stmt.lineno or ctx.text(stmt) in lines:
            continue
        if len(ctx.line_text(stmt.lineno).rstrip("\r\n")) <= limit or trailing_text(ctx, stmt) or "(" in ctx.text(stmt):
            continue
        head = f"from {'.' * stmt.level}{stmt.module or ''} import ("
        names = "".join(f"{nl}{indent}{_alias(ImportRef('', a.name, a.asname))}," for a in stmt.names)
        edits.append(ctx.replace(stmt, f"{head}{names}{nl})"))
    return edits


def splice(source: str, edits: List[Edit]) -> str:
    """``source`` with non-overlapping ``edits``; inserts at one place keep their order."""
    pieces: List[str] = []
    position = 0
    for edit in sorted(edits, key=lambda e: e.start):
        pieces += (source[position:edit.start], edit.text)
        position = edit.end
    return "".join(pieces) + source[position:]


# a statement of its own ---------------------------------------------------------------------
def _groups(ctx: FileContext, block: List[ast.stmt]) -> List[List[ast.stmt]]:
    """The block's statements in runs that no blank line separates."""
    groups: List[List[ast.stmt]] = []
    for stmt in block:
        prev = groups[-1][-1] if groups else None
        gap = range((prev.end_lineno or prev.lineno) + 1, stmt.lineno) if prev else range(0)
        if prev is not None and not any(ctx.line_text(n).strip() == "" for n in gap):
            groups[-1].append(stmt)
        else:
            groups.append([stmt])
    return groups


def _place(ctx: FileContext, block: List[ast.stmt], refs: List[ImportRef]) -> Edit:
    """Insert one new statement for ``refs`` (one ``import``, or ``from`` names of one module)."""
    nl = newline(ctx)
    module, is_from = refs[0].module, refs[0].name is not None
    line = f"from {module} import {', '.join(map(_alias, refs))}" if is_from else f"import {_alias(refs[0])}"
    key = _key(module, is_from)
    groups = _groups(ctx, block)
    root = module.split(".")[0]
    same = [g for g in groups if any(_module(s).split(".")[0] == root for s in g)]
    section = [g for g in groups if any(_section(_module(s)) == key[0] for s in g)]
    group = same[-1] if same else section[0] if section else None
    if group is None:  # a group of its own, after those of earlier sections
        before = [g for g in groups if max(_section(_module(s)) for s in g) < key[0]]
        if not before:
            at = _above_comments(ctx, block, groups[0][0])
            return Edit(at, at, line + nl + nl)
        at = line_after(ctx, before[-1][-1])
        return Edit(at, at, _eol(ctx, before[-1][-1]) + nl + line + nl)
    keys = [_stmt_key(s) for s in group]
    # in a sorted group, in order; in another, among the imports from the same package
    near = group if keys == sorted(keys) else [s for s in group if _module(s).split(".")[0] == root] or group
    later = next((s for s in near if _stmt_key(s) > key), None)
    if later is not None:
        at = _above_comments(ctx, block, later)
        return Edit(at, at, line + nl)
    at = line_after(ctx, near[-1])
    return Edit(at, at, _eol(ctx, near[-1]) + line + nl)


def line_after(ctx: FileContext, stmt: ast.stmt) -> int:
    """The offset just past the statement's last line (its line ending included)."""
    end_line = stmt.end_lineno or stmt.lineno
    return ctx.line_start(end_line) + len(ctx.line_text(end_line))


def _eol(ctx: FileContext, stmt: ast.stmt) -> str:
    """A line ending, where the statement's last line (the file's last) has none."""
    return "" if ctx.line_text(stmt.end_lineno or stmt.lineno).endswith(("\n", "\r")) else newline(ctx)


def _above_comments(ctx: FileContext, block: List[ast.stmt], stmt: ast.stmt) -> int:
    """The start of the comment lines right above ``stmt``, which belong to it; of its own line
    for the block's first statement (a file's header comment is not the import's)."""
    line = stmt.lineno
    while stmt is not block[0] and ctx.line_text(line - 1).lstrip().startswith("#"):
        line -= 1
    return ctx.line_start(line)
