"""Apply rule fixes to a module's text: text edits or LibCST statement edits, then imports.

One call applies one round: every fix that does not overlap an earlier one. The pipeline calls
it again on the result until nothing is left to apply, as ruff's fix loop does.
"""

from __future__ import annotations

from typing import Iterable, List, Sequence, Tuple

from jaxmigrate.engine.imports import fix_imports
from jaxmigrate.rules.base import Fix, StatementEdit


class FixError(Exception):
    """A fix produced a module that does not parse; the file is left as it was."""


def apply_round(source: str, fixes: Sequence[Fix]) -> Tuple[str, int]:
    """Apply the non-overlapping subset of ``fixes``; returns the new text and how many applied.

    Fixes marked ``last`` wait until a round in which no other fix is left."""
    if any(not f.last for f in fixes):
        fixes = [f for f in fixes if not f.last]
    structural = [f for f in fixes if f.statement_edits]
    chosen = _non_overlapping([f for f in fixes if not f.statement_edits and f.edits])
    if structural:
        # statement edits work on the LibCST tree of the current text: apply them alone
        text = _apply_statement_edits(source, [e for f in structural for e in f.statement_edits])
        chosen = structural
    else:
        text = _apply_text_edits(source, [e for f in chosen for e in f.edits])
    adds = [i for f in chosen for i in f.add_imports]
    drops = [i for f in chosen for i in f.drop_unused_imports]
    if adds or drops:
        text = fix_imports(text, adds, drops)
    try:  # compile, not just parse: it also catches e.g. a keyword argument given twice
        compile(text, "<fixed>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as exc:  # a rule bug: never write it
        raise FixError(f"fix produced invalid Python: {exc}") from exc
    return text, len(chosen)


def _non_overlapping(fixes: List[Fix]) -> List[Fix]:
    taken: List[Tuple[int, int]] = []
    chosen = []
    for fix in sorted(fixes, key=lambda f: f.span):
        spans = [(e.start, e.end) for e in fix.edits]
        if any(s < te and ts < e or (s == e == ts) for s, e in spans for ts, te in taken):
            continue
        taken.extend(spans)
        chosen.append(fix)
    return chosen


def _apply_text_edits(source: str, edits: Iterable) -> str:
    out = source
    for edit in sorted(set(edits), key=lambda e: (e.start, e.end), reverse=True):
        out = out[: edit.start] + edit.text + out[edit.end :]
    return out


def _apply_statement_edits(source: str, edits: Sequence[StatementEdit]) -> str:
    """Run each edit's transform on the statement that starts at its position (LibCST, imported
    here only: it costs 0.17 s, which a check or a fix without statement edits never pays)."""
    import libcst as cst
    from libcst.metadata import MetadataWrapper, PositionProvider

    by_position = {(e.line, e.column): e for e in edits}

    class StatementEditor(cst.CSTTransformer):
        METADATA_DEPENDENCIES = (PositionProvider,)

        def on_leave(self, original_node, updated_node):  # type: ignore[override]
            if isinstance(original_node, cst.BaseStatement):
                pos = self.get_metadata(PositionProvider, original_node).start
                edit = by_position.get((pos.line, pos.column))
                if edit is not None:
                    return edit.transform(updated_node)
            return updated_node

    return MetadataWrapper(cst.parse_module(source)).visit(StatementEditor()).code
