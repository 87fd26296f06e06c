"""The Rule base class every rule derives from, its examples, and the base of the three
API-history rules (JM801-JM803).

A rule detects on Python's ``ast`` (fast, no LibCST parse for files that need no change) and
describes its fix as data (``jaxmigrate.core.findings``); the engine applies fixes.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Iterator, Optional, Tuple

from jaxmigrate.analysis.imports import importer
from jaxmigrate.analysis.project import ProjectFact
from jaxmigrate.catalog.api_history import parse_version
from jaxmigrate.core.findings import SUGGESTED_ELSEWHERE, Finding, Fix, FixSafety
from jaxmigrate.patterns.api_references import Reference
from jaxmigrate.patterns.history_findings import history_findings
from jaxmigrate.prefilter import Presence, history_wants

if TYPE_CHECKING:  # pragma: no cover
    from jaxmigrate.analysis.context import FileContext


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


def short(text: str) -> str:
    """Source text for a message: on one line, at most 40 characters."""
    text = " ".join(text.split())
    return text if len(text) <= 40 else text[:37] + "..."


def snippet(text: str) -> str:
    """Dedent an example snippet written as an indented triple-quoted string."""
    return textwrap.dedent(text).lstrip("\n")


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
    #: what an unsafe fix of this rule may change in what the code does (a rule with one sets
    #: it): `fix` says it beside each unsafe fix it applies, in its summary, `--show-fixes` and
    #: `--report`
    unsafe_note: ClassVar[str] = ""
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
    #: the JAX names whose deprecation and removal those versions (and the rule's messages) state:
    #: they are the API history's (tests/test_suggestions.py)
    history_names: ClassVar[Tuple[str, ...]] = ()
    examples: ClassVar[Tuple[Example, ...]] = ()
    #: a finding of this rule is dropped where another rule's finding spans it: the API-history
    #: rules see every reference, also one inside a hand-written rule's rewrite of a pattern (the
    #: arguments of a pjit call JM701 rewrites, the `with` statement of JM702). Names a
    #: hand-written rule owns are not theirs at all (``catalog/owners.py``)
    defers: ClassVar[bool] = False
    #: its findings are about what code computes, not a reference (JM904's first draw): another
    #: rule's finding inside one's span is a reference of its own and stands
    notice: ClassVar[bool] = False
    #: run on every file some other rule wants (the file is parsed anyway, and this rule's check is
    #: cheap there); its own prefilter decides only for the files no other rule wants
    rides_along: ClassVar[bool] = False
    #: what this rule needs to know of other modules of the run (analysis/project.py), which the
    #: engine computes once per run and hands over in ``FileContext.origin``
    project_facts: ClassVar[Tuple[ProjectFact, ...]] = ()

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
    def dropped_import(self, ctx: "FileContext", node: ast.Import, alias: ast.alias, message: str = "") -> Finding:
        """A finding whose safe fix drops ``alias`` from ``import`` statement ``node`` (an unused
        import of a removed module), keeping ``import jax`` if ``jax`` is still used."""
        return self.finding(ctx, alias, message or f"`{alias.name}` no longer exists and nothing here uses it any more",
                            Fix("safe", edits=(importer(ctx).drop_alias(node, alias),)))

    def finding(
        self,
        ctx: "FileContext",
        node: ast.AST,
        message: str,
        fix: Optional[Fix] = None,
        suggestion: Optional[str] = None,
        replacement: Optional[str] = None,
    ) -> Finding:
        """A finding at ``node``. ``suggestion``: code to write by hand, added to the message
        (without a fix); ``replacement``: the code the message already names (``use `x` ``),
        carried as the finding's suggestion with the message as it is."""
        line, col, end_line, end_col = ctx.position(node)
        if suggestion and fix is None:  # code of several lines goes where multi-line text belongs
            message = f"{message}; {SUGGESTED_ELSEWHERE}" if "\n" in suggestion else f"{message}; suggested: {suggestion}"
        return Finding(self.code, message, line, col, end_line, end_col, fix, suggestion or replacement)

    @classmethod
    def documentation(cls) -> str:
        return inspect.cleandoc(cls.__doc__ or "")


#: the key under which a file's ``Presence`` keeps the history prefilter's answer (not a word)
_ASKED = b"\x00history"


class HistoryRule(Rule):
    """The shape of JM801-JM803: one prefilter (the history's), one walk over the file's
    references; each rule says which references are its own (``selects``)."""

    triggers = (b"jax",)
    defers = True
    rides_along = True
    unsafe_note = ("the new name behaves differently here: a type test for `jax.Array` is true for every array, "
                   "`shuffle` becomes `permutation(..., independent=True)`, `barrier_wait()` becomes "
                   "`jax.effects_barrier()` (before JAX 0.4.30 it does not wait for host_callback's taps), `tie_in(x, y)` "
                   "no longer evaluates `x`, a `PRNGImpl(...)` becomes `define_prng_impl(...)`, whose result is opaque "
                   "(its fields such as `.key_shape` are gone)")

    @classmethod
    def wants(cls, data) -> bool:
        if not isinstance(data, Presence):
            return history_wants(data)
        answer = dict.get(data, _ASKED)  # the three rules ask the same question of one file: once
        if answer is None:
            answer = dict.setdefault(data, _ASKED, history_wants(data))
        return answer

    def selects(self, ref: Reference) -> bool:  # pragma: no cover - abstract
        raise NotImplementedError

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        for ref, message, fix, code in history_findings(ctx, self.selects):
            if code and "\n" in code and fix is None:  # the message names it; its lines are elsewhere
                message = f"{message}; {SUGGESTED_ELSEWHERE}"
            yield self.finding(ctx, ref.node, message, fix, replacement=code)
