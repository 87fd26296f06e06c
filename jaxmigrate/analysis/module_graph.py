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

``given``: the files of the run, when the graph also holds other files of their project
(engine/project.py), which are read for the plan and never fixed; None when it holds only those.
"""

from __future__ import annotations

import os
import re
from collections import defaultdict
from typing import Dict, Iterable, List, Optional, Sequence, Set, Tuple

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
    """The import links between the files of one run (indexes into ``paths``)."""

    def __init__(self, paths: Sequence[str], given: Optional[int] = None) -> None:
        """``paths``: the files; ``given``: how many of them, from the first, the run was given
        (the rest are other files of their projects), None: all."""
        self.paths = [os.path.abspath(p) for p in paths]
        self.given: Optional[Set[int]] = set(range(given)) if given is not None and given < len(paths) else None
        self._dotted: List[Tuple[str, ...]] = []
        self._by_suffix: Dict[Tuple[str, ...], Set[int]] = defaultdict(set)
        self._by_folder: Dict[Tuple[str, str], int] = {}
        for index, path in enumerate(self.paths):
            parts = tuple(p for p in os.path.splitdrive(path)[1].split(os.sep) if p)  # the whole path, below its drive
            stem = parts[-1].rsplit(".", 1)[0]
            dotted = parts[:-1] if stem == "__init__" else (*parts[:-1], stem)
            self._dotted.append(dotted)
            for start in range(len(dotted)):
                self._by_suffix[dotted[start:]].add(index)
            self._by_folder[(os.path.dirname(path), stem)] = index
        self.edges: List[Set[int]] = [set() for _ in self.paths]
        self.imports: List[List[Tuple[int, str, List[str]]]] = [[] for _ in self.paths]  # ``imported_names`` per file

    def add_names(self, index: int, imports: Iterable[Tuple[int, str, List[str]]]) -> None:
        """Link file ``index`` to the files ``imports`` (``imported_names``' answer) name."""
        imports = self.imports[index] = list(imports)
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
            self.edges[index] |= targets - {index}

    def is_given(self, index: int) -> bool:
        """Whether file ``index`` is one of the run's (not only read for the plan)."""
        return self.given is None or index in self.given

    def reachable(self, start: int) -> Set[int]:
        """The files ``start`` imports, directly or through others (``start`` itself not included)."""
        seen, todo = {start}, [start]
        while todo:
            for nxt in self.edges[todo.pop()]:
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return seen - {start}

    def resolve(self, index: int, dotted: str) -> Set[int]:
        """The files an absolute import of ``dotted`` in file ``index`` may load."""
        return self._resolve(index, tuple(dotted.split(".")))

    def _package(self, index: int, level: int):
        dotted = self._dotted[index]
        is_init = os.path.basename(self.paths[index]).startswith("__init__.")
        package = dotted if is_init else dotted[:-1]
        return package[: len(package) - (level - 1)] if level - 1 <= len(package) else None

    def _exact(self, dotted: Tuple[str, ...]) -> Set[int]:
        return {i for i in self._by_suffix.get(dotted, ()) if self._dotted[i] == dotted}

    def _resolve(self, index: int, parts: Tuple[str, ...], packages_only: bool = False) -> Set[int]:
        found = self._by_suffix.get(parts, set())
        if packages_only:
            return {i for i in found if os.path.basename(self.paths[i]).startswith("__init__.")}
        if len(parts) == 1:  # a script's sibling comes first on sys.path
            sibling = self._by_folder.get((os.path.dirname(self.paths[index]), parts[0]))
            if sibling is not None:
                return {sibling}
        return set(found)


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
