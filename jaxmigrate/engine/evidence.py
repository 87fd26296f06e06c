"""Fixes held back for the text another finding rests on (``core.findings.Evidence``).

A finding may rest on text that shows what it says: JM504 reports a pjit's calls only where the
module shows it was written for GDA-era pjit, by the ``in_axis_resources`` keyword JM101
renames. Were the rename applied, the next ``check`` of the file (pre-commit and CI throw the
``fix`` output away) could no longer tell, and the finding would be gone while the code it
reports is unchanged. So while such a finding stands (reported, not silenced), a fix of another
finding that would rewrite that text waits: the finding keeps its message, with the note of the
finding it waits for, and has no fix. Once the finding is resolved, the fix applies again.

The work grows with the findings, not with their product: the spans rested on are sorted once
(they do not overlap: keywords, names), and each fix looks up only those its edits reach.
"""

from __future__ import annotations

import ast
import bisect
from dataclasses import replace
from typing import Dict, List, Optional, Tuple

from jaxmigrate.analysis.context import FileContext
from jaxmigrate.core.findings import Evidence, Finding, Fix

Span = Tuple[int, int]


def hold_for_evidence(findings: List[Finding], ctx: FileContext) -> List[Finding]:
    """``findings`` with the fixes that would rewrite what a standing finding rests on held back. A
    fix that replaces the finding's own code too (JM301 deleting the branch of `if jax_array: ...
    else:` that holds a reported call) is not held: it resolves the finding with its evidence."""
    if not any(f.rests_on is not None for f in findings):
        return findings
    rested = _Rested(ctx, findings)
    out = []
    for f in findings:
        if f.fix is not None and f.rests_on is None:
            held = rested.held_by(f.fix)
            if held is not None:
                f = replace(f, message=f"{f.message}; held back: {held.note}", fix=None)
        out.append(f)
    return out


class _Rested:
    """The spans the standing findings rest on, each with its evidence and the finding's own span."""

    def __init__(self, ctx: FileContext, findings: List[Finding]) -> None:
        self.ctx = ctx
        entries: Dict[Span, Tuple[Evidence, List[Span]]] = {}
        for f in findings:
            if f.rests_on is not None:
                subject = _span(ctx, f)
                for span in f.rests_on.spans:
                    entries.setdefault(span, (f.rests_on, []))[1].append(subject)
        self.spans = sorted(entries)
        self.ends = [end for _, end in self.spans]
        # keywords, names, imports: they do not overlap (else each lookup goes through them all)
        self.disjoint = all(a[1] <= b[0] for a, b in zip(self.spans, self.spans[1:]))
        self.entries = entries
        self._statements: Optional[Dict[Tuple[int, int], ast.stmt]] = None
        self._dropped: Optional[Dict[Tuple[str, Optional[str]], List[Span]]] = None

    def held_by(self, fix: Fix) -> Optional[Evidence]:
        """The evidence ``fix`` would rewrite (and not together with the finding that rests on it)."""
        reached = [(edit.start, edit.end) for edit in fix.edits]
        reached += [s for s in map(self._statement_span, fix.statement_edits) if s is not None]
        hit: List[Span] = [span for start, end in reached for span in self._overlapping(start, end)]
        if fix.drop_unused_imports:
            dropped = self._dropped_spans()
            hit += [span for ref in fix.drop_unused_imports for span in dropped.get((ref.module, ref.name), ())]
        for span in hit:
            evidence, subjects = self.entries[span]
            if not all(any(_covers(start, end, subject) for start, end in reached) for subject in subjects):
                return evidence  # a finding that rests on it would stand without it
        return None

    def _overlapping(self, start: int, end: int) -> List[Span]:
        """The spans rested on that ``start:end`` overlaps (an insertion inside one too)."""
        if not self.disjoint:
            return [(a, b) for a, b in self.spans if a < end and start < b or a < start < b]
        found = []
        i = bisect.bisect_right(self.ends, start)  # the first span that ends after ``start``
        while i < len(self.spans) and self.spans[i][0] < max(end, start + 1):  # (an insertion: inside it)
            if self.spans[i][0] < end or self.spans[i][0] < start:
                found.append(self.spans[i])
            i += 1
        return found

    def _statement_span(self, edit) -> Optional[Span]:
        if self._statements is None:
            ctx = self.ctx
            self._statements = {(s.lineno, ctx.line_col(ctx.span(s)[0])[1]): s for s in ctx.statements}
        found = self._statements.get((edit.line, edit.column))
        return self.ctx.span(found) if found is not None else None

    def _dropped_spans(self) -> Dict[Tuple[str, Optional[str]], List[Span]]:
        """(module, name) of an import (name None: ``import module``) → the spans rested on in it."""
        if self._dropped is not None:
            return self._dropped
        found: Dict[Tuple[str, Optional[str]], List[Span]] = {}
        self._dropped = found
        imports: List[ast.Import | ast.ImportFrom] = [*self.ctx.nodes(ast.Import), *self.ctx.nodes(ast.ImportFrom)]
        for node in imports:
            for alias in node.names:
                a, b = self.ctx.span(alias)
                for span in self._overlapping(a, b):
                    key = (node.module or "", alias.name) if isinstance(node, ast.ImportFrom) else (alias.name, None)
                    found.setdefault(key, []).append(span)
        return found


def _covers(start: int, end: int, span: Span) -> bool:
    return start <= span[0] and span[1] <= end


def _span(ctx: FileContext, finding: Finding) -> Span:
    """The character offsets of what ``finding`` reports (its columns count characters)."""
    return (ctx.line_start(finding.line) + finding.column - 1, ctx.line_start(finding.end_line) + finding.end_column - 1)
