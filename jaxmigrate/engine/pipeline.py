"""One file, start to end: read, prefilter, analyse, fix in rounds, verify, write.

Every file is processed in isolation: an unreadable file, a syntax error or a rule that raises
becomes an error on that file's result, the file is left untouched, and the run goes on.
"""

from __future__ import annotations

import os
import sys
import threading
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import AbstractSet, Any, Callable, List, Optional, Sequence, Set, Tuple, Type

from jaxmigrate.analysis.context import FileContext
from jaxmigrate.analysis.import_layout import imports_in_order, join_written_imports
from jaxmigrate.core.findings import Finding, Fix
from jaxmigrate.core.linediff import LineMatcher, unified_diff
from jaxmigrate.core.syntax import parse_error
from jaxmigrate.engine.apply import FixError, apply_round
from jaxmigrate.engine.notebook import prefilter_input
from jaxmigrate.engine.project import Table, declared, for_path
from jaxmigrate.engine.source import decode
from jaxmigrate.engine.suppression import skips_file, unsuppressed
from jaxmigrate.engine.writer import NotWritten, refusal, write_fixed
from jaxmigrate.patterns.era import origin_facts
from jaxmigrate.patterns.random_streams import streams_origin
from jaxmigrate.rules import Rule

MAX_ROUNDS = 10
# A file too deep for the default recursion limit (the rules' ast walks, LibCST, ``compile``) is
# processed again in a thread of this stack size with this recursion limit (docs/safety.md).
DEEP_RECURSION_LIMIT = 20_000
DEEP_STACK_BYTES = 256 << 20  # 16 MB was enough at this limit on Python 3.10, whose calls use the C stack


@dataclass(frozen=True)
class Settings:
    """What to do with each file; picklable so worker processes get a copy."""

    rule_codes: Tuple[str, ...]
    fix: bool = False
    write: bool = True  # False with --diff: compute the fix, write nothing
    unsafe_fixes: bool = False
    target: Optional[Tuple[int, ...]] = None
    # [tool.jaxmigrate] per-file-ignores: (pattern, codes) with patterns relative to config_root
    per_file_ignores: Tuple[Tuple[str, Tuple[str, ...]], ...] = ()
    config_root: Optional[str] = None
    # each configuration's files: (its folder, their settings), the deepest folder first, "" (no
    # configuration: every file) last; ``rule_codes`` here are then every variant's, for prefilters
    variants: Tuple[Tuple[str, "Settings"], ...] = ()
    # the project facts (analysis/project.py, engine/project.py): (real path, ((key, value), ...)) of
    # each file that has a value; ``facts``: this file's, set by ``for_file``
    project: Table = ()
    facts: Tuple[Tuple[str, Any], ...] = ()
    plan_project: bool = True  # False: no project facts (a run that computes them, or one file)
    # the keys of the project facts whose parts each file's analysis gives (the runner's first pass)
    collect: Tuple[str, ...] = ()
    # with ``collect``: the files are others of the project than the run's, read for the plan only
    outside: bool = False

    def for_file(self, path: Path) -> "Settings":
        """The settings of ``path``'s nearest configuration, minus the codes that its
        per-file-ignores switch off for ``path``, with its values of the project facts."""
        effective = self._configured(path)
        facts = for_path(self.project, path)
        if facts != effective.facts:
            return replace(effective, facts=facts)
        return effective

    def project_facts(self) -> dict:
        """What the project facts say of this file, for its rules (``FileContext.origin``)."""
        return dict(self.facts)

    def _configured(self, path: Path) -> "Settings":
        if self.variants:
            real = str(path.resolve())
            for folder, variant in self.variants:
                if not folder or real.startswith(folder.rstrip(os.sep) + os.sep):
                    return variant.for_file(path)
        if not self.per_file_ignores or self.config_root is None:
            return self
        try:
            rel = path.resolve().relative_to(Path(self.config_root).resolve()).as_posix()
        except ValueError:
            return self
        off = [c for pattern, codes in self.per_file_ignores if _pattern(pattern).match_file(rel) for c in codes]
        if not off:
            return self
        return replace(self, rule_codes=tuple(c for c in self.rule_codes if not any(c.startswith(o) for o in off)))


@lru_cache(maxsize=None)
def _pattern(pattern: str):
    """A per-file-ignores pattern, compiled once per process rather than once per file."""
    import pathspec

    return pathspec.GitIgnoreSpec.from_lines([pattern])


@dataclass
class FileResult:
    path: str
    findings: List[Finding] = field(default_factory=list)  # after fixing: what is left
    error: Optional[str] = None
    fixes_applied: int = 0
    changed: bool = False
    diff: str = ""
    new_bytes: Optional[bytes] = None  # the fixed file, when it changed and was not written
    original: Optional[bytes] = None  # then the bytes it was made from (a later write checks the file still has them)
    # when it changed and was not written, ``findings`` are those left located in the file on disk
    # (README: "findings left"); these are what --verify reports once it writes the fixed file or
    # refuses to: the findings left in the fixed text, and every finding of the file on disk
    fixed_findings: Optional[List[Finding]] = None
    on_disk: Optional[List[Finding]] = None
    error_at: Tuple[int, int] = (1, 1)  # line, column of ``error`` (a syntax error's own position)
    fixed_codes: Optional[dict] = None  # when it changed: code -> how many of its findings the fixes took
    # when it changed: the findings of the file on disk whose unsafe fixes were applied (without their edits)
    unsafe_fixed: Tuple[Finding, ...] = ()
    unsafe_allowed: bool = False  # the file's settings allow unsafe fixes (--unsafe-fixes, or its configuration)
    parts: Tuple[Tuple[str, Any], ...] = ()  # the parts of the project facts (``Settings.collect``)
    complete: bool = True  # False: ``findings`` include rules run only for the parts


class RuleError(Exception):
    def __init__(self, code: str, exc: BaseException) -> None:
        super().__init__(f"internal error in rule {code}: {type(exc).__name__}: {exc}")
        self.code = code


def active_rules(data: bytes, rules: Sequence[Type[Rule]]) -> List[Type[Rule]]:
    """The byte prefilter: the rules that may report something in a file with these bytes."""
    from jaxmigrate.prefilter import Presence
    from jaxmigrate.rules import ANCHORS

    present = Presence(data, ANCHORS)
    chosen = [r for r in rules if not r.rides_along and r.wants(present)]
    if chosen:  # parsed anyway: the rules that ride along come too
        return [r for r in rules if r.rides_along or r in chosen]
    return [r for r in rules if r.rides_along and r.wants(present)]


def analyse(text: str, path: str, rules: Sequence[Type[Rule]], target=None, origin=None,
            owners: Sequence[Type[Rule]] = ()) -> List[Finding]:
    """The findings of ``rules`` on ``text``; ``origin``: the facts of the text a fix started from.
    ``owners``: rules not selected whose findings serve only the deferral (``owners_left_out``)."""
    ctx = FileContext.of(text, path, target).fixed_from(origin or {})
    deferring = {r.code for r in rules if r.defers}
    owners = owners if deferring else ()
    findings: List[Finding] = []
    for rule_cls in [*rules, *owners]:
        try:
            findings.extend(rule_cls().check(ctx))
        except Exception as exc:  # noqa: BLE001 - a rule bug must not stop the run
            raise RuleError(rule_cls.code, exc) from exc
    findings.sort(key=lambda f: (f.line, f.column, f.code))
    notices = {r.code for r in [*rules, *owners] if r.notice}
    kept = _without_deferred(findings, deferring, notices)
    if owners:
        left_out = {r.code for r in owners}
        kept = [f for f in kept if f.code not in left_out]
    return unsuppressed(kept, text)


def _codes(settings: Settings) -> Tuple[str, ...]:
    """The rules that run: those selected, and those the project facts to collect read."""
    return tuple(dict.fromkeys((*settings.rule_codes, *(c for fact in facts_by_key(settings.collect)
                                                         for c in fact.reads_codes))))


def owners_left_out(data: bytes, codes: Sequence[str]) -> List[Type[Rule]]:
    """A deferring rule leaves a reference to the rule that owns it whether or not that rule is
    selected (`--ignore JM503` must not bring JM801's finding of the same `FROM_GDA` back): the
    rules that no deferring one is (none in a run of every rule), are not among ``codes`` (the
    selected ones) and may report in the file's ``data``, which run for the deferral only."""
    from jaxmigrate.rules import ALL_RULES, BY_CODE

    chosen = set(codes)
    left_out = [r for r in ALL_RULES if r.code not in chosen and not r.defers and not r.notice]
    if not left_out or not any(BY_CODE[c].defers for c in chosen):
        return []
    return [r for r in active_rules(data, left_out) if not r.defers]


def _without_deferred(findings: List[Finding], deferring: Set[str], notices: AbstractSet[str] = frozenset()) -> List[Finding]:
    """``findings`` (sorted by start) minus those of deferring rules that lie inside the span of
    another rule's finding: one finding per reference, the hand-written rule's. A notice's span
    (``Rule.notice``) holds no reference: nothing inside it is dropped."""
    if not deferring or all(f.code in deferring for f in findings):
        return findings
    kept, reach = [], (0, 0)  # the furthest end among the other rules' findings started so far
    for f in findings:  # a finding of another rule starting at the same place comes first: by code
        if f.code in deferring:
            if (f.end_line, f.end_column) <= reach:
                continue
        elif f.code not in notices:
            reach = max(reach, (f.end_line, f.end_column))
        kept.append(f)
    return kept


def _allowed(finding: Finding, settings: Settings) -> bool:
    return finding.fix is not None and (finding.fix.safety == "safe" or settings.unsafe_fixes)


@dataclass
class Outcome:
    """What the rules make of one file's bytes: findings left and the new text, if any."""

    findings: List[Finding]
    original: str = ""
    text: str = ""
    encoding: str = "utf-8"
    fixes_applied: int = 0
    # when the text changed: the findings of the original text, and ``findings`` located there
    on_disk: Optional[List[Finding]] = None
    left_on_disk: Optional[List[Finding]] = None
    parts: Tuple[Tuple[str, Any], ...] = ()  # with ``Settings.collect``: (fact key, this file's part)
    complete: bool = True  # False: rules that are not selected ran too (for the parts); the findings are not the file's
    unsafe_fixed: Tuple[Finding, ...] = ()  # when the text changed: the findings of ``on_disk`` whose unsafe fixes it took

    @property
    def changed(self) -> bool:
        return self.text != self.original


def transform(data: bytes, display: str, settings: Settings, active: Optional[List[Type[Rule]]] = None) -> Outcome:
    """Check (and with ``settings.fix``, fix) one file's bytes. Raises on unreadable input.
    ``active``: the rules the prefilter chose for these bytes, when the caller asked it (and found
    the file is not to be skipped)."""
    from jaxmigrate.rules import BY_CODE

    collect = facts_by_key(settings.collect)
    codes = _codes(settings)
    if active is None or collect:
        rules = active_rules(prefilter_input(data, display), [BY_CODE[c] for c in codes])
        if skips_file(data):
            return Outcome([])
    else:
        rules = list(active)
    if settings.facts:  # a file whose meaning came from elsewhere: the rules that read it run
        keys = {key for key, _ in settings.facts}
        rules += [rule for rule in (BY_CODE[c] for c in settings.rule_codes)
                  if rule not in rules and any(fact.key in keys for fact in rule.project_facts)]
    if not (rules or collect):
        if display.endswith(".ipynb") and OLD_NOTEBOOK in data:  # an nbformat 3 notebook is said to be one
            _transform_notebook(decode(data).text, "utf-8", display, [], settings)
        return Outcome([])
    source = decode(data)
    if display.endswith(".ipynb"):
        outcome = _transform_notebook(source.text, source.encoding, display, rules, settings)
    else:
        findings, text, applied, first, parts = _run_rules(source.text, display, rules, settings)
        outcome = Outcome(findings, source.text, text, source.encoding, applied, parts=parts)
        if outcome.changed:
            kept: Set[int] = set()
            outcome.on_disk, outcome.left_on_disk = first, located_on_disk(findings, first, source.text, text, kept)
            outcome.unsafe_fixed = unsafe_fixed(first, kept, settings)
    outcome.complete = len(codes) == len(settings.rule_codes)
    return outcome


#: what an nbformat 3 notebook holds (its cells are under worksheets): read, whatever its code says
OLD_NOTEBOOK = b'"worksheets"'


def facts_by_key(keys: Tuple[str, ...]) -> list:
    """The project facts (analysis/project.py) of these keys, from every rule's declarations."""
    return list(_facts_by_key(keys)) if keys else []


@lru_cache(maxsize=None)
def _facts_by_key(keys: Tuple[str, ...]) -> tuple:
    from jaxmigrate.rules import ALL_RULES

    found = {fact.key: fact for fact in declared([rule.code for rule in ALL_RULES])}
    return tuple(found[key] for key in keys)


def unsafe_fixed(first: List[Finding], kept: Set[int], settings: Settings) -> Tuple[Finding, ...]:
    """The findings of the text as given (``first``) whose unsafe fixes the fixed text took: those
    with an unsafe fix allowed that are not ``kept`` (``located_on_disk``), without their edits."""
    if not settings.unsafe_fixes:
        return ()
    return tuple(replace(f, fix=Fix("unsafe")) for f in first if f.fix_safety == "unsafe" and id(f) not in kept)


def _fixed_codes(before: List[Finding], left: List[Finding]) -> dict:
    """code -> how many fewer findings of it the fixed text has (what ``--show-fixes`` lists)."""
    from collections import Counter

    counts = Counter(f.code for f in before)
    counts.subtract(f.code for f in left)
    return {code: n for code, n in sorted(counts.items()) if n > 0}


def located_on_disk(left: List[Finding], first: List[Finding], original: str, fixed: str,
                    kept: Optional[Set[int]] = None) -> List[Finding]:
    """The findings ``left`` in the ``fixed`` text, where they are in the ``original`` one (a fix
    that is not written: ``--diff``, ``--verify``): the same findings a written fix leaves, at the
    lines and columns ``check`` gives them on disk. A finding of the original text with the same
    code and message on the line the diff maps the finding's line from (or in the lines the diff
    changes there) stands for it, with its position, fix and suggestion; a finding the fixes
    brought (no such counterpart) is put on the diff's line of the original, at column 1 when its
    line was changed. ``kept`` gets the ids of the original's findings still there: those that
    stand for one, and those with the same code on its line (its message names a line the fixes
    moved, say), which the fixes did not take."""
    import bisect

    a, b = original.splitlines(), fixed.splitlines()
    ops = [op for op in LineMatcher(a, b).get_opcodes() if op[4] > op[3]]  # as --diff's
    starts = [op[3] for op in ops]
    unused: dict = {}  # (code, message, line) and (code, line) -> the original's findings there, in order
    for g in first:
        unused.setdefault((g.code, g.message, g.line), []).append(g)
        unused.setdefault((g.code, g.line), []).append(g)
    placed: List[Tuple[Finding, str, int, Sequence[int]]] = []
    for f in left:
        j = f.line - 1
        k = bisect.bisect_right(starts, j) - 1
        tag, i1, i2, j1, j2 = ops[k] if k >= 0 and j < ops[k][4] else ("equal", len(a), len(a), len(b), len(b))
        if tag == "equal":
            start = i1 + (j - j1) + 1
            lines: Sequence[int] = (start,)
        else:
            start = i1 + 1
            lines = range(i1 + 1, max(i1 + 1, i2) + 1)
        placed.append((f, tag, start, lines))
    taken: Set[int] = set()
    twin: dict = {}  # index into ``placed`` -> the original's finding that stands for it

    def match(keys) -> Optional[Finding]:
        for key in keys:
            for g in unused.get(key, ()):
                if id(g) not in taken:
                    taken.add(id(g))
                    return g
        return None

    for n, (f, _, _, lines) in enumerate(placed):
        found = match([(f.code, f.message, m) for m in lines])
        if found is not None:
            twin[n] = found
    if kept is not None:  # every finding left with the same message first, then by code alone
        for n, (f, _, _, lines) in enumerate(placed):
            if n not in twin:
                match([(f.code, m) for m in lines])
        kept.update(taken)
    out = []
    for n, (f, kind, start, _) in enumerate(placed):
        if n in twin:
            out.append(twin[n])
        else:
            out.append(replace(f, line=start, end_line=start + (f.end_line - f.line),
                               column=f.column if kind == "equal" else 1,
                               end_column=f.end_column if kind == "equal" else 1))
    out.sort(key=lambda f: (f.line, f.column, f.code))
    return out


def _run_rules(text: str, display: str, rules, settings: Settings, join_imports: bool = True,
               joiner: Optional[Callable[[str, str], str]] = None):
    """Findings left, the text, how many fixes were applied (rounds until none applies), the
    findings of the text as given, and the parts of the project facts ``settings.collect`` names.
    With ``join_imports``, the ``from`` imports the fixes wrote
    then join the same module's import, and take their place in the import block when it was in
    isort's order (``join_written_imports``); ``joiner(original, fixed)`` does that instead
    (a notebook's, cell by cell)."""
    original = text
    applied_total = 0
    owners = owners_left_out(text.encode("utf-8", "surrogatepass"), _codes(settings))
    held = settings.project_facts()  # what the project facts say of this file
    findings = first = analyse(text, display, rules, settings.target, held, owners) if rules else []
    parts: Tuple[Tuple[str, Any], ...] = ()
    if settings.collect:  # the parts of the project facts, from the text as given (where its bytes may hold one)
        ctx, data = FileContext.of(text, display, settings.target), text.encode("utf-8", "surrogatepass")
        parts = tuple((fact.key, (fact.outside_part if settings.outside else fact.part)(ctx, first, settings.rule_codes)
                       if fact.wants(data) else None) for fact in facts_by_key(settings.collect))
    fired: Set[str] = set()
    origin = None  # the facts of the text as given that the fixes may rewrite (patterns/era.py)
    in_order = False  # the text's leading imports were in isort's order
    if settings.fix:
        for _ in range(MAX_ROUNDS):
            fixes = [f.fix for f in findings if f.fix is not None and _allowed(f, settings)]  # (_allowed: it has one)
            if not fixes:
                break
            if origin is None:  # before the first round, while the text's parse is the recent one
                given = FileContext.of(original, display, settings.target)
                origin = {**held, **origin_facts(given), **streams_origin(given)}
                in_order = join_imports and imports_in_order(given)
            try:
                text, applied = _apply_round(text, fixes)
            except FixError:
                if len(fixes) == 1:
                    raise
                # fixes right alone may be wrong together (two deletions that empty a block, each
                # seeing the other statement): one now, the rest on the text it leaves
                text, applied = _apply_round(text, [next((f for f in fixes if not f.last), fixes[0])])
            applied_total += applied
            # the fixed text may no longer hold what some rules look for (often none is left);
            # a rule that reported goes on, for the clean-up its own fixes leave to a later round
            # (JM401 drops `backend = get_backend()` once no `live_buffers` is left)
            fired |= {f.code for f in findings}
            wanted = set(map(id, active_rules(text.encode("utf-8", "surrogatepass"), rules)))
            rules = [r for r in rules if id(r) in wanted or r.code in fired]
            findings = analyse(text, display, rules, settings.target, origin, owners) if rules else []
    if applied_total and (join_imports or joiner is not None):
        joined = joiner(original, text) if joiner is not None else join_written_imports(original, text, in_order)
        if joined != text:
            text = joined
            findings = analyse(text, display, rules, settings.target, origin or held, owners) if findings else []
    return findings, text, applied_total, first, parts


def _apply_round(text: str, fixes) -> Tuple[str, int]:
    try:  # the text parsed: a parse error from here on is a fix's (e.g. in the import editing)
        return apply_round(text, fixes)
    except SyntaxError as exc:
        raise FixError(f"fix produced invalid Python: {exc}") from exc


def _transform_notebook(raw: str, encoding: str, display: str, rules, settings: Settings) -> Outcome:
    """A notebook's code cells as one module; findings point at ``cell N`` and its line."""
    from jaxmigrate.engine import notebook

    try:
        nb, module = notebook.load(raw)
    except notebook.Unsupported as exc:
        raise SyntaxError(f"not a supported notebook: {exc}", (display, 1, 1, None)) from exc
    except (ValueError, KeyError, TypeError) as exc:  # JSONDecodeError (a ValueError) says where
        where = (display, getattr(exc, "lineno", 1), getattr(exc, "colno", 1), None)
        raise SyntaxError(f"not a readable notebook: {getattr(exc, 'msg', exc)}", where) from exc
    try:
        findings, text, applied, first, parts = _run_rules(module, display, rules, settings, join_imports=False,
                                                           joiner=lambda old, new: notebook.join_cell_imports(nb, old, new))
    except SyntaxError as exc:  # a cell's code: said at its line in the cell
        if not exc.lineno:
            raise
        cell, line = nb.locate(exc.lineno)
        raise CellSyntaxError(cell, exc.msg, (display, line, exc.offset, exc.text)) from exc

    def located(found: List[Finding]) -> List[Finding]:
        out = []
        for f in found:
            cell, line = nb.locate(f.line)
            _, end_line = nb.locate(f.end_line)
            out.append(replace(f, line=line, end_line=end_line, message=f"cell {cell}: {f.message}"))
        return out

    new = notebook.dump(nb, text) if text != module else raw
    outcome = Outcome(located(findings), raw, new, encoding, applied, parts=parts)
    if outcome.changed:
        kept: Set[int] = set()
        left = located_on_disk(findings, first, module, text, kept)
        outcome.on_disk, outcome.left_on_disk = located(first), located(left)
        outcome.unsafe_fixed = tuple(located(list(unsafe_fixed(first, kept, settings))))
    return outcome


class CellSyntaxError(SyntaxError):
    """A syntax error in a notebook's code cell, at its line within the cell (``lineno``)."""

    def __init__(self, cell: int, msg: str, where: tuple) -> None:
        super().__init__(msg, where)
        self.cell = cell


def _too_deep(exc: BaseException) -> bool:
    return isinstance(exc, RecursionError) or isinstance(exc, RuleError) and isinstance(exc.__cause__, RecursionError)


def _deep_retry(work, *args):
    """``work(*args)``; if it runs out of recursion depth, once more in a thread with a stack of
    ``DEEP_STACK_BYTES`` and the recursion limit raised to ``DEEP_RECURSION_LIMIT`` (the limit is
    per process: this thread waits meanwhile). Files that need it are rare, and the first try costs
    the others nothing (a thread per file would cost 0.1-0.2 ms each)."""
    try:
        return work(*args)
    except (RecursionError, RuleError) as exc:
        if not _too_deep(exc):
            raise
        first = exc
    outcome: dict = {}

    def run() -> None:
        try:
            outcome["value"] = work(*args)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            outcome["error"] = exc

    limit, size = sys.getrecursionlimit(), threading.stack_size()
    sys.setrecursionlimit(max(limit, DEEP_RECURSION_LIMIT))
    try:
        try:
            threading.stack_size(DEEP_STACK_BYTES)  # read when a thread starts
            thread = threading.Thread(target=run, name="jaxmigrate-deep", daemon=True)
            thread.start()
        finally:
            threading.stack_size(size)
        thread.join()
    except (ValueError, RuntimeError):  # no thread with such a stack here: the first error stands
        raise first  # noqa: B904 - the recursion error is the one to report, chained as it was
    finally:
        sys.setrecursionlimit(limit)
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def process(path: Path, display: str, settings: Settings, data: Optional[bytes] = None,
            stdin: bool = False, active: Optional[List[Type[Rule]]] = None) -> FileResult:
    """One file, read from ``path`` unless ``data`` is given; ``stdin``: the bytes are not the
    file's at ``path`` (only its name), which is never written or asked whether it may be."""
    result = FileResult(display)
    write = None  # the fixed bytes, to be written (or refused) once the file is processed
    try:
        if data is None:
            data = path.read_bytes()
        effective = settings.for_file(path)
        result.unsafe_allowed = settings.fix and effective.unsafe_fixes
        outcome = _deep_retry(transform, data, display, effective, active)
        result.findings, result.fixes_applied = outcome.findings, outcome.fixes_applied
        result.parts, result.complete = outcome.parts, outcome.complete
        if outcome.changed:
            result.changed = True
            result.fixed_codes = _fixed_codes(outcome.on_disk or [], outcome.findings)
            result.unsafe_fixed = outcome.unsafe_fixed
            new_bytes = outcome.text.encode(outcome.encoding)
            why = None if stdin else refusal(path)  # also under --diff and --verify: neither is to show or write it
            if why or settings.write:
                write = new_bytes, outcome.on_disk, why
            else:  # --diff (and --verify) show it; a plain fix never does
                result.diff = "".join(
                    unified_diff(
                        outcome.original.splitlines(keepends=True),
                        outcome.text.splitlines(keepends=True),
                        fromfile=f"a/{display}",
                        tofile=f"b/{display}",
                    )
                )
                result.new_bytes, result.original = new_bytes, data
                result.fixed_findings, result.on_disk = result.findings, outcome.on_disk
                result.findings = outcome.left_on_disk
    except SyntaxError as exc:  # a notebook's: in a cell (``CellSyntaxError``), or its JSON's line and column
        result.error = parse_error(exc)
        if isinstance(exc, CellSyntaxError):
            result.error = f"cell {exc.cell}: {result.error}"
        result.error_at = (exc.lineno or 1, exc.offset or 1)
    except (KeyError, IndexError) as exc:  # LookupErrors too, but an engine bug's, not an unknown encoding's
        result.error = f"internal error: {type(exc).__name__}: {exc}"
    except (OSError, UnicodeDecodeError, LookupError) as exc:
        result.error = f"could not read: {exc}"
    except (RuleError, FixError) as exc:
        result.error = f"too deeply nested to process ({exc})" if _too_deep(exc) else str(exc)
    except RecursionError as exc:
        result.error = f"too deeply nested to process ({type(exc).__name__}: {exc})"
    except MemoryError as exc:  # how Python's parser reports its own nesting limit
        result.error = (f"too deeply nested for Python's parser, or out of memory ({type(exc).__name__}: {exc})"
                        .replace(": )", ")"))
    except Exception as exc:  # noqa: BLE001 - any other failure (an engine bug) is this file's error too
        result.error = f"internal error: {type(exc).__name__}: {exc}"
    if result.error:
        result.findings, result.changed, result.fixes_applied, result.diff, result.new_bytes = [], False, 0, "", None
        result.original = None
        result.fixed_findings = result.on_disk = None
    elif write is not None:
        new_bytes, on_disk, why = write
        result.error = write_or_say_why(path, new_bytes, why, expected=data)
        if result.error:  # the file keeps the findings it has on disk
            result.findings, result.changed, result.fixes_applied = on_disk, False, 0
    return result


def write_or_say_why(path: Path, data: bytes, why: Optional[str] = None,
                     expected: Optional[bytes] = None) -> Optional[str]:
    """Write the fixed file; None when written, else the file's error: ``not written`` with why
    (``why``, else ``writer.refusal`` at the time of writing, or the file no longer holds
    ``expected``, the bytes the fix was made from), or ``could not write`` (an OSError: an
    immutable file, a full disk; what is read is the file's trouble only before this)."""
    try:
        if why:
            raise NotWritten(why)
        write_fixed(path, data, expected)
    except NotWritten as exc:
        return f"not written: {exc}"
    except OSError as exc:
        return f"could not write: {exc}"
    return None
