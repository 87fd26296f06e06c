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
import re
import time
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Sequence, Set, Tuple

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

#: the other files of the projects of a run's files, (absolute path, display) as the walk finds
#: them (engine/discovery.py:walk_files), found when asked
Others = Callable[[], Sequence[Tuple[str, str]]]


class Files(Sequence["SourceFile"]):
    """The run's files, then the other files of their projects, each made a ``SourceFile`` when
    asked: a project's walk finds thousands, of which the plan reads a few."""

    def __init__(self, given: Sequence["SourceFile"], others: Sequence[Tuple[str, str]] = ()) -> None:
        self.given, self.others = list(given), others
        self._made: Dict[int, "SourceFile"] = {}
        self.displays = _Displays(self)

    def __len__(self) -> int:
        return len(self.given) + len(self.others)

    def __getitem__(self, index):  # an index, not a slice
        if index < len(self.given):
            return self.given[index]
        if index not in self._made:
            from pathlib import Path

            from jaxmigrate.engine.discovery import SourceFile

            path, display = self.others[index - len(self.given)]
            self._made[index] = SourceFile(Path(path), display)
        return self._made[index]

    def path(self, index: int) -> str:
        return str(self.given[index].path) if index < len(self.given) else self.others[index - len(self.given)][0]


class _Displays(Sequence[str]):
    """The display of each file of ``Files``, made when asked."""

    def __init__(self, files: Files) -> None:
        self.files = files

    def __len__(self) -> int:
        return len(self.files)

    def __getitem__(self, index):
        return self.files.others[index - len(self.files.given)][1] if index >= len(self.files.given) \
            else self.files.given[index].display


@dataclass
class Scan:
    graph: ModuleGraph
    stats: Dict[int, Tuple[int, int, int, int]] = field(default_factory=dict)  # index -> stat when read
    wanted: Dict[str, List[int]] = field(default_factory=dict)  # fact key -> files its byte test passes
    files: Files = field(default_factory=lambda: Files(()))  # the run's files, then the other files of their projects

    def add(self, index: int, entry) -> None:
        """File ``index`` read (``_scanned``'s answer): its imports and byte tests."""
        if entry is None:
            return  # the run reports it (or, for a file it was not given, says nothing)
        self.stats[index], (imports, wants, _) = entry
        self.graph.add_names(index, _unpacked(imports) if isinstance(imports, str) else imports)
        for key, files in self.wanted.items():
            if wants[key]:
                files.append(index)


def scan(files: Sequence["SourceFile"], facts: Sequence[ProjectFact], cache=None, others: Optional[Others] = None) -> Scan:
    """Each file's imports and the facts' byte tests, from its bytes (a notebook: its code cells);
    and when one of ``files`` passes a byte test, those of the ``others`` the facts reach
    (``ProjectFact.reach``)."""
    keys = tuple(f.key for f in facts)
    known = [_scanned(os.path.abspath(file.path), file.display, keys, facts, cache) for file in files]
    every = Files(files)
    if others is not None and any(k is not None and any(k[1][1].values()) for k in known):
        given = {_where(str(f.path)) for f in files}
        every = Files(files, [f for f in others() if os.path.normcase(f[0]) not in given])  # the walk's: absolute, normalised
    graph = ModuleGraph([every.path(i) for i in range(len(every))], given=len(files), project_of=Roots().root)
    found = Scan(graph, wanted={f.key: [] for f in facts}, files=every)
    for index, entry in enumerate(known):
        found.add(index, entry)
    if len(every) > len(files):
        _Reach(found, facts, cache).follow(len(files))
        for wanted in found.wanted.values():
            wanted.sort()
    return found


def _where(path: str) -> str:
    """A path as compared: absolute (the walk's are already), normalised, in the case the system
    compares (Windows)."""
    return os.path.normcase(path if os.path.isabs(path) and os.path.normpath(path) == path else os.path.abspath(path))


class _Reach:
    """Reads the other files of the run's projects that the facts reach, and no other: with
    "linked", each module linked to a file of the run that passes the fact's byte test (it imports
    it or is imported by it, directly or through any file), then each module linked to those that
    pass it, and so on; with "imports", the modules the run's files import; with "project", every
    file. The modules a file imports are found from its imports; those that import it by a search
    of the files not read yet: a file that imports ``pkg/model.py`` spells ``model`` in an import
    statement (or, inside ``pkg/``, says ``from . import``), so only the files whose import lines
    (or cached import names) hold that are read. Without a cache the first search reads every file
    not read yet for its import lines (``_import_lines``), which later searches look at again; with
    one, a file untouched since it was cached is only stat'ed."""

    def __init__(self, found: Scan, facts: Sequence[ProjectFact], cache) -> None:
        self.found, self.facts, self.cache = found, facts, cache
        self.keys = tuple(f.key for f in facts)
        self.unread: Set[int] = set()
        self.searched: Set[int] = set()  # the files whose importers are all read
        self.entries: Dict[int, Any] = {}  # index -> ``_scanned``'s answer, found by a search, not read yet
        self.lines: Dict[int, Optional[bytes]] = {}  # index -> ``_import_lines`` of a file a search read

    def follow(self, given: int) -> None:
        graph = self.found.graph
        self.unread = set(range(given, len(graph.paths)))
        reach = {fact.reach for fact in self.facts}
        if "project" in reach:
            self.read(set(self.unread))
            return
        if "imports" in reach:
            self.read({t for i in range(given) for t in graph.edges[i]})
        for fact in self.facts:
            if fact.reach == "linked":
                self.linked(set(self.found.wanted[fact.key]) & set(range(given)), fact.key)

    def linked(self, start: Set[int], key: str) -> None:
        """Read the modules linked to ``start``, and to those of them that pass the byte test of
        ``key``, and so on: each round follows the imports of the new ones, then searches, a level
        at a time, for what imports them (and the modules they import that pass the test, whose
        importers the next round would search for)."""
        graph, members, todo = self.found.graph, set(start), sorted(start)
        while todo:
            near: Set[int] = set()
            for member in todo:
                stack = [member]
                near.add(member)
                while stack:
                    at = stack.pop()
                    self.read({at})
                    for nxt in graph.edges[at] - near:
                        near.add(nxt)
                        stack.append(nxt)
            level = set(todo) | (near & set(self.found.wanted[key]))
            seen = set(level)
            while level:
                self.search(level)
                level = {i for t in level for i in graph.importers[t]} - seen
                seen |= level
            near |= seen
            wanted = set(self.found.wanted[key])
            todo = sorted((near & wanted) - members)
            members |= near & wanted

    def read(self, indexes: Set[int]) -> None:
        for index in sorted(indexes & self.unread):
            self.unread.discard(index)
            entry = self.entries.pop(index, None)
            if entry is None:
                entry = _scanned(self.found.graph.paths[index], self.found.files.displays[index], self.keys, self.facts,
                                 self.cache)
            self.found.add(index, entry)

    def search(self, targets: Set[int]) -> None:
        """Read the files not read yet that may import one of ``targets``."""
        graph = self.found.graph
        targets = targets - self.searched
        if not targets or not self.unread:
            return
        self.searched |= targets
        names = {graph.name(t) for t in targets}
        spelt = [name.encode() for name in names]
        packages = tuple(os.path.dirname(graph.paths[t]) + os.sep for t in targets if graph.is_package(t))
        found = set()
        words = [f" {name} " for name in names]  # as ``_words`` spells them
        for index in self.unread:
            if self.cache is not None:
                entry = self.entries.get(index, False)
                if entry is False:
                    entry = self.entries[index] = _scanned(graph.paths[index], self.found.files.displays[index],
                                                           self.keys, self.facts, self.cache)
                if entry is not None and _names_any(entry[1][2], words, packages, graph.paths[index]):
                    found.add(index)
                continue
            lines = self._import_lines(index)
            if lines is not None and (any(_spells(lines, name) for name in spelt)
                                      or packages and graph.paths[index].startswith(packages) and _RELATIVE.search(lines)):
                found.add(index)
        self.read(found)

    def _import_lines(self, index: int) -> Optional[bytes]:
        """The lines of a file not read yet that may hold an import statement (``_import_lines``),
        read once for every search; None if it cannot be read."""
        if index not in self.lines:
            try:
                self.lines[index] = _import_lines(_read(self.found.graph.paths[index]))
            except OSError:
                self.lines[index] = None
        return self.lines[index]


def _read(path: str) -> bytes:
    """The bytes of a file, with a system call less than ``Path.read_bytes`` (a search reads
    thousands)."""
    handle = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
    try:
        size = os.fstat(handle).st_size
        data = os.read(handle, size + 1)
        if len(data) > size:  # it grew since
            chunks = [data]
            while chunks[-1]:
                chunks.append(os.read(handle, 1 << 16))
            data = b"".join(chunks)
    finally:
        os.close(handle)
    return data


def _import_lines(data: bytes) -> bytes:
    """Each line of ``data`` that says ``import``, with the rest of a bracket it opens (``from m
    import (a,`` to ``b)``): where any statement ``imported_names`` finds spells its names, in a
    twentieth of the bytes, which every later search for other names reads instead."""
    parts = []
    at = data.find(b"import")
    while at != -1:
        stop = data.find(b"\n", at)
        stop = len(data) if stop == -1 else stop
        opened = data.find(b"(", at, stop)
        if opened != -1 and data.find(b")", opened, stop) == -1:
            closed = data.find(b")", opened)
            stop = len(data) if closed == -1 else closed + 1
        parts.append(data[data.rfind(b"\n", 0, at) + 1:stop])
        at = data.find(b"import", stop)
    return b"\n".join(parts)


_RELATIVE = re.compile(rb"from[ \t]+\.")  # a relative import, maybe of the package itself (``from . import x``)
_WORD = frozenset(b"_0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


def _spells(text: bytes, name: bytes) -> bool:
    """Whether ``text`` holds ``name`` as a word."""
    at = text.find(name)
    while at != -1:
        end = at + len(name)
        if (at == 0 or text[at - 1] not in _WORD) and (end == len(text) or text[end] not in _WORD):
            return True
        at = text.find(name, end)
    return False


def _names_any(words: str, names: Sequence[str], packages: Tuple[str, ...], path: str) -> bool:
    """Whether a file whose import statements name ``words`` (``_words``) may import a module of
    ``names`` (each between spaces), or, inside one of ``packages``, the package itself (``from .
    import x``)."""
    return any(name in words for name in names) or bool(packages) and " . " in words and path.startswith(packages)


def _packed(imports) -> str:
    """``imported_names``' answer as one string (a line per statement), as the cache keeps it: the
    cache of a large project holds every file's, and as tuples and lists its load cost a third of a
    one-file run."""
    return "\n".join(f"{level}|{module}|{','.join(names)}" for level, module, names in imports)  # no | in a name


def _unpacked(packed: str) -> List[Tuple[int, str, List[str]]]:
    found = []
    for line in packed.split("\n") if packed else ():
        level, module, names = line.split("|")
        found.append((int(level), module, names.split(",") if names else []))
    return found


def _words(imports) -> str:
    """The names an import statement spells, each between spaces, and " . " for a relative import
    of a package itself (``from . import x``, ``from .. import y``)."""
    words = {word for _, module, names in imports for word in (*module.split("."), *names) if word}
    if any(level and not module for level, module, _ in imports):
        words.add(".")
    return f" {' '.join(sorted(words))} "


def _scanned(path: str, display: str, keys: Tuple[str, ...], facts: Sequence[ProjectFact], cache):
    """(stat, (imports, {fact key: byte test}, import words)) of the file at ``path`` (absolute,
    normalised), from the cache (imports ``_packed``) or its bytes; None when it cannot be read."""
    try:
        stat = stat_of(os.stat(path))
        known = cache.fact("scan", path, stat) if cache is not None else None
        if known is None or len(known) != 3 or not set(keys) <= set(known[1]):
            read_ns = time.time_ns()
            data = prefilter_input(_read(path), display)
            imports = imported_names(data)
            wants = {f.key: f.wants(data) for f in facts}
            if cache is None:
                return stat, (imports, wants, "")  # the words serve a search of cached files only
            known = (_packed(imports), wants, _words(imports))
            cache.put_fact("scan", path, stat, read_ns, known)
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
