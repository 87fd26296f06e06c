"""Fixes held back for the text another finding rests on (``core.findings.Evidence``).

A finding may rest on text that shows what it says: JM504 reports a pjit's calls only where the
module shows it was written for GDA-era pjit, by the ``in_axis_resources`` keyword JM101
renames. Were the rename applied, the next ``check`` of the file (pre-commit and CI throw the
``fix`` output away) could no longer tell, and the finding would be gone while the code it
reports is unchanged. So while such a finding stands (reported, not silenced), a fix of another
finding that would rewrite that text waits: the finding keeps its message, with the note of the
finding it waits for, and has no fix. Once the finding is resolved, the fix applies again.
"""

from __future__ import annotations

import ast
from dataclasses import replace
from typing import List, Optional, Sequence, Tuple

from jaxmigrate.analysis.context import FileContext
from jaxmigrate.core.findings import Finding, Fix


def hold_for_evidence(findings: List[Finding], ctx: FileContext) -> List[Finding]:
    """``findings`` with the fixes that would rewrite what a standing finding rests on held back. A
    fix that replaces the finding's own code too (JM301 deleting the branch of `if jax_array: ...
    else:` that holds a reported call) is not held: it resolves the finding with its evidence."""
    resting = [(f.rests_on, _span(ctx, f)) for f in findings if f.rests_on is not None]
    if not resting:
        return findings
    out = []
    for f in findings:
        if f.fix is not None and f.rests_on is None:
            held = next((evidence for evidence, subject in resting
                         if _rewrites(ctx, f.fix, evidence.spans) and not _replaces(ctx, f.fix, subject)), None)
            if held is not None:
                f = replace(f, message=f"{f.message}; held back: {held.note}", fix=None)
        out.append(f)
    return out


def _span(ctx: FileContext, finding: Finding) -> Tuple[int, int]:
    """The character offsets of what ``finding`` reports (its columns count characters)."""
    return (ctx.line_start(finding.line) + finding.column - 1, ctx.line_start(finding.end_line) + finding.end_column - 1)


def _rewrites(ctx: FileContext, fix: Fix, spans: Sequence[Tuple[int, int]]) -> bool:
    """Whether applying ``fix`` may change the text of one of ``spans``: an edit over it, a
    statement edit of the statement that holds it, or an import it may drop."""
    for start, end in spans:
        for edit in fix.edits:
            if edit.start < end and start < edit.end or start < edit.start < end:
                return True
        for statement in fix.statement_edits:
            found = _statement_at(ctx, statement.line, statement.column)
            if found is not None:
                first, last = ctx.span(found)
                if first < end and start < last:
                    return True
        if fix.drop_unused_imports and _drops(ctx, fix, start, end):
            return True
    return False


def _replaces(ctx: FileContext, fix: Fix, span: Tuple[int, int]) -> bool:
    """Whether ``fix`` replaces all of ``span`` (an edit or a statement edit over the whole of it)."""
    start, end = span
    if any(edit.start <= start and end <= edit.end for edit in fix.edits):
        return True
    for statement in fix.statement_edits:
        found = _statement_at(ctx, statement.line, statement.column)
        if found is not None:
            first, last = ctx.span(found)
            if first <= start and end <= last:
                return True
    return False


def _statement_at(ctx: FileContext, line: int, column: int) -> Optional[ast.stmt]:
    for stmt in ctx.statements:
        if stmt.lineno == line and ctx.line_col(ctx.span(stmt)[0])[1] == column:
            return stmt
    return None


def _drops(ctx: FileContext, fix: Fix, start: int, end: int) -> bool:
    """Whether one of the fix's imports to drop is an import statement's name within ``start:end``."""
    imports: List[ast.Import | ast.ImportFrom] = [*ctx.nodes(ast.Import), *ctx.nodes(ast.ImportFrom)]
    for node in imports:
        first, last = ctx.span(node)
        if not (first < end and start < last):
            continue
        for alias in node.names:
            a, b = ctx.span(alias)
            if not (a < end and start < b):
                continue
            for ref in fix.drop_unused_imports:
                if isinstance(node, ast.ImportFrom) and (ref.module, ref.name) == (node.module, alias.name):
                    return True
                if isinstance(node, ast.Import) and ref.name is None and ref.module == alias.name:
                    return True
    return False

