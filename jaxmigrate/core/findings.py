"""What a rule produces, as plain data: findings and their fixes (text edits on exact source
spans, statement edits that LibCST applies, imports to add or drop). The engine applies fixes;
rules never touch files.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Literal, Optional, Tuple

FixSafety = Literal["safe", "unsafe"]

#: what a finding's one-line message says of a suggestion of several lines, which the JSON and
#: SARIF outputs and ``fix --report`` carry whole
SUGGESTED_ELSEWHERE = "suggested code: in `--format json` or `sarif`, and `fix --report`"


@dataclass(frozen=True)
class Edit:
    """Replace source[start:end] (character offsets) with text."""

    start: int
    end: int
    text: str


@dataclass(frozen=True)
class StatementEdit:
    """A structural edit LibCST applies to the statement starting at (line, column).

    ``transform`` receives the LibCST statement node and returns its replacement (a node, a
    ``FlattenSentinel`` or ``RemovalSentinel.REMOVE``). Used where a text edit would get
    indentation wrong, e.g. keeping an ``if`` body at the ``if``'s level.
    """

    line: int
    column: int  # 0-based character column of the statement's first token
    transform: Callable


@dataclass(frozen=True)
class ImportRef:
    """An import, as ``import module`` (name None) or ``from module import name as asname``."""

    module: str
    name: Optional[str] = None
    asname: Optional[str] = None


@dataclass(frozen=True)
class Fix:
    safety: FixSafety
    edits: Tuple[Edit, ...] = ()
    statement_edits: Tuple[StatementEdit, ...] = ()
    add_imports: Tuple[ImportRef, ...] = ()
    # imports that may have become unused; dropped only if nothing uses them afterwards
    drop_unused_imports: Tuple[ImportRef, ...] = ()
    # apply only once every other fix is done: the text it removes informs other rules' fixes
    # (e.g. `jax_parallel_functions_output_gda`, which JM503/JM504 read)
    last: bool = False

    @property
    def span(self) -> Tuple[int, int]:
        starts = [e.start for e in self.edits] or [0]
        ends = [e.end for e in self.edits] or [0]
        return min(starts), max(ends)


@dataclass(frozen=True)
class Finding:
    code: str
    message: str
    line: int  # 1-based
    column: int  # 1-based, in characters
    end_line: int
    end_column: int
    fix: Optional[Fix] = field(default=None, compare=False)
    # the code to write: by hand for a finding without a fix, what the fix writes (or the name it
    # puts in) for one with a fix; None where no replacement is known
    suggestion: Optional[str] = None

    @property
    def fixable(self) -> bool:
        return self.fix is not None

    @property
    def fix_safety(self) -> Optional[str]:
        return self.fix.safety if self.fix else None
