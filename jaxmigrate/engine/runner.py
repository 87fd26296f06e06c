"""Run the pipeline over many files, in chunks spread over worker processes.

A chunk is a list of paths: its worker reads each file (no contents go through pipes), decides
most of them from their bytes (the prefilter) or the cache it inherited, analyses the rest and
returns the results with the cache key of the bytes it read, so a file edited during the run is
never cached under its old contents. This process only discovers, collects and saves the cache.
"""

from __future__ import annotations

import os
from typing import Callable, List, Optional, Sequence, Tuple

from jaxmigrate.engine.discovery import SourceFile
from jaxmigrate.engine.pipeline import FileResult, Settings, active_rules, process
from jaxmigrate.engine.suppression import skips_file

# Below this many files a process pool costs more than it saves.
MIN_PARALLEL = 8

_cache = None  # the run's cache, for the chunks (a worker inherits it)

Outcome = Tuple[int, FileResult, Optional[bytes]]


def _key(data: bytes, settings: Settings, file: SourceFile) -> bytes:
    from jaxmigrate.engine.cache import entry_key

    effective = settings.for_file(file.path)
    return entry_key(data, effective.rule_codes, effective.target, file.display)


def _one(file: SourceFile, settings: Settings, rules) -> Tuple[FileResult, Optional[bytes]]:
    """One file: read, prefilter, the cache, analysis (and fix). The key is set when the result
    should be cached."""
    try:
        data = file.path.read_bytes()
    except OSError as exc:
        return FileResult(file.display, error=f"could not read: {exc}"), None
    if not active_rules(data, rules) or skips_file(data):
        return FileResult(file.display), None
    key = None
    if _cache is not None:
        key = _key(data, settings, file)
        hit = _cache.get(file.path, key)
        if hit is not None and (not settings.fix or not hit):  # fix: only skip what has nothing to fix
            return FileResult(file.display, findings=hit), None
    result = process(file.path, file.display, settings, data)
    return result, None if settings.fix or result.error else key


def _chunk(args) -> List[Outcome]:
    from jaxmigrate.rules import BY_CODE

    indexed, settings = args
    rules = [BY_CODE[c] for c in settings.rule_codes]
    return [(i, *_one(file, settings, rules)) for i, file in indexed]


def _init(cache) -> None:
    global _cache
    _cache = cache


def _chunks(files: Sequence[SourceFile], settings: Settings, jobs: int) -> list:
    """Small chunks for few files (one slow file must not idle a core), bigger ones for many."""
    size = max(1, min(32, len(files) // (jobs * 16)))
    indexed = list(enumerate(files))
    return [(indexed[i:i + size], settings) for i in range(0, len(indexed), size)]


def run(files: Sequence[SourceFile], settings: Settings, jobs: Optional[int] = None,
        progress: Optional[Callable[[int, int], None]] = None, cache=None) -> List[FileResult]:
    """Process ``files``; ``progress(done, total)`` is called as files complete.

    With a ``cache`` (``engine.cache.Cache``), ``check`` reuses and stores findings; ``fix`` only
    skips the files the cache knows to have nothing to report."""
    results: List[Optional[FileResult]] = [None] * len(files)
    jobs = jobs or os.cpu_count() or 1
    chunks = _chunks(files, settings, jobs)
    done = 0
    if jobs > 1 and len(files) >= MIN_PARALLEL:
        from concurrent.futures import ProcessPoolExecutor  # imported only when used: a one-file run skips it

        with ProcessPoolExecutor(max_workers=min(jobs, len(chunks)), initializer=_init, initargs=(cache,)) as pool:
            for outcomes in pool.map(_chunk, chunks):
                done = _collect(outcomes, files, results, cache, progress, done)
    else:
        _init(cache)
        try:
            for chunk in chunks:
                done = _collect(_chunk(chunk), files, results, cache, progress, done)
        finally:
            _init(None)
    if cache is not None:
        cache.save()
    return results  # type: ignore[return-value]


def _collect(outcomes: List[Outcome], files, results, cache, progress, done: int) -> int:
    for i, result, key in outcomes:
        results[i] = result
        if key is not None and cache is not None:
            cache.put(files[i].path, key, result.findings)
    done += len(outcomes)
    if progress:
        progress(done, len(files))
    return done
