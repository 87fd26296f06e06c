"""The project fact of JM502: the functions of other modules that return GlobalDeviceArrays.

JM502 knows the GDAs of a module from what makes them there, including the module's own helpers
(a return annotation, or every ``return`` building one). A helper in another module makes GDAs
too: ``params = make_params(mesh)`` after ``from model import make_params``, then
``params.mesh_axes``. Once the fix migrates the helper, that value is a jax.Array, and
``.mesh_axes`` on it fails. So the members are the modules that may return GDAs and that a file of
the run imports (absolute imports; relative ones are not followed), in the run or elsewhere in its
project; a member's part is its
module-level functions that return GDAs; the value of each importing module is their qualified
names as it spells them (``model.make_params``), which JM502 reads through ``FileContext.origin``
(analysis/values.py).
"""

from __future__ import annotations

import ast
from functools import partial
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple

from jaxmigrate.analysis.project import ProjectFact
from jaxmigrate.analysis.values import IMPORTED_MAKERS, InstanceFacts
from jaxmigrate.patterns.gda import GDA, GDA_VALUES, names_gda
from jaxmigrate.patterns.pjit_outputs import returns_gdas

if TYPE_CHECKING:
    from jaxmigrate.analysis.context import FileContext
    from jaxmigrate.analysis.module_graph import ModuleGraph
    from jaxmigrate.core.findings import Finding

# what a module that returns GlobalDeviceArrays (or the jax.Arrays that replace them) says
GDA_WORDS = (b"GlobalDeviceArray", b"global_device_array", b"make_array_from_")
Link = Tuple[int, str, Optional[List[str]], int]  # importer, how it spells the module, names (None: all), module


class GdaMakers(ProjectFact):
    key = IMPORTED_MAKERS + GDA
    reach = "imports"

    def wants(self, data: bytes) -> bool:
        return any(w in data for w in GDA_WORDS)

    def members(self, graph: "ModuleGraph", wanted: List[int], codes: Sequence[str]) -> List[int]:
        return sorted({module for importer, *_, module in _links(graph, set(wanted)) if graph.is_given(importer)})

    def part(self, ctx: "FileContext", findings: List["Finding"], codes: Sequence[str]) -> Optional[Tuple[str, ...]]:
        facts = InstanceFacts(ctx, GDA, GDA_VALUES, partial(names_gda, ctx), partial(returns_gdas, ctx))
        functions = (ast.FunctionDef, ast.AsyncFunctionDef)
        names = tuple(sorted(node.name for node in ctx.tree.body
                             if isinstance(node, functions) and facts.returns_instance(node)[0]))
        return names or None

    def combine(self, graph: "ModuleGraph", parts: Dict[int, Any], displays: Sequence[str]) -> Dict[int, Any]:
        helpers = {i: names for i, names in parts.items() if names}
        names: Dict[int, set] = {}
        for index, module, wanted, target in _links(graph, set(helpers)):
            names.setdefault(index, set()).update(f"{module}.{f}" for f in helpers[target] if wanted is None or f in wanted)
        return {i: tuple(sorted(found)) for i, found in names.items() if found}


def _links(graph: "ModuleGraph", modules: set) -> List[Link]:
    """Every absolute import of one of ``modules`` in the run's files."""
    links: List[Link] = []
    for index, imports in enumerate(graph.imports):
        for level, module, imported in imports:
            if level:
                continue
            links += [(index, module, imported or None, t) for t in graph.resolve(index, module) & modules]
            for name in imported:  # `from pkg import model`
                links += [(index, f"{module}.{name}", None, t) for t in graph.resolve(index, f"{module}.{name}") & modules]
    return links


GDA_MAKERS = GdaMakers()
