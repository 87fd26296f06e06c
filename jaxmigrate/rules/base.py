"""The rule model: findings, fixes and the Rule base class every rule derives from.

A rule detects on Python's ``ast`` (fast, no LibCST parse for files that need no change) and
describes its fix as data: text edits on exact source spans, statement edits that LibCST applies,
and imports to add or drop. The engine applies fixes; rules never touch files.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, ClassVar, Iterator, Literal, Optional, Tuple

from jaxmigrate.catalog.api_history import parse_version

if TYPE_CHECKING:  # pragma: no cover
    from jaxmigrate.rules.context import FileContext

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
    suggestion: Optional[str] = None  # code to write by hand, for findings without a fix

    @property
    def fixable(self) -> bool:
        return self.fix is not None

    @property
    def fix_safety(self) -> Optional[str]:
        return self.fix.safety if self.fix else None


@dataclass(frozen=True)
class Example:
    """A before/after pair that is both a test and the rule's documentation.

    ``after`` is None for code the rule must leave alone (a "valid" example), and equals
    ``before`` with ``flagged=True`` for a use that is reported but not fixed.
    """

    before: str
    after: Optional[str] = None
    flagged: bool = False
    unsafe: bool = False  # the fix needs --unsafe-fixes
    title: str = ""
    target: Optional[str] = None  # the --target-jax it shows (None: the newest)

    @property
    def target_version(self) -> Optional[Tuple[int, ...]]:
        return parse_version(self.target) if self.target else None

    @property
    def is_valid(self) -> bool:
        return self.after is None and not self.flagged


def snippet(text: str) -> str:
    """Dedent an example snippet written as an indented triple-quoted string."""
    return textwrap.dedent(text).lstrip("\n")


class Presence(dict):
    """Which byte strings occur in one file: each is searched for once, however many rules ask
    (``word in presence``), and a string containing one known to be absent is absent unsearched.
    ``data`` is the file's bytes, for the rules whose prefilter also needs a regex.

    A dict of the answers so far: a known word is looked up without running Python code."""

    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        super().__init__()
        self.data = data

    def __missing__(self, word: bytes) -> bool:
        anchor = _ANCHORS.get(word)
        self[word] = known = (anchor is None or self[anchor]) and word in self.data
        return known

    __contains__ = dict.__getitem__  # whether the word occurs: its answer, searched for if need be


#: for a trigger string, a shorter one it contains (``gda`` for ``gda_serialization``), searched first
_ANCHORS: dict = {}


def set_anchors(words) -> None:
    """Give each of ``words`` the shortest other one it contains, as its anchor."""
    words = sorted(set(words), key=len)
    for word in words:
        anchor = next((w for w in words if len(w) < len(word) and w in word), None)
        if anchor is not None:
            _ANCHORS[word] = anchor


def raw(data) -> bytes:
    """The bytes behind ``Rule.wants``'s argument (bytes or a ``Presence``)."""
    return data.data if isinstance(data, Presence) else data


class Rule:
    """Base class: subclasses set the metadata below and implement ``check``.

    The class docstring is the rule's documentation, written as ruff does it, with
    "## What it does" and "## Why is this bad?" sections; examples are rendered after it.
    """

    code: ClassVar[str]
    name: ClassVar[str]
    summary: ClassVar[str]
    #: "safe", "unsafe" or None for a rule that only reports.
    fix_safety: ClassVar[Optional[FixSafety]] = None
    #: byte strings of which at least one must occur in a file for this rule to look at it
    triggers: ClassVar[Tuple[bytes, ...]]
    #: further groups of byte strings: one of each group must occur as well (e.g. a rule that
    #: only looks at pjit calls requires ``pjit``); together with ``triggers``, the prefilter
    requires: ClassVar[Tuple[Tuple[bytes, ...], ...]] = ()
    #: JAX versions, as strings: when the legacy API was deprecated and removed, and the first
    #: version that has the replacement this rule emits
    deprecated_in: ClassVar[Optional[str]] = None
    removed_in: ClassVar[Optional[str]] = None
    replacement_since: ClassVar[Optional[str]] = None
    examples: ClassVar[Tuple[Example, ...]] = ()
    #: a finding of this rule is dropped where another rule's finding spans it: the API-history
    #: rules see every reference, the hand-written rules know the names they migrate better
    defers: ClassVar[bool] = False
    #: qualified names this rule migrates wherever they are used: the API-history rules leave
    #: their deprecation to it (JM802 does not report `pjit` beside JM701)
    owns: ClassVar[Tuple[str, ...]] = ()
    #: run on every file some other rule wants (the file is parsed anyway, and this rule's check is
    #: cheap there); its own prefilter decides only for the files no other rule wants
    rides_along: ClassVar[bool] = False

    @classmethod
    def wants(cls, data) -> bool:
        """The byte prefilter: whether a file with these bytes (or ``Presence`` of them) can hold
        anything this rule reports."""
        # the groups first: they hold the rarer words, and a file that lacks them is never searched for the rest
        contains = data.__contains__  # a Presence's answers, looked up in C
        for group in cls.requires:
            if not any(map(contains, group)):
                return False
        return any(map(contains, cls.triggers))

    def check(self, ctx: "FileContext") -> Iterator[Finding]:  # pragma: no cover - abstract
        raise NotImplementedError

    # helpers shared by rules -------------------------------------------------------------
    def finding(
        self,
        ctx: "FileContext",
        node: ast.AST,
        message: str,
        fix: Optional[Fix] = None,
        suggestion: Optional[str] = None,
    ) -> Finding:
        line, col, end_line, end_col = ctx.position(node)
        if suggestion and fix is None:  # code of several lines goes where multi-line text belongs
            message = f"{message}; {SUGGESTED_ELSEWHERE}" if "\n" in suggestion else f"{message}; suggested: {suggestion}"
        return Finding(self.code, message, line, col, end_line, end_col, fix, suggestion)

    @classmethod
    def documentation(cls) -> str:
        return inspect.cleandoc(cls.__doc__ or "")
