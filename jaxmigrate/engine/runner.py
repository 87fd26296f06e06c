"""Run the pipeline over many files: prefilter in this process, analyse candidates in parallel."""

from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor
from typing import Callable, List, Optional, Sequence

from jaxmigrate.engine.discovery import SourceFile
from jaxmigrate.engine.pipeline import FileResult, Settings, active_rules, process

# Below this many candidate files a process pool costs more than it saves.
MIN_PARALLEL = 8


def _process(args) -> FileResult:
    file, settings, data = args
    return process(file.path, file.display, settings, data)


def run(files: Sequence[SourceFile], settings: Settings, jobs: Optional[int] = None,
        progress: Optional[Callable[[int, int], None]] = None) -> List[FileResult]:
    """Process ``files``; ``progress(done, total)`` is called as the analysed files complete."""
    from jaxmigrate.rules import BY_CODE

    rules = [BY_CODE[c] for c in settings.rule_codes]
    results: List[Optional[FileResult]] = [None] * len(files)
    work = []
    for i, file in enumerate(files):
        try:
            data = file.path.read_bytes()
        except OSError as exc:
            results[i] = FileResult(file.display, error=f"could not read: {exc}")
            continue
        if active_rules(data, rules):
            work.append((i, (file, settings, data)))
        else:
            results[i] = FileResult(file.display)
    jobs = jobs or os.cpu_count() or 1
    if jobs > 1 and len(work) >= MIN_PARALLEL:
        with ProcessPoolExecutor(max_workers=min(jobs, len(work))) as pool:
            outcomes = pool.map(_process, [w for _, w in work], chunksize=4)
            for done, ((i, _), result) in enumerate(zip(work, outcomes), 1):
                results[i] = result
                if progress:
                    progress(done, len(work))
    else:
        for done, (i, args) in enumerate(work, 1):
            results[i] = _process(args)
            if progress:
                progress(done, len(work))
    return results  # type: ignore[return-value]
