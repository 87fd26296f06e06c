"""Which modules of a tree import which, read from their bytes (no parse, nothing imported).

For the project facts (analysis/project.py), such as the mesh plan: code that runs under a mesh
entered in one module may create or call pjit in another, and the modules reach each other
through imports. A module is named by its whole path (``/src/EasyLM/jax_utils.py`` is
``src.EasyLM.jax_utils``), and an import is resolved to the files whose name ends with the
imported one (``EasyLM.jax_utils``): where a project's package root lies is not known, and a name
taken relative to a folder of the run would lose the packages above it (a run over the files of
one package, ``from EasyLM import jax_utils``, found nothing). A top-level name prefers a module
beside the importer (a script's folder is the first on ``sys.path``); a relative import is
resolved against the importer's package. An import in a string or a comment counts too: a link too
many holds a rewrite back, one too few lets it break code.

The projects of a run are kept apart (``project_of``: engine/project.py's roots, the folder of the
nearest ``pyproject.toml``, ``setup.py`` or ``setup.cfg``, else the top of the package chain): an
import resolves to the modules of the importer's own project when it has any, else to those of a
project nested with it (a ``jaxlib/setup.py`` inside ``jax/``), never to a project beside it. In a
run over a folder of several projects, two of them were joined through a module name both have
(``shared.utils``) or both import (``jax``, whose source was a third project of the run), and a
script of one was held back by a ``with mesh:`` of the other.

``given``: the files of the run, when the graph also holds other files of their project
(engine/project.py), which are read for the plan and never fixed; None when it holds only those.
"""

from __future__ import annotations

import os
import re
from collections import defaultdict
from typing import AbstractSet, Callable, Dict, Iterable, List, Optional, Sequence, Set, Tuple

# an import statement from the start of its line; found where the word "import" occurs (a bytes
# search), as a multi-line regex over every line start costs several times more
_STATEMENT = re.compile(rb"[ \t]*(?:from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]+(\([^)]*\)?|[^#\n;]*)"
                        rb"|import[ \t]+([\w.][\w., \t]*))")
_AS = re.compile(r"\s+as\s+\w+")


def imported_names(data: bytes) -> List[Tuple[int, str, List[str]]]:
    """(level, module, names) of each import statement: ``import a.b`` → (0, "a.b", []),
    ``from ..m import x, y`` → (2, "m", ["x", "y"])."""
    found: List[Tuple[int, str, List[str]]] = []
    pos = data.find(b"import")
    while pos != -1:
        match = _STATEMENT.match(data, data.rfind(b"\n", 0, pos) + 1)
        end = pos + 6
        if match is not None and match.end() >= end:
            end = match.end()
            dots, module, names, plain = match.groups()
            if plain is not None:
                for part in plain.decode("ascii", "replace").split(","):
                    name = _AS.sub("", part).strip()
                    if name:
                        found.append((0, name, []))
            else:
                parts = (_AS.sub("", p).strip(" \t\r\n\\") for p in names.decode("ascii", "replace").strip("()").split(","))
                found.append((len(dots), module.decode("ascii", "replace"), [n for n in parts if n.isidentifier()]))
        pos = data.find(b"import", end)
    return found


class ModuleGraph:
    """The import links between files (indexes into ``paths``), of the files read so far: a file's
    links are known once ``add_names`` has been given its imports (engine/project.py reads the
    files of a project lazily, only those linked to the run's)."""

    def __init__(self, paths: Sequence[str], given: Optional[int] = None,
                 project_of: Optional[Callable[[str], Optional[str]]] = None) -> None:
        """``paths``: the files; ``given``: how many of them, from the first, the run was given
        (the rest are other files of their projects, absolute and normalised as a walk finds
        them), None: all; ``project_of``: the root of the project of a folder (None: the folder is
        in none), None: every file in one project."""
        named = len(paths) if given is None else given
        self.paths = [p if os.path.isabs(p) and os.path.normpath(p) == p else os.path.abspath(p)
                      for p in paths[:named]] + list(paths[named:])
        self.given: Optional[Set[int]] = set(range(given)) if given is not None and given < len(paths) else None
        self._project_of = project_of
        self._projects: Dict[str, Optional[str]] = {}  # folder -> its project's root
        self._project_by_file: Dict[int, Tuple[Optional[str], str]] = {}  # index -> ``_project``'s answer
        self._folders: Dict[int, str] = {}  # index -> its folder, computed when asked
        self._endings: Dict[Tuple[Tuple[str, ...], bool], List[int]] = {}  # ``_ending``'s answers
        self._dotted: Dict[int, Tuple[str, ...]] = {}  # computed when asked
        self._named: Dict[str, List[int]] = defaultdict(list)  # the last part of a module's name -> files
        for index, path in enumerate(self.paths):
            cut = path.rfind(os.sep)
            dot = path.rfind(".")
            stem = path[cut + 1:dot] if dot > cut else path[cut + 1:]
            if stem == "__init__":
                self._named[stem].append(index)  # `import __init__`: a script's sibling only
                stem = path[path.rfind(os.sep, 0, cut) + 1:cut]  # a package is named by its folder
            self._named[stem].append(index)
        none: AbstractSet[int] = frozenset()
        self.edges: List[AbstractSet[int]] = [none] * len(self.paths)  # a file not read links nothing yet
        self.importers: Dict[int, Set[int]] = defaultdict(set)  # the reverse of ``edges``
        self.imports: List[Sequence[Tuple[int, str, List[str]]]] = [()] * len(self.paths)  # ``imported_names`` per file
        self.read: Set[int] = set()  # the files whose imports were added

    def add_names(self, index: int, imports: Iterable[Tuple[int, str, List[str]]]) -> None:
        """Link file ``index`` to the files ``imports`` (``imported_names``' answer) name."""
        imports = self.imports[index] = list(imports)
        self.read.add(index)
        edges = set(self.edges[index])
        for level, module, names in imports:
            if level:
                package = self._package(index, level)
                if package is None:
                    continue
                base = (*package, *module.split(".")) if module else package
                targets = self._exact(base) | {t for n in names for t in self._exact((*base, n))}
            else:
                parts = tuple(module.split("."))
                targets = self._resolve(index, parts)
                for n in names:  # `from pkg import module`
                    targets |= self._resolve(index, (*parts, n))
                for end in range(1, len(parts)):  # `import a.b.c` runs a/__init__ and a/b/__init__
                    targets |= self._resolve(index, parts[:end], packages_only=True)
            edges |= targets
        edges.discard(index)
        for target in edges:
            self.importers[target].add(index)
        self.edges[index] = edges

    def is_given(self, index: int) -> bool:
        """Whether file ``index`` is one of the run's (not only read for the plan)."""
        return self.given is None or index in self.given

    def reachable(self, start: int) -> Set[int]:
        """The files ``start`` imports, directly or through others (``start`` itself not included)."""
        return _closure(self.edges, [start]) - {start}

    def reaching(self, starts: Iterable[int]) -> Set[int]:
        """The files that import one of ``starts``, directly or through others, among those read."""
        starts = list(starts)
        return _closure(self.importers, starts) - set(starts)

    def name(self, index: int) -> str:
        """The last part of the module name of file ``index``: what a file that imports it spells
        (``model`` of ``pkg/model.py``, ``pkg`` of ``pkg/__init__.py``)."""
        return self._dotted_of(index)[-1]

    def is_package(self, index: int) -> bool:
        return os.path.basename(self.paths[index]).startswith("__init__.")

    def resolve(self, index: int, dotted: str) -> Set[int]:
        """The files an absolute import of ``dotted`` in file ``index`` may load."""
        return self._resolve(index, tuple(dotted.split(".")))

    def _dotted_of(self, index: int) -> Tuple[str, ...]:
        """The whole path as a module name, below its drive (``/src/EasyLM/jax_utils.py``:
        ``src.EasyLM.jax_utils``)."""
        dotted = self._dotted.get(index)
        if dotted is None:
            parts = tuple(p for p in os.path.splitdrive(self.paths[index])[1].split(os.sep) if p)
            stem = parts[-1].rsplit(".", 1)[0]
            dotted = self._dotted[index] = parts[:-1] if stem == "__init__" else (*parts[:-1], stem)
        return dotted

    def _package(self, index: int, level: int):
        dotted = self._dotted_of(index)
        package = dotted if self.is_package(index) else dotted[:-1]
        return package[: len(package) - (level - 1)] if level - 1 <= len(package) else None

    def _exact(self, dotted: Tuple[str, ...]) -> Set[int]:
        return {i for i in self._named.get(dotted[-1], ()) if self._dotted_of(i) == dotted} if dotted else set()

    def _resolve(self, index: int, parts: Tuple[str, ...], packages_only: bool = False) -> Set[int]:
        named = self._named.get(parts[-1], ())
        if not packages_only and len(parts) == 1:  # a script's sibling comes first on sys.path
            folder = self._folder(index)
            siblings = [i for i in named if self._folder(i) == folder
                        and os.path.basename(self.paths[i]).rsplit(".", 1)[0] == parts[0]]
            if siblings:
                return {siblings[-1]}
        return self._own(index, self._ending(parts, packages_only))

    def _ending(self, parts: Tuple[str, ...], packages_only: bool) -> List[int]:
        """The files whose name ends with ``parts`` (packages only: their ``__init__``), each
        import asked once (``import jax.numpy`` is in hundreds of files)."""
        found = self._endings.get((parts, packages_only))
        if found is None:
            found = [i for i in self._named.get(parts[-1], ()) if self._dotted_of(i)[-len(parts):] == parts]
            if packages_only:
                found = [i for i in found if self.is_package(i)]
            self._endings[(parts, packages_only)] = found
        return found

    def _own(self, index: int, found: List[int]) -> Set[int]:
        """Of the files an import of file ``index`` may load, those of its own project if there
        are any, else those of a project nested with its own (one's folder inside the other's);
        never those of a project beside it: two projects of one run are not linked through a
        module name both import (or both have). A file in no project counts as one of the files
        in none, placed at its folder."""
        if not found or self._project_of is None:
            return set(found)
        key, place = self._project(index)
        same = {i for i in found if self._project(i)[0] == key}
        return same or {i for i in found if _nested(place, self._project(i)[1])}

    def _project(self, index: int) -> Tuple[Optional[str], str]:
        """The root of the project of file ``index`` (None: it is in none), and where that project
        lies: its root, or for a file in none its folder (a script's folder is first on
        ``sys.path``)."""
        found = self._project_by_file.get(index)
        if found is None:
            folder = self._folder(index)
            if folder not in self._projects:
                self._projects[folder] = self._project_of(folder) if self._project_of is not None else None
            root = self._projects[folder]
            found = self._project_by_file[index] = (root, root or folder)
        return found

    def _folder(self, index: int) -> str:
        folder = self._folders.get(index)
        if folder is None:
            folder = self._folders[index] = os.path.dirname(self.paths[index])
        return folder


def _nested(one: str, other: str) -> bool:
    """Whether one of two folders is the other or inside it."""
    return one == other or one.startswith(other.rstrip(os.sep) + os.sep) or other.startswith(one.rstrip(os.sep) + os.sep)


def _closure(edges, starts: List[int]) -> Set[int]:
    """``starts`` and every file the links ``edges`` (per file) lead to from them."""
    seen, todo = set(starts), list(starts)
    while todo:
        for nxt in edges[todo.pop()]:
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


def linked_groups(graph: ModuleGraph, members: Iterable[int]) -> List[List[int]]:
    """``members`` grouped: two are in one group when one imports the other, directly or through
    any file of the graph (a shared dependency alone links nothing), and groups are joined through
    their common members. Each group sorted, groups in order of their first member."""
    chosen = sorted(set(members))
    parent = {m: m for m in chosen}

    def find(m: int) -> int:
        while parent[m] != m:
            parent[m] = parent[parent[m]]
            m = parent[m]
        return m

    for m in chosen:
        for other in graph.reachable(m) & parent.keys():
            parent[find(other)] = find(m)
    groups: Dict[int, List[int]] = defaultdict(list)
    for m in chosen:
        groups[find(m)].append(m)
    return sorted(groups.values())
