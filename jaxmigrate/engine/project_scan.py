"""One pass over the files of a run for the plans that span modules (engine/mesh_plan.py,
engine/gda_helpers.py): each file's import statements (analysis/module_graph.py) and what the
byte prefilter says it may hold, read once, or taken from the cache for a file untouched since.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple

from jaxmigrate.analysis.module_graph import ModuleGraph, imported_names
from jaxmigrate.engine.cache import stat_of

if TYPE_CHECKING:
    from jaxmigrate.engine.discovery import SourceFile

MESH_CODES = ("JM701", "JM702")
# what a module that returns GlobalDeviceArrays (or the jax.Arrays that replace them) says
GDA_WORDS = (b"GlobalDeviceArray", b"global_device_array", b"make_array_from_")


@dataclass
class Scan:
    graph: ModuleGraph
    stats: Dict[int, Tuple[int, int, int]] = field(default_factory=dict)  # index -> stat when read
    imports: Dict[int, list] = field(default_factory=dict)  # index -> imported_names(...)
    mesh: List[int] = field(default_factory=list)  # files where JM701 or JM702 may report (a superset)
    gda: List[int] = field(default_factory=list)  # files that may return GDAs


def scan(files: Sequence["SourceFile"], cache=None) -> Scan:
    from jaxmigrate.engine.pipeline import prefilter_input

    found = Scan(ModuleGraph([str(f.path) for f in files]))
    for index, file in enumerate(files):
        try:
            found.stats[index] = stat = stat_of(os.stat(file.path))
            facts = cache.fact("imports", file.path, stat) if cache is not None else None
            if facts is None:
                read_ns = time.time_ns()
                data = prefilter_input(file.path.read_bytes(), file.display)  # a notebook: its code cells
                # a superset of what JM701/JM702 want (their prefilters cost more): a candidate
                # that reports nothing costs a fix in memory only if it is linked to another
                mesh = b"pjit" in data or b"mesh" in data or b"Mesh" in data
                facts = (imported_names(data), mesh, any(w in data for w in GDA_WORDS))
                if cache is not None:
                    cache.put_fact("imports", file.path, stat, read_ns, facts)
        except OSError:
            continue  # the run reports it
        found.imports[index] = facts[0]
        found.graph.add_names(index, facts[0])
        if facts[1]:
            found.mesh.append(index)
        if facts[2]:
            found.gda.append(index)
    return found


def for_path(table: Tuple[Tuple[str, Any], ...], path) -> Optional[Any]:
    """The entry of ``path`` (a Path) in a plan's table of (real path, value), or None."""
    return _as_dict(table).get(str(path.resolve())) if table else None


@lru_cache(maxsize=8)
def _as_dict(table: Tuple[Tuple[str, Any], ...]) -> Dict[str, Any]:
    return dict(table)
