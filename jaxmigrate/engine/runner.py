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
from typing import Callable, Iterator, List, Optional, Sequence, Tuple

from jaxmigrate.analysis.context import FileContext
from jaxmigrate.core.findings import Finding, Fix
from jaxmigrate.engine.discovery import SourceFile
from jaxmigrate.engine.pipeline import FileResult, Settings, active_rules, prefilter_input, process
from jaxmigrate.engine.suppression import skips_file

# Below this many files a process pool costs more than it saves.
MIN_PARALLEL = 8

_cache = None  # the run's cache, for the chunks (a worker inherits it)
_work: tuple = ((), None)  # the run's pending (index, file) pairs and settings, for the spans (likewise)
# Ctrl-C: set by the leader's SIGINT handler, read before each file (a list here, shared memory
# that workers inherit with a pool): a file is processed (and written) whole, or not started
_stop = None

Processed = Tuple[int, FileResult, Optional[tuple]]
_BARE_FIX = {"safe": Fix("safe"), "unsafe": Fix("unsafe")}


def _settings_key(settings: Settings, file: SourceFile) -> bytes:
    from jaxmigrate.engine.cache import settings_digest

    effective = settings.for_file(file.path)
    project = (effective.hold, effective.imported_makers) if effective.hold or effective.imported_makers else None
    return settings_digest(effective.rule_codes, effective.target, file.display.endswith(".ipynb"), project)


def _one(file: SourceFile, settings: Settings, rules) -> Tuple[FileResult, Optional[tuple]]:
    """One file: read, prefilter, the cache, analysis (and fix). Returns the cache key too when
    ``check`` should store the result."""
    key = None
    try:
        st = os.stat(file.path) if _cache is not None else None  # before reading: a later edit shows
        read_ns = time.time_ns()
        data = file.path.read_bytes()
    except OSError as exc:
        return FileResult(file.display, error=f"could not read: {_unreadable(file, exc)}"), None
    if _cache is not None:
        from jaxmigrate.engine.cache import Key, content_digest, stat_of

        key = Key(content_digest(data), _settings_key(settings, file), stat_of(st), read_ns)  # type: ignore[arg-type]  # st is set when the cache is
    store = None if settings.fix else key
    imports_gda_helpers = bool(settings.gda_makers) and bool(settings.for_file(file.path).imported_makers)
    if not (active_rules(prefilter_input(data, file.display), rules) or imports_gda_helpers) or skips_file(data):
        return FileResult(file.display), store
    if key is not None:
        hit = _cache.get(file.path, key.content, key.settings)  # type: ignore[union-attr]  # a key means a cache
        if hit is not None and (not settings.fix or not hit):  # fix: only skip what has nothing to fix
            return FileResult(file.display, findings=hit), store
    result = process(file.path, file.display, settings, data)
    if not settings.fix:
        result.findings = _reported(result.findings)
    return result, None if result.error else store


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
    from jaxmigrate.rules import BY_CODE

    indexed, settings = args
    rules = [BY_CODE[c] for c in settings.rule_codes]
    _pause_gc()
    try:
        outcomes = []
        for i, file in indexed:
            if _stopping():
                break
            outcomes.append((i, *_one(file, settings, rules)))
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


def _untouched(files: Sequence[SourceFile], settings: Settings, cache, results: list) -> List[Tuple[int, SourceFile]]:
    """Fill in the results the cache has for files not touched since; the others are returned."""
    from jaxmigrate.engine.cache import stat_of

    pending = []
    for i, file in enumerate(files):
        try:
            hit = cache.unchanged(file.path, _settings_key(settings, file), stat_of(os.stat(file.path)))
        except OSError:
            hit = None
        if hit is not None and (not settings.fix or not hit):
            results[i] = FileResult(file.display, findings=hit)
        else:
            pending.append((i, file))
    return pending


def run(files: Sequence[SourceFile], settings: Settings, jobs: Optional[int] = None,
        progress: Optional[Callable[[int, int], None]] = None, cache=None) -> List[FileResult]:
    """Process ``files``; ``progress(done, total)`` is called as files complete.

    With a ``cache`` (``engine.cache.Cache``), ``check`` reuses and stores findings; ``fix`` only
    skips the files the cache knows to have nothing to report."""
    if settings.fix and settings.write:  # what a killed earlier run left behind
        from jaxmigrate.engine.writer import remove_stale_temporaries

        remove_stale_temporaries({f.path.parent for f in files})
    if settings.plan_project:  # what a file's rules find may depend on the modules it imports or that import it
        settings = _with_project_plans(files, settings, jobs, cache)
    results: List[Optional[FileResult]] = [None] * len(files)
    pending = _untouched(files, settings, cache, results) if cache is not None else list(enumerate(files))
    jobs = jobs or os.cpu_count() or 1
    spans = _spans(len(pending), jobs)
    done = len(files) - len(pending)
    parallel = jobs > 1 and len(pending) >= MIN_PARALLEL
    if parallel:
        import multiprocessing

        shared = multiprocessing.RawValue("b", 0)  # workers inherit it; setting it needs no lock
    with _ctrl_c(shared if parallel else None) as interrupted:
        if parallel:
            from concurrent.futures import ProcessPoolExecutor  # imported only when used: a one-file run skips it

            with ProcessPoolExecutor(max_workers=min(jobs, len(spans)), initializer=_init_worker,
                                     initargs=(cache, (pending, settings), os.getpid(), shared)) as pool:
                for outcomes in pool.map(_span, spans):  # after Ctrl-C, the chunks left return at once
                    done = _collect(outcomes, files, results, cache, progress, done)
        else:
            _init(cache, (pending, settings), interrupted)
            try:
                for span in spans:
                    if interrupted:
                        break
                    done = _collect(_span(span), files, results, cache, progress, done)
            finally:
                _init(None)
                _resume_gc(now=True)
    if cache is not None:
        cache.save()
    if interrupted:
        raise Interrupted(results)
    return results  # type: ignore[return-value]  # not interrupted: every file has its result


def _with_project_plans(files: Sequence[SourceFile], settings: Settings, jobs: Optional[int], cache) -> Settings:
    """``settings`` with the plans that span modules: the JM701/JM702 holds (engine/mesh_plan.py) and
    the GDA-returning helpers each file imports (engine/gda_helpers.py). One file alone needs
    neither, unless only one rule of the mesh pair is selected."""
    from jaxmigrate.engine import gda_helpers, mesh_plan
    from jaxmigrate.engine.project_scan import MESH_CODES, scan

    one_of_pair = len(set(MESH_CODES) & set(settings.rule_codes)) == 1
    if len(files) < 2 and not one_of_pair:
        return replace(settings, plan_project=False)
    found = scan(files, cache)
    return replace(settings, mesh_holds=mesh_plan.plan(files, settings, found, jobs, cache),
                   gda_makers=gda_helpers.makers(files, settings, found, cache), plan_project=False)


class Interrupted(Exception):
    """Ctrl-C during a run: the files under way were finished (each file's write is atomic) and
    no other was started; ``results`` has None for every file not processed."""

    def __init__(self, results: List[Optional[FileResult]]) -> None:
        super().__init__("interrupted")
        self.results = results


@contextmanager
def _ctrl_c(shared=None) -> Iterator[list]:
    """A list that becomes non-empty on SIGINT (and ``shared``, the workers' flag, set), instead of
    a KeyboardInterrupt in the middle of a file: the run stops between files. Outside the main
    thread (no handler can be set there) SIGINT keeps its usual meaning."""
    flag: list = []

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
    for i, result, key in outcomes:
        results[i] = result
        if key is not None and cache is not None:
            cache.put(files[i].path, key, result.findings)
    done += len(outcomes)
    if progress:
        progress(done, len(files))
    return done
