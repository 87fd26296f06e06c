"""Run the pipeline over many files, in chunks spread over worker processes.

This process discovers, asks the cache which files are untouched since their results were
stored (a ``stat`` each, no reading), and hands the other paths to workers in chunks. A worker
reads each file once (no contents go through pipes), decides most files from their bytes (the
prefilter) or from the cache by content, analyses the rest, and returns the results with the
cache key of the bytes it read, so a file edited during the run is never cached under its old
contents. This process collects and saves the cache.
"""

from __future__ import annotations

import gc
import os
import signal
import sys
import time
from contextlib import contextmanager
from dataclasses import replace
from functools import lru_cache
from typing import TYPE_CHECKING, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

from jaxmigrate.analysis.context import FileContext
from jaxmigrate.core.findings import Finding, Fix
from jaxmigrate.engine.discovery import SourceFile
from jaxmigrate.engine.notebook import prefilter_input
from jaxmigrate.engine.pipeline import OLD_NOTEBOOK, FileResult, Settings, active_rules, process
from jaxmigrate.engine.suppression import skips_file

if TYPE_CHECKING:
    from jaxmigrate.engine.cache import Key

# Below this many files a process pool costs more than it saves.
MIN_PARALLEL = 8

_cache = None  # the run's cache, for the chunks (a worker inherits it)
_work: tuple = ((), None)  # the run's pending (index, file) pairs and settings, for the spans (likewise)
# Ctrl-C: set by the leader's SIGINT handler, read before each file (a list here, shared memory
# that workers inherit with a pool): a file is processed (and written) whole, or not started
_stop = None

# (index, result, its cache key when a cache is used, whether ``check`` stores the result under it)
Processed = Tuple[int, FileResult, Optional["Key"], bool]
_BARE_FIX = {"safe": Fix("safe"), "unsafe": Fix("unsafe")}


def _settings_key(effective: Settings, file: SourceFile) -> bytes:
    """What the file's cached result depends on of its settings (``effective``: ``for_file``'s)."""
    from jaxmigrate.engine.cache import settings_digest

    return settings_digest(effective.rule_codes, effective.target, file.display.endswith(".ipynb"), effective.facts or None)


@lru_cache(maxsize=None)
def _rules_of(codes: Tuple[str, ...]) -> list:
    from jaxmigrate.rules import BY_CODE

    return [BY_CODE[c] for c in codes]


def _one(file: SourceFile, settings: Settings) -> Tuple[FileResult, Optional["Key"], bool]:
    """One file: read, prefilter, the cache, analysis (and fix). Returns the cache key too (with a
    cache), and whether ``check`` should store the result under it."""
    key = None
    try:
        st = os.stat(file.path) if _cache is not None else None  # before reading: a later edit shows
        read_ns = time.time_ns()
        data = file.path.read_bytes()
    except OSError as exc:
        return FileResult(file.display, error=f"could not read: {_unreadable(file, exc)}"), None, False
    effective = settings.for_file(file.path)
    if _cache is not None:
        from jaxmigrate.engine.cache import Key, content_digest, stat_of

        key = Key(content_digest(data), _settings_key(effective, file), stat_of(st), read_ns)  # type: ignore[arg-type]  # st is set when the cache is
    store = not settings.fix and key is not None
    # a file with values of the project facts, and a member whose parts are wanted, are analysed whatever its bytes say
    must = bool(settings.collect) or bool(effective.facts) or file.display.endswith(".ipynb") and OLD_NOTEBOOK in data
    active = None if must else active_rules(prefilter_input(data, file.display), _rules_of(effective.rule_codes))
    if not (must or active) or skips_file(data):
        return FileResult(file.display), key, store
    if key is not None and not settings.collect:
        hit = _cache.get(file.path, key.content, key.settings)  # type: ignore[union-attr]  # a key means a cache
        if hit is not None and (not settings.fix or not hit):  # fix: only skip what has nothing to fix
            return FileResult(file.display, findings=hit), key, store
    result = process(file.path, file.display, settings, data, active=active)
    if not settings.fix:
        result.findings = _reported(result.findings)
    return result, key, store and not result.error and result.complete


def _unreadable(file: SourceFile, exc: OSError) -> str:
    """Why a file could not be read: the error, or for a dangling symbolic link, that."""
    if isinstance(exc, FileNotFoundError) and file.path.is_symlink():
        return f"a symbolic link to {os.readlink(file.path)}, which does not exist"
    return str(exc)


def _reported(findings: List[Finding]) -> List[Finding]:
    """``check``'s findings as reported: a fix keeps its safety, not its edits. Only ``fix``
    applies edits, and a worker would otherwise pickle them all back (a fifth of what it sends)
    for this process to unpickle and drop. The cache stores findings the same way."""
    return [f if f.fix is None else replace(f, fix=_BARE_FIX.get(f.fix.safety) or Fix(f.fix.safety)) for f in findings]


def _chunk(args) -> List[Processed]:
    indexed, settings = args
    _pause_gc()
    try:
        outcomes = []
        for i, file in indexed:
            if _stopping():
                break
            outcomes.append((i, *_one(file, settings)))
        return outcomes
    finally:
        FileContext.forget()  # before a collection: the last files' trees need not be gone through
        _resume_gc()


# No cyclic garbage collection inside a chunk: the trees of a file die by reference counting, and
# collections triggered by their many allocations cost a third of the parse time. Nor after every
# chunk: the collection then has ~1 ms of young objects to go through, mostly the last files'
# trees, still held by FileContext.of's reuse (about 25 ms a worker on a 2,000-file tree). What
# chunks leave in cycles is collected after every GC_EVERY of them, and at the end of a run.
GC_EVERY = 8
_gc_paused = False  # this process's collection is paused by the runner (it was enabled)
_gc_chunks = 0


def _pause_gc() -> None:
    global _gc_paused
    if gc.isenabled():
        gc.disable()
        _gc_paused = True


def _resume_gc(now: bool = False) -> None:
    """After a chunk: enable the collection again once every ``GC_EVERY`` chunks, or ``now``."""
    global _gc_paused, _gc_chunks
    _gc_chunks += not now
    if _gc_paused and (now or _gc_chunks % GC_EVERY == 0):
        _gc_paused = False
        gc.enable()


def _span(bounds: Tuple[int, int]) -> List[Processed]:
    """The chunk ``pending[start:stop]`` of the run's work, which a worker holds from its start
    (inherited, or pickled once): a task sends two numbers instead of its files' paths."""
    pending, settings = _work
    start, stop = bounds
    return _chunk((pending[start:stop], settings))


def _stopping() -> bool:
    return bool(getattr(_stop, "value", _stop))


def _init(cache, work: tuple = ((), None), stop=None) -> None:
    global _cache, _work, _gc_chunks, _stop
    _cache, _work, _gc_chunks, _stop = cache, work, 0, stop


def _init_worker(cache, work: tuple, parent: int, stop=None) -> None:
    """A worker: the run's cache, and on Linux death with the process that started it. Workers
    wait on a pipe they hold both ends of, so a ``fix`` killed with SIGKILL (an OOM killer, a CI
    timeout that kills only the leader) would leave them waiting for ever. Ctrl-C (SIGINT to the
    whole process group) is the leader's to handle: a worker finishes the file it is on."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _init(cache, work, stop)
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except (ImportError, OSError, AttributeError):  # a Python without ctypes, a libc without prctl
            pass
    if os.getppid() != parent:  # it died before the line above took effect
        os._exit(1)


def _spans(count: int, jobs: int) -> List[Tuple[int, int]]:
    """Chunks of ``count`` pending files as (start, stop): small for few files (one slow file must
    not idle a core), bigger ones for many."""
    size = max(1, min(32, count // (jobs * 16)))
    return [(i, min(i + size, count)) for i in range(0, count, size)]


def _untouched(pending: List[Tuple[int, SourceFile]], settings: Settings, cache, results: list) -> List[Tuple[int, SourceFile]]:
    """Fill in the results the cache has for files not touched since; the others are returned."""
    from jaxmigrate.engine.cache import stat_of

    left = []
    for i, file in pending:
        try:
            hit = cache.unchanged(file.path, _settings_key(settings.for_file(file.path), file), stat_of(os.stat(file.path)))
        except OSError:
            hit = None
        if hit is not None and (not settings.fix or not hit):
            results[i] = FileResult(file.display, findings=hit)
        else:
            left.append((i, file))
    return left


def run(files: Sequence[SourceFile], settings: Settings, jobs: Optional[int] = None,
        progress: Optional[Callable[[int, int], None]] = None, cache=None,
        others: Optional[Callable[[], Sequence[Tuple[str, str]]]] = None) -> List[FileResult]:
    """Process ``files``; ``progress(done, total)`` is called as files complete.

    With a ``cache`` (``engine.cache.Cache``), ``check`` reuses and stores findings; ``fix`` only
    skips the files the cache knows to have nothing to report. ``others``: the other files of the
    files' projects as (path, display), asked for when a project fact needs them (engine/project.py),
    read for the plan and never processed."""
    results: List[Optional[FileResult]] = [None] * len(files)
    with _ctrl_c() as stop:  # Ctrl-C at any point stops the run before the next file (none is half done)
        if settings.fix and settings.write:  # what a killed earlier run left behind
            from jaxmigrate.engine.writer import remove_stale_temporaries

            remove_stale_temporaries({f.path.parent for f in files})
        if settings.plan_project:  # what a file's rules find may depend on the modules it imports or that import it
            settings = _with_project_facts(files, settings, jobs, cache, results, others, stop)
        pending = [(i, file) for i, file in enumerate(files) if results[i] is None]
        if cache is not None:
            pending = _untouched(pending, settings, cache, results)
        interrupted = _execute(files, pending, settings, jobs, cache, results, progress, len(files) - len(pending),
                               stop=stop)
        if cache is not None:
            cache.save()
    if interrupted:
        raise Interrupted(results)
    return results  # type: ignore[return-value]  # not interrupted: every file has its result


def plan(files: Sequence[SourceFile], settings: Settings, jobs: Optional[int] = None, cache=None,
         others: Optional[Callable[[], Sequence[Tuple[str, str]]]] = None) -> Settings:
    """``settings`` with the values of the project facts that ``run`` computes first (the files'
    modules and those of their projects, read from disk or the cache), for processing a file's
    text elsewhere: the Python API, an editor's unsaved text."""
    if not settings.plan_project:
        return settings
    planned = _with_project_facts(files, settings, jobs, cache, [None] * len(files), others, [])
    if cache is not None:
        cache.save()
    return planned


def _execute(files: Sequence[SourceFile], pending: List[Tuple[int, SourceFile]], settings: Settings,
             jobs: Optional[int], cache, results: list, progress=None, done: int = 0,
             collected: Optional[Dict[int, Processed]] = None, stop: Optional[list] = None) -> bool:
    """Process ``pending`` into ``results`` (in chunks, on worker processes when it pays); True if
    Ctrl-C stopped it (``stop``: the run's flag, which it may have set before). ``collected``: each
    outcome is kept there too, and not stored in the cache."""
    if stop:
        return True
    jobs = jobs or os.cpu_count() or 1
    spans = _spans(len(pending), jobs)
    parallel = jobs > 1 and len(pending) >= MIN_PARALLEL
    if parallel:
        import multiprocessing

        shared = multiprocessing.RawValue("b", 0)  # workers inherit it; setting it needs no lock
    with _ctrl_c(shared if parallel else None, stop) as interrupted:
        def take(outcomes: List[Processed], done: int) -> int:
            if collected is not None:
                collected.update((outcome[0], outcome) for outcome in outcomes)
                return done
            return _collect(outcomes, files, results, cache, progress, done)

        if parallel:
            from concurrent.futures import ProcessPoolExecutor  # imported only when used: a one-file run skips it

            with ProcessPoolExecutor(max_workers=min(jobs, len(spans)), initializer=_init_worker,
                                     initargs=(cache, (pending, settings), os.getpid(), shared)) as pool:
                for outcomes in pool.map(_span, spans):  # after Ctrl-C, the chunks left return at once
                    done = take(outcomes, done)
        else:
            _init(cache, (pending, settings), interrupted)
            try:
                for span in spans:
                    if interrupted:
                        break
                    done = take(_span(span), done)
            finally:
                _init(None)
                _resume_gc(now=True)
    return bool(interrupted)


def _with_project_facts(files: Sequence[SourceFile], settings: Settings, jobs: Optional[int], cache,
                        results: list, others=None, stop: Optional[list] = None) -> Settings:
    """``settings`` with the values of the project facts the selected rules declare
    (analysis/project.py), over the run's files and, when a fact needs them, the ``others`` of
    their projects. Each member is analysed once, nothing fixed, unless the cache has its parts;
    ``check`` keeps that analysis as the file's result when the file gets no value."""
    from jaxmigrate.engine import project

    codes = settings.rule_codes
    facts = [fact for fact in project.declared(codes) if fact.needed(codes, len(files) if others is None else sys.maxsize)]
    if facts:
        found = project.scan(files, facts, cache, others)
        facts = [fact for fact in facts if fact.needed(codes, len(found.files))]
    if not facts:
        return replace(settings, plan_project=False)
    every = found.files  # the run's files first, then the others read for the plan
    members = {fact.key: fact.members(found.graph, found.wanted[fact.key], codes) for fact in facts}
    keys = tuple(fact.key for fact in facts)
    parts: Dict[int, dict] = {}
    todo: List[Tuple[int, SourceFile]] = []
    for i in sorted({i for chosen in members.values() for i in chosen}):
        known = cache.fact("parts", every[i].path, found.stats[i], _parts_key(settings, every[i], i < len(files))) \
            if cache is not None and i in found.stats else None
        if known is not None and set(keys) <= set(known):
            parts[i] = known
        else:
            todo.append((i, every[i]))
    first: Dict[int, Processed] = {}
    for outside in (False, True):  # the run's files, then the others: read only for their parts
        pending = [(i, file) for i, file in todo if (i >= len(files)) == outside]
        if pending and _execute(every, pending, _collecting(settings, keys, outside), jobs, cache, results,
                                collected=first, stop=stop):
            raise Interrupted(results)
    for i, result, key, _ in first.values():
        parts[i] = dict(result.parts)
        if cache is not None and key is not None and not result.error:
            cache.put_fact("parts", every[i].path, key.stat, key.read_ns, parts[i],
                           _parts_key(settings, every[i], i < len(files)))
    values = {fact.key: fact.combine(found.graph, {i: parts.get(i, {}).get(fact.key) for i in members[fact.key]},
                                     every.displays) for fact in facts}
    planned = replace(settings, project=project.table(every, values), plan_project=False)
    if todo and not settings.fix:  # the first analysis is the result of a file the facts say nothing of,
        by_key = {fact.key: fact for fact in facts}  # or whose findings with its values they can settle
        for i, result, key, store in first.values():
            if i >= len(files) or not result.complete:
                continue
            findings: Optional[List] = result.findings
            effective = planned.for_file(files[i].path)
            for fact_key, value in effective.facts:
                findings = by_key[fact_key].settle(findings, value) if findings is not None else None
            if findings is not None:
                results[i] = replace(result, findings=findings)
                if store and cache is not None and key is not None:
                    cache.put(files[i].path, key._replace(settings=_settings_key(effective, files[i])), findings)
    return planned


def _collecting(settings: Settings, keys: Tuple[str, ...], outside: bool = False) -> Settings:
    """The settings of the first pass over the members: their parts, nothing fixed; ``outside``:
    of members that are not the run's files, which run only the rules the facts read
    (``ProjectFact.outside_part``: nothing is fixed there, whatever is selected)."""
    def first_pass(of: Settings) -> Settings:
        return replace(of, collect=keys, fix=False, write=False, plan_project=False, outside=outside,
                       rule_codes=() if outside else of.rule_codes)

    return replace(first_pass(settings), variants=tuple((folder, first_pass(v)) for folder, v in settings.variants))


def _parts_key(settings: Settings, file: SourceFile, given: bool = True) -> bytes:
    from jaxmigrate.engine.project import parts_key

    effective = settings.for_file(file.path)
    return parts_key(effective.rule_codes, effective.target, file.display.endswith(".ipynb"), given)


class Interrupted(Exception):
    """Ctrl-C during a run: the files under way were finished (each file's write is atomic) and
    no other was started; ``results`` has None for every file not processed."""

    def __init__(self, results: List[Optional[FileResult]]) -> None:
        super().__init__("interrupted")
        self.results = results


@contextmanager
def _ctrl_c(shared=None, flag: Optional[list] = None) -> Iterator[list]:
    """A list (``flag``, or a new one) that becomes non-empty on SIGINT (and ``shared``, the
    workers' flag, set), instead of a KeyboardInterrupt in the middle of a file: the run stops
    between files. Outside the main thread (no handler can be set there) SIGINT keeps its usual
    meaning."""
    flag = [] if flag is None else flag

    def handler(signum, frame) -> None:
        flag.append(signum)
        if shared is not None:
            shared.value = 1

    try:
        previous = signal.signal(signal.SIGINT, handler)
    except ValueError:  # not the main thread
        yield flag
        return
    try:
        yield flag
    finally:
        signal.signal(signal.SIGINT, previous)


def _collect(outcomes: List[Processed], files, results, cache, progress, done: int) -> int:
    for i, result, key, store in outcomes:
        results[i] = result
        if store and cache is not None:
            cache.put(files[i].path, key, result.findings)
    done += len(outcomes)
    if progress:
        progress(done, len(files))
    return done
