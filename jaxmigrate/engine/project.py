"""The project facts of a run (analysis/project.py): which the selected rules declare, the scan of the
tree they start from, and the table of values the files' rules read.

The scan reads each file once for its import statements (analysis/module_graph.py) and what the
providers' byte tests say of it, or takes both from the cache for a file untouched since. The
members' parts come from the runner (engine/runner.py), which analyses each member once, without
fixing anything, and keeps the result for the run when it needs nothing from the project.

The plan spans the project of the files given, not only those: `fix pkg/train.py` must not turn
`with mesh:` into `jax.set_mesh` there while `pkg/model.py`, which it calls, keeps its pjit. The
project of a file is the folder of the nearest ``pyproject.toml``, ``setup.py`` or ``setup.cfg``
above it (not above a git checkout's top, the home folder or the file system's root), else the
folder above the top of its package chain (folders with ``__init__.py``, and folders inside
one); a file in neither (a script in a folder that is no package) has no project beyond the
files given. When a file given holds what a fact looks for, the other files of its project (found as the
run finds files, with its exclusions) are read for the plan too: they are never fixed or reported,
and a module among them keeps what it has (``ProjectFact.outside_part``).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Sequence, Tuple

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


#: what marks the root folder of a project
MARKERS = ("pyproject.toml", "setup.py", "setup.cfg")

#: the other files of the projects of a run's files (``SourceFile``s), found when asked
Others = Callable[[], Sequence["SourceFile"]]


@dataclass
class Scan:
    graph: ModuleGraph
    stats: Dict[int, Tuple[int, int, int, int]] = field(default_factory=dict)  # index -> stat when read
    wanted: Dict[str, List[int]] = field(default_factory=dict)  # fact key -> files its byte test passes
    files: Sequence["SourceFile"] = ()  # the run's files, then the other files of their projects read for the plan


def scan(files: Sequence["SourceFile"], facts: Sequence[ProjectFact], cache=None, others: Optional[Others] = None) -> Scan:
    """Each file's imports and the facts' byte tests, from its bytes (a notebook: its code cells);
    and when one of ``files`` passes a byte test, those of the ``others`` too."""
    keys = tuple(f.key for f in facts)
    known = [_scanned(file, facts, keys, cache) for file in files]
    every = list(files)
    if others is not None and any(k is not None and any(k[1][1].values()) for k in known):
        given = {os.path.normcase(os.path.abspath(f.path)) for f in files}
        extra = [f for f in others() if os.path.normcase(os.path.abspath(f.path)) not in given]
        every += extra
        known += [_scanned(file, facts, keys, cache) for file in extra]
    graph = ModuleGraph([str(f.path) for f in every], given=len(files), project_of=Roots().root)
    found = Scan(graph, wanted={f.key: [] for f in facts}, files=every)
    for index, entry in enumerate(known):
        if entry is None:
            continue  # the run reports it (or, for a file it was not given, says nothing)
        found.stats[index], (imports, wants) = entry
        found.graph.add_names(index, imports)
        for key in keys:
            if wants[key]:
                found.wanted[key].append(index)
    return found


def _scanned(file: "SourceFile", facts: Sequence[ProjectFact], keys: Tuple[str, ...], cache):
    """(stat, (imports, {fact key: byte test})) of a file, from the cache or its bytes; None when
    it cannot be read."""
    try:
        stat = stat_of(os.stat(file.path))
        known = cache.fact("scan", file.path, stat) if cache is not None else None
        if known is None or not set(keys) <= set(known[1]):
            read_ns = time.time_ns()
            data = prefilter_input(file.path.read_bytes(), file.display)
            known = (imported_names(data), {f.key: f.wants(data) for f in facts})
            if cache is not None:
                cache.put_fact("scan", file.path, stat, read_ns, known)
    except OSError:
        return None
    return stat, known


class Roots:
    """The project root of each folder (see the module's docstring), each folder looked at once."""

    def __init__(self) -> None:
        self._marked: Dict[str, Optional[str]] = {}
        home = os.path.expanduser("~")
        self._never = {os.path.normcase(home)} if home != "~" else set()

    def root(self, folder: str) -> Optional[str]:
        """The root of the project holding ``folder`` (absolute), or None where it would be the home
        folder or the file system's root (no project: the run's files are the plan's)."""
        found = self._marker(folder)
        if found is None:
            if not (_is_package(folder) or _is_package(os.path.dirname(folder))):
                return None  # a script's folder, in no package, no marker: no project beyond the files given
            found = folder
            while True:
                parent = os.path.dirname(found)
                if parent == found or not (_is_package(found) or _is_package(parent)):
                    break
                found = parent
        if os.path.dirname(found) == found or os.path.normcase(found) in self._never:
            return None
        return found

    def _marker(self, folder: str) -> Optional[str]:
        if folder not in self._marked:
            parent = os.path.dirname(folder)
            if any(os.path.isfile(os.path.join(folder, name)) for name in MARKERS):
                self._marked[folder] = folder
            elif (parent == folder or os.path.normcase(folder) in self._never
                  or os.path.exists(os.path.join(folder, ".git"))):
                self._marked[folder] = None  # the top of a checkout: a marker above it is another project's
            else:
                self._marked[folder] = self._marker(parent)
        return self._marked[folder]


def _is_package(folder: str) -> bool:
    return os.path.isfile(os.path.join(folder, "__init__.py"))


def project_folders(files: Sequence["SourceFile"], paths: Sequence[str]) -> List[str]:
    """The roots of the projects of ``files`` that a walk of ``paths`` (the paths given) did not
    cover: the folders whose files the plan still has to find. None below another."""
    roots = Roots()
    folders = {os.path.dirname(os.path.abspath(f.path)) for f in files}
    found = {root for root in map(roots.root, sorted(folders)) if root is not None}
    walked = [os.path.abspath(p).rstrip(os.sep) + os.sep for p in paths if os.path.isdir(p)]
    left = sorted(r for r in found if not (r + os.sep).startswith(tuple(walked)))
    return [r for r in left if not any((r + os.sep).startswith(o + os.sep) for o in left if o != r)]


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


def parts_key(codes: Sequence[str], target: Optional[Tuple[int, ...]], notebook: bool, given: bool = True) -> bytes:
    """What a member's parts depend on besides its bytes: its rules, the target, its kind, and
    whether the run fixes it (``given``) or only reads it for the plan."""
    from jaxmigrate.engine.cache import settings_digest

    return settings_digest(tuple(codes), target, notebook, "parts" if given else "parts of a file read for the plan")
