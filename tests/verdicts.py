"""One verdict per distinct pair for the whole session.

tests/test_current_jax.py migrates each fixture to the latest JAX, and tests/test_verify_fixtures.py
verifies each fixture's own after.py; for most fixtures the two after texts are the same, so the pair
is run once: a verdict is kept by its before file, the after text and the process count.
"""

from __future__ import annotations

import hashlib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Callable, Dict, Hashable, Iterable, Tuple

from jaxmigrate.verify.runner import Verdict, verify_files

Key = Tuple[str, str, int]
_KEPT: Dict[Key, Verdict] = {}


def key(before: Path, after: Path, processes: int) -> Key:
    """A single-file after side by its text; a project's (``main.py`` beside its modules) by its path."""
    text = str(after.resolve()) if after.name == "main.py" else hashlib.sha256(after.read_bytes()).hexdigest()
    return str(before.resolve()), text, processes


def verdicts(jobs: Iterable[Tuple[Hashable, Path, Path, int]], *, timeout: float = 90) -> Dict[Hashable, Verdict]:
    """``{name: verdict}`` of each job ``(name, before, after, processes)``: those not kept yet are run
    two at a time, without a recheck (a caller that wants one for a divergent verdict asks ``again``)."""
    jobs = list(jobs)
    todo = {}
    for _, before, after, processes in jobs:
        k = key(before, after, processes)
        if k not in _KEPT:
            todo[k] = (before, after, processes)

    def run(item):
        k, (before, after, processes) = item
        return k, verify_files(str(before), str(after), processes=processes, timeout=timeout, recheck=False)

    with ThreadPoolExecutor(2) as pool:
        _KEPT.update(pool.map(run, todo.items()))
    return {name: _KEPT[key(before, after, processes)] for name, before, after, processes in jobs}


def again(verdict: Verdict, before: Path, after: Path, processes: int, *, timeout: float = 90,
          check: Callable[[Verdict], bool]) -> Verdict:
    """A verdict that fails ``check`` and is divergent, run again with the recheck (the program's own
    randomness left out), as ``verify_files`` does by default."""
    if check(verdict) or verdict.status not in ("divergent", "layout_differs"):
        return verdict
    return verify_files(str(before), str(after), processes=processes, timeout=timeout)
