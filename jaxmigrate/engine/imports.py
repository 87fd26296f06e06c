"""Add needed imports and drop unused ones, as text edits located with ``ast``.

LibCST's AddImportsVisitor/RemoveImportsVisitor walk the whole tree with scope analysis: measured
here, 12 s on one 3,500-line test module. Imports are a small, regular part of a module, so this
works on them alone: an import statement that loses an alias is re-rendered by LibCST from its
own text (comments kept), and a new import joins the leading import block where isort would
put it (engine/import_layout.py).
"""

from __future__ import annotations

import ast
import bisect
import itertools
import re
from typing import List, Optional, Sequence

from jaxmigrate.analysis.context import FileContext
from jaxmigrate.analysis.statements import delete_statement, newline, render_without_names, statement_prefix
from jaxmigrate.core.findings import Edit, ImportRef
from jaxmigrate.engine.import_layout import import_edits, is_docstring, leading_imports, line_after, splice


def fix_imports(source: str, adds: Sequence[ImportRef], drops: Sequence[ImportRef]) -> str:
    if drops:
        source = _drop_unused(source, list(dict.fromkeys(drops)))
    if adds:
        source = _add(source, list(dict.fromkeys(adds)))
    return source


def _local(ref: ImportRef) -> str:
    return ref.asname or ref.name or ref.module.split(".")[0]


def _drop_unused(source: str, drops: List[ImportRef]) -> str:
    ctx = FileContext.of(source)
    wanted = {_local(ref) for ref in drops}
    loads: dict = {}
    for n in ctx.nodes(ast.Name):
        if n.id in wanted and isinstance(n.ctx, ast.Load):
            loads.setdefault(n.id, []).append(n)
    dunder_all = _names_in_all(ctx)
    unused = [ref for ref in drops if _local(ref) not in dunder_all]
    edits: List[Edit] = []
    statements: List[ast.Import | ast.ImportFrom] = [*ctx.nodes(ast.Import), *ctx.nodes(ast.ImportFrom)]  # function-level too
    for stmt in statements:  # one edit per statement, however many of its aliases go
        gone = [a for a in stmt.names if any(_matches(stmt, a, ref) for ref in unused)
                and not _read(ctx, stmt, loads.get(a.asname or a.name.split(".")[0], []))]
        edit = _without(ctx, stmt, gone)
        if edit is not None:
            edits.append(edit)
    for edit in sorted(edits, key=lambda e: e.start, reverse=True):
        source = source[: edit.start] + edit.text + source[edit.end :]
    return source


def drops_before_edits(ctx: FileContext, edits: Sequence[Edit], drops: Sequence[ImportRef]) -> Optional[List[Edit]]:
    """The edits that drop the imports of ``drops`` which ``edits`` leave unused, decided and
    located on the text before ``edits`` (``ctx``), so that the edited text need not be parsed
    again for it. An alias goes when each read of its name lies inside an edited span and no new
    text names it. None when this cannot be decided here and ``fix_imports`` must look at the
    edited text: an import statement the edits touch, one inside a block (the edits may leave
    the block empty), or a new text that mentions a dropped name."""
    spans = sorted((e.start, e.end) for e in edits)
    starts = [s for s, _ in spans]
    reach = list(itertools.accumulate((e for _, e in spans), max))  # furthest end among the spans so far

    def covered(node: ast.AST) -> bool:
        start, end = ctx.span(node)
        i = bisect.bisect_right(starts, start) - 1
        return i >= 0 and reach[i] >= end

    def overlaps(start: int, end: int) -> bool:
        return any(s < end and start < e or s == e == start for s, e in spans)

    dunder_all = _names_in_all(ctx)
    unused = [ref for ref in dict.fromkeys(drops) if _local(ref) not in dunder_all]
    out: List[Edit] = []
    statements: List[ast.Import | ast.ImportFrom] = [*ctx.nodes(ast.Import), *ctx.nodes(ast.ImportFrom)]
    for stmt in statements:
        gone = [a for a in stmt.names if any(_matches(stmt, a, ref) for ref in unused)]
        if not gone:
            continue
        if not isinstance(ctx.parent(stmt), ast.Module) or overlaps(*ctx.span(stmt)):
            return None
        really = []
        for alias in gone:
            local = alias.asname or alias.name.split(".")[0]
            word = re.compile(rf"(?<![\w.]){re.escape(local)}\b")
            if any(word.search(e.text) for e in edits):
                return None
            loads = [n for n in ctx.names(local) if isinstance(n.ctx, ast.Load) and not covered(n)]
            if not _read(ctx, stmt, loads):
                really.append(alias)
        edit = _without(ctx, stmt, really)
        if edit is None:
            continue
        if overlaps(edit.start, edit.end):
            return None
        out.append(edit)
    return out


def _without(ctx: FileContext, stmt: ast.stmt, aliases: List[ast.alias]) -> Optional[Edit]:
    """The edit that drops ``aliases`` from an import statement (the statement, if all go)."""
    if not aliases:
        return None
    if len(aliases) == len(stmt.names):  # type: ignore[attr-defined]  # an Import or ImportFrom: both have names
        return delete_statement(ctx, stmt)
    return ctx.replace(stmt, render_without_names(ctx.text(stmt), {(a.name, a.asname) for a in aliases}))


def _read(ctx: FileContext, stmt: ast.stmt, loads: List[ast.Name]) -> bool:
    """Whether one of ``loads`` may read the name this import binds (a parameter or local of
    the same name elsewhere does not count)."""
    return any(not ctx.bindings(n) or any(b.node is stmt for b in ctx.bindings(n)) for n in loads)


def _matches(stmt: ast.stmt, alias: ast.alias, ref: ImportRef) -> bool:
    if isinstance(stmt, ast.ImportFrom):
        return stmt.level == 0 and stmt.module == ref.module and alias.name == ref.name and alias.asname == ref.asname
    return isinstance(stmt, ast.Import) and ref.name is None and alias.name == ref.module and alias.asname == ref.asname


def _names_in_all(ctx: FileContext) -> set:
    out = set()
    for stmt in ctx.tree.body:
        if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in stmt.targets):
            if isinstance(stmt.value, (ast.List, ast.Tuple)):
                out |= {e.value for e in stmt.value.elts if isinstance(e, ast.Constant)}
    return out


def _loads_submodule(ctx: FileContext, module: str) -> bool:
    """Whether a module-level import loads ``module`` (``import module``, or of something in it)."""
    for stmt in ctx.tree.body:
        if isinstance(stmt, ast.Import) and any(a.name == module or a.name.startswith(module + ".") for a in stmt.names):
            return True
        if isinstance(stmt, ast.ImportFrom) and not stmt.level and stmt.module and (
                stmt.module == module or stmt.module.startswith(module + ".")):
            return True
    return False


def _add(source: str, adds: List[ImportRef]) -> str:
    ctx = FileContext.of(source)
    refs = []
    for ref in adds:
        qual = f"{ref.module}.{ref.name}" if ref.name else ref.module
        if _local(ref) in set(ctx.resolver.module_names_for(qual if ref.name or ref.asname else ref.module.split(".")[0])):
            if ref.name or ref.asname or "." not in ref.module or _loads_submodule(ctx, ref.module):
                continue  # `import jax` binds `jax`, but only `import jax.extend.core` loads that submodule
        refs.append(ref)
    if not refs:
        return source
    edits = import_edits(ctx, refs)
    if edits is not None:
        return splice(source, edits)
    nl = newline(ctx)
    lines = [f"from {r.module} import {r.name}" + (f" as {r.asname}" if r.asname else "") if r.name
             else f"import {r.module}" + (f" as {r.asname}" if r.asname else "") for r in refs]
    block = leading_imports(ctx)
    anchor = block[-1] if block else None
    if anchor is None:
        first = ctx.tree.body[0] if ctx.tree.body else None
        at = line_after(ctx, first) if first is not None and is_docstring(first) else _after_magic_comments(ctx)
        return source[:at] + "".join(line + nl for line in lines) + _gap(ctx, at) + source[at:]
    end_line = anchor.end_lineno or anchor.lineno
    at = ctx.line_start(end_line) + len(ctx.line_text(end_line))
    text = ctx.line_text(end_line)
    prefix = "" if text.endswith(("\n", "\r")) else nl
    indent = statement_prefix(ctx, anchor)
    return source[:at] + prefix + "".join(indent + line + nl for line in lines) + source[at:]


def _gap(ctx: FileContext, at: int) -> str:
    """The blank lines new imports at ``at`` need before the code that follows them there: two
    before a def or class (E302), one before other code, none where a blank line follows."""
    line, _ = ctx.line_col(at)
    if at >= len(ctx.source) or not ctx.line_text(line).strip():
        return ""
    nxt = next((s for s in ctx.tree.body if ctx.span(s)[0] >= at), None)
    return newline(ctx) * (2 if isinstance(nxt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) else 1)


def _after_magic_comments(ctx: FileContext) -> int:
    """The start of the first line after a ``#!`` line and an encoding declaration, which stay first."""
    line = 1
    while line <= 2 and re.match(r"#!|#.*coding[:=]", ctx.line_text(line)):
        line += 1
    return ctx.line_start(line) if ctx.line_text(line) else len(ctx.source)
