"""The project facts of a run (analysis/project.py): which the selected rules declare, the scan of the
tree they start from, and the table of values the files' rules read.

The scan reads each file once for its import statements (analysis/module_graph.py) and what the
providers' byte tests say of it, or takes both from the cache for a file untouched since. The
members' parts come from the runner (engine/runner.py), which analyses each member once, without
fixing anything, and keeps the result for the run when it needs nothing from the project.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple

from jaxmigrate.analysis.module_graph import ModuleGraph, imported_names
from jaxmigrate.analysis.project import ProjectFact
from jaxmigrate.engine.cache import stat_of
from jaxmigrate.engine.notebook import prefilter_input

if TYPE_CHECKING:
    from jaxmigrate.engine.discovery import SourceFile

#: (real path, ((fact key, value), ...)) of each file that has a value
Table = Tuple[Tuple[str, Tuple[Tuple[str, Any], ...]], ...]


def declared(codes: Sequence[str]) -> List[ProjectFact]:
    """The project facts the rules of ``codes`` declare, each once, in the rules' order."""
    from jaxmigrate.rules import BY_CODE

    found: Dict[int, ProjectFact] = {}
    for code in codes:
        for fact in BY_CODE[code].project_facts:
            found.setdefault(id(fact), fact)
    return list(found.values())


@dataclass
class Scan:
    graph: ModuleGraph
    stats: Dict[int, Tuple[int, int, int, int]] = field(default_factory=dict)  # index -> stat when read
    wanted: Dict[str, List[int]] = field(default_factory=dict)  # fact key -> files its byte test passes


def scan(files: Sequence["SourceFile"], facts: Sequence[ProjectFact], cache=None) -> Scan:
    """Each file's imports and the facts' byte tests, from its bytes (a notebook: its code cells)."""
    found = Scan(ModuleGraph([str(f.path) for f in files]), wanted={f.key: [] for f in facts})
    keys = tuple(f.key for f in facts)
    for index, file in enumerate(files):
        try:
            found.stats[index] = stat = stat_of(os.stat(file.path))
            known = cache.fact("scan", file.path, stat) if cache is not None else None
            if known is None or not set(keys) <= set(known[1]):
                read_ns = time.time_ns()
                data = prefilter_input(file.path.read_bytes(), file.display)
                known = (imported_names(data), {f.key: f.wants(data) for f in facts})
                if cache is not None:
                    cache.put_fact("scan", file.path, stat, read_ns, known)
        except OSError:
            continue  # the run reports it
        found.graph.add_names(index, known[0])
        for key in keys:
            if known[1][key]:
                found.wanted[key].append(index)
    return found


def table(files: Sequence["SourceFile"], values: Dict[str, Dict[int, Any]]) -> Table:
    """The values per file (fact key -> file index -> value) as a table for the settings."""
    per_file: Dict[int, List[Tuple[str, Any]]] = {}
    for key, by_file in values.items():
        for index, value in by_file.items():
            per_file.setdefault(index, []).append((key, value))
    return tuple((str(files[i].path.resolve()), tuple(sorted(found))) for i, found in sorted(per_file.items()))


def for_path(entries: Table, path) -> Tuple[Tuple[str, Any], ...]:
    """The values of ``path`` (a Path) in a table, or ()."""
    return _as_dict(entries).get(str(path.resolve()), ()) if entries else ()


@lru_cache(maxsize=8)
def _as_dict(entries: Table) -> Dict[str, Tuple[Tuple[str, Any], ...]]:
    return dict(entries)


def parts_key(codes: Sequence[str], target: Optional[Tuple[int, ...]], notebook: bool) -> bytes:
    """What a member's parts depend on besides its bytes: its rules, the target, its kind."""
    from jaxmigrate.engine.cache import settings_digest

    return settings_digest(tuple(codes), target, notebook, "parts")
