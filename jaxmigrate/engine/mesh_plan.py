"""The project-level plan of JM701 (pjit → jax.jit) and JM702 (`with mesh:` → `jax.set_mesh`).

The two rewrites hold together only if they change together: `jax.jit` with bare specs sees only
`jax.set_mesh`, and a pjit sees only `with mesh:` (or a set_mesh block it was created in). Each
module plans them on its own (patterns/jit_plan.py); across modules, code that runs under a mesh
entered in one module creates or calls pjit in another that it imports. So before the run:

1. the modules where either rule reports something (the byte prefilter picks candidates), and
   the import links between all the files of the run (analysis/module_graph.py);
2. each candidate linked to another one is fixed in memory with ``--unsafe-fixes``: a module
   where a pjit or mesh use is left after its own fixes (or where one of the two rules is not
   selected) keeps the old API, and so must every module linked to it;
3. those modules' rewrites are held back, each finding saying which site in which file holds it.

The held reasons travel in ``Settings.mesh_holds``; ``Settings.for_file`` gives a file its own,
which the pipeline hands to the rules (``jit_plan.PROJECT_HOLD``).
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import TYPE_CHECKING, Dict, List, Optional, Sequence, Tuple

from jaxmigrate.analysis.module_graph import linked_groups
from jaxmigrate.core.findings import Finding
from jaxmigrate.engine.project_scan import MESH_CODES

if TYPE_CHECKING:
    from jaxmigrate.engine.discovery import SourceFile
    from jaxmigrate.engine.pipeline import FileResult, Settings
    from jaxmigrate.engine.project_scan import Scan

def plan(files: Sequence["SourceFile"], settings: "Settings", found: "Scan", jobs: Optional[int] = None,
         cache=None) -> Tuple[Tuple[str, str], ...]:
    """(real path, why the JM701/JM702 rewrites are held back by another module) for the files
    of the run that need it; () when no module is linked to another. With a ``cache``
    (``engine.cache.Cache``), a file untouched since it was read is not fixed in memory again:
    its verdict is stored there."""
    if not set(MESH_CODES) & set(settings.rule_codes):
        return ()
    alone = not set(MESH_CODES) <= set(settings.rule_codes)  # one of the pair: a module alone may need holding
    graph, candidates, stats = found.graph, found.mesh, found.stats
    linked = [group for group in linked_groups(graph, candidates) if len(group) > 1 or alone]
    if not linked:
        return ()
    keeps = _verdicts(files, [i for group in linked for i in group], stats, settings, jobs, cache)
    holds: List[Tuple[str, str]] = []
    for group in linked:
        where = next((i for i in group if keeps.get(i)), -1)
        kept = keeps.get(where)
        if kept is None:
            continue
        why, itself = kept
        if len(group) == 1 and not itself:
            continue  # a module alone plans its own rewrites (jit_plan.module_blocker)
        for i in group:  # the holder too: its own rewrites would break the pjit its linked modules keep
            text = f"line {why}" if i == where else f"{files[where].display}:{why}, and that module and this one are " \
                                                     "linked by imports"
            holds.append((_key(files[i]), text))
    return tuple(holds)


def _verdicts(files: Sequence["SourceFile"], members: List[int], stats: Dict[int, Tuple[int, int, int]],
              settings: "Settings", jobs: Optional[int], cache) -> Dict[int, Optional[Tuple[str, bool]]]:
    """``_keeps_old_api`` of each member: from the cache for files untouched since, else fixed in memory."""
    from jaxmigrate.engine.cache import settings_digest

    effective = {i: settings.for_file(files[i].path) for i in members}
    keys = {i: settings_digest(effective[i].rule_codes, effective[i].target, files[i].display.endswith(".ipynb"))
            for i in members}
    verdicts: Dict[int, Optional[Tuple[str, bool]]] = {}
    todo = []
    for i in members:
        known = cache.fact("verdict", files[i].path, stats[i], keys[i]) if cache is not None and i in stats else None
        if known is None:
            todo.append(i)
        else:
            verdicts[i] = tuple(known[0]) if known[0] else None  # (why, itself) as stored
    read_ns = time.time_ns()
    for i, result in zip(todo, _fixed_in_memory([files[i] for i in todo], settings, jobs) if todo else ()):
        verdicts[i] = _keeps_old_api(files[i], result, settings)
        if cache is not None and i in stats and not result.error:
            cache.put_fact("verdict", files[i].path, stats[i], read_ns, (verdicts[i] or "",), keys[i])
    return verdicts


def _fixed_in_memory(files: Sequence["SourceFile"], settings: "Settings", jobs: Optional[int]) -> List["FileResult"]:
    """The files fixed with every selected rule and the pair, unsafe fixes on, nothing written."""
    from jaxmigrate.engine.runner import run

    codes = tuple(dict.fromkeys((*settings.rule_codes, *MESH_CODES)))
    variants = tuple((folder, replace(v, rule_codes=tuple(dict.fromkeys((*v.rule_codes, *MESH_CODES))), per_file_ignores=(),
                                      fix=True, write=False, unsafe_fixes=True, mesh_holds=(), gda_makers=(), plan_project=False))
                     for folder, v in settings.variants)
    dry = replace(settings, rule_codes=codes, fix=True, write=False, unsafe_fixes=True, per_file_ignores=(),
                  variants=variants, mesh_holds=(), gda_makers=(), plan_project=False)
    return run(files, dry, jobs)


def _keeps_old_api(file: "SourceFile", result: "FileResult", settings: "Settings") -> Optional[Tuple[str, bool]]:
    """``N keeps its pjit (why)`` for the first pjit or mesh use (on line N) the file keeps after
    its own fixes, or the first use of a rule of the pair that is not selected for it (then True:
    the file's own other uses must be held too); None if it keeps none."""
    selected = set(settings.for_file(file.path).rule_codes)
    if result.error:
        return f"1 could not be fixed ({result.error})", False
    left = [f for f in result.findings if f.code in MESH_CODES]  # where they are on disk
    before = result.on_disk if result.on_disk is not None else result.findings
    unselected = [f for f in before if f.code in MESH_CODES and f.code not in selected]
    first: Optional[Finding] = min([*left, *unselected], key=lambda f: (f.line, f.column), default=None)
    if first is None:
        return None
    what = "pjit" if first.code == "JM701" else "`with mesh:`"
    if first.code not in selected:
        return f"{first.line} keeps its {what} ({first.code} is not selected there)", True
    return f"{first.line} keeps its {what} ({first.code})", False


def _key(file: "SourceFile") -> str:
    return str(file.path.resolve())
