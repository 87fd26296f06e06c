"""The project's functions that return GlobalDeviceArrays, for the modules that import them.

JM502 knows the GDAs of a module from what makes them there, including the module's own helpers
(a return annotation, or every ``return`` building one). A helper in another module makes GDAs
too: ``params = make_params(mesh)`` after ``from model import make_params``, then
``params.mesh_axes``. Once the fix migrates the helper, that value is a jax.Array, and
``.mesh_axes`` on it fails; so before the run the helpers of every module that may hold one are
found (a module-level ``def`` that returns GDAs, by its annotation or its returns), and each module
that imports one gets its qualified name as it spells it (``model.make_params``), which JM502
reads through ``FileContext.origin`` (analysis/values.py). Relative imports are not followed.
"""

from __future__ import annotations

import ast
from functools import partial
from typing import TYPE_CHECKING, Dict, Sequence, Tuple

from jaxmigrate.analysis.values import IMPORTED_MAKERS, InstanceFacts

if TYPE_CHECKING:
    from jaxmigrate.engine.discovery import SourceFile
    from jaxmigrate.engine.pipeline import Settings
    from jaxmigrate.engine.project_scan import Scan

RULE = "JM502"


def makers(files: Sequence["SourceFile"], settings: "Settings", found: "Scan",
           cache=None) -> Tuple[Tuple[str, Tuple[str, ...]], ...]:
    """(real path, qualified names of the GDA-returning functions it imports) per file that imports one."""
    if RULE not in settings.rule_codes or not found.gda:
        return ()
    candidates = set(found.gda) & found.stats.keys()
    links = []  # (importer, how it spells the module, names it imports or None for all, the module)
    for index, imports in found.imports.items():
        for level, module, imported in imports:
            if level:
                continue
            links += [(index, module, imported or None, t) for t in found.graph.resolve(index, module) & candidates]
            for name in imported:  # `from pkg import model`
                links += [(index, f"{module}.{name}", None, t)
                          for t in found.graph.resolve(index, f"{module}.{name}") & candidates]
    imported_modules = {t for _, _, _, t in links}  # only these are parsed
    helpers = {i: returning for i in sorted(imported_modules)
               if (returning := _returning(files[i], found.stats[i], settings, cache))}
    names: Dict[int, set] = {}
    for index, module, wanted, target in links:
        if target in helpers:
            names.setdefault(index, set()).update(f"{module}.{f}" for f in helpers[target] if wanted is None or f in wanted)
    return tuple((str(files[i].path.resolve()), tuple(sorted(found))) for i, found in sorted(names.items()) if found)


def _returning(file: "SourceFile", stat: Tuple[int, int, int], settings: "Settings", cache) -> Tuple[str, ...]:
    """The module-level functions of ``file`` that return GDAs (from the cache when untouched)."""
    import time

    from jaxmigrate.analysis.context import FileContext
    from jaxmigrate.engine.pipeline import prefilter_input
    from jaxmigrate.engine.source import decode
    from jaxmigrate.patterns.gda import GDA, GDA_VALUES, names_gda

    known = cache.fact("gda-returns", file.path, stat) if cache is not None else None
    if known is not None:
        return tuple(known)
    read_ns = time.time_ns()
    try:
        text = decode(prefilter_input(file.path.read_bytes(), file.display)).text
        ctx = FileContext.of(text, file.display, settings.for_file(file.path).target)
    except (OSError, SyntaxError, ValueError, LookupError, UnicodeDecodeError, RecursionError, MemoryError):
        return ()  # the run reports it
    facts = InstanceFacts(ctx, GDA, GDA_VALUES, partial(names_gda, ctx))
    names = tuple(sorted(node.name for node in ctx.tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                         and facts.returns_instance(node)[0]))
    if cache is not None:
        cache.put_fact("gda-returns", file.path, stat, read_ns, names)
    return names


def origin(imported: Tuple[str, ...]) -> Dict[str, object]:
    """What the pipeline hands the rules of a file that imports GDA-returning helpers."""
    from jaxmigrate.patterns.gda import GDA

    return {IMPORTED_MAKERS + GDA: imported} if imported else {}
