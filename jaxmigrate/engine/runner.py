"""Run the pipeline over many files: prefilter and cache in this process, analyse the rest in parallel.

This process reads every file once, decides most of them from their bytes (the prefilter) or the
cache, and hands the remaining paths to worker processes in chunks; a worker reads its files
itself (no file contents go through pipes) and returns the results with the cache key of the
bytes it read, so a file edited during the run is never cached under its old contents.
"""

from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor
from typing import Callable, List, Optional, Sequence, Tuple

from jaxmigrate.engine.discovery import SourceFile
from jaxmigrate.engine.pipeline import FileResult, Settings, active_rules, process
from jaxmigrate.engine.suppression import skips_file

# Below this many candidate files a process pool costs more than it saves.
MIN_PARALLEL = 8


def _key(data: bytes, settings: Settings, file: SourceFile) -> bytes:
    from jaxmigrate.engine.cache import entry_key

    effective = settings.for_file(file.path)
    return entry_key(data, effective.rule_codes, effective.target, file.display)


def _process(args) -> Tuple[FileResult, Optional[bytes]]:
    """One file in a worker: read, analyse (and fix), and the cache key of the bytes analysed."""
    file, settings, keyed = args
    try:
        data = file.path.read_bytes()
    except OSError as exc:
        return FileResult(file.display, error=f"could not read: {exc}"), None
    return process(file.path, file.display, settings, data), _key(data, settings, file) if keyed else None


def _chunksize(count: int, jobs: int) -> int:
    """Big enough to keep pipe traffic low, small enough that one slow file does not idle a core."""
    return max(1, min(16, count // (jobs * 8)))


def run(files: Sequence[SourceFile], settings: Settings, jobs: Optional[int] = None,
        progress: Optional[Callable[[int, int], None]] = None, cache=None) -> List[FileResult]:
    """Process ``files``; ``progress(done, total)`` is called as the analysed files complete.

    With a ``cache`` (``engine.cache.Cache``), ``check`` reuses and stores findings; ``fix`` only
    skips the files the cache knows to have nothing to report."""
    from jaxmigrate.rules import BY_CODE

    rules = [BY_CODE[c] for c in settings.rule_codes]
    results: List[Optional[FileResult]] = [None] * len(files)
    work: List[Tuple[int, tuple]] = []
    for i, file in enumerate(files):
        try:
            data = file.path.read_bytes()
        except OSError as exc:
            results[i] = FileResult(file.display, error=f"could not read: {exc}")
            continue
        if not active_rules(data, rules) or skips_file(data):
            results[i] = FileResult(file.display)
            continue
        if cache is not None:
            hit = cache.get(file.path, _key(data, settings, file))
            if hit is not None and (not settings.fix or not hit):
                results[i] = FileResult(file.display, findings=hit)
                continue
        work.append((i, (file, settings, cache is not None and not settings.fix)))
    jobs = jobs or os.cpu_count() or 1
    if jobs > 1 and len(work) >= MIN_PARALLEL:
        workers = min(jobs, len(work))
        with ProcessPoolExecutor(max_workers=workers) as pool:
            outcomes = pool.map(_process, [w for _, w in work], chunksize=_chunksize(len(work), workers))
            _collect(work, outcomes, results, cache, progress)
    else:
        _collect(work, map(_process, [w for _, w in work]), results, cache, progress)
    if cache is not None:
        cache.save()
    return results  # type: ignore[return-value]


def _collect(work, outcomes, results, cache, progress) -> None:
    for done, ((i, (file, _, _)), (result, key)) in enumerate(zip(work, outcomes), 1):
        results[i] = result
        if cache is not None and key is not None and result.error is None:
            cache.put(file.path, key, result.findings)
        if progress:
            progress(done, len(work))
